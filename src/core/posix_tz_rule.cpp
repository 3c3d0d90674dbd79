#include "core/posix_tz_rule.h"

#include <cctype>
#include <string>

#include "core/civil_time.h"
#include "core/clock.h"

namespace ts {

namespace {

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// The local day (days since 1970-01-01) a POSIX rule date falls on in `year`.
int64_t rule_day(const PosixTzRule::When& w, int year) {
  const int64_t jan1 = days_from_civil(year, 1, 1);
  if (w.kind == 'J') return jan1 + (w.day - 1) + ((is_leap(year) && w.day >= 60) ? 1 : 0);
  if (w.kind == 'n') return jan1 + w.day;
  const int64_t first = days_from_civil(year, unsigned(w.month), 1);
  const int64_t next = w.month == 12 ? days_from_civil(year + 1, 1, 1) : days_from_civil(year, unsigned(w.month + 1), 1);
  const int first_wd = int(((first + 4) % 7 + 7) % 7);  // 1970-01-01 was a Thursday (Sunday = 0)
  int64_t d = first + (w.weekday - first_wd + 7) % 7 + int64_t(w.week - 1) * 7;
  while (d >= next) d -= 7;  // week 5: the last such weekday of the month
  return d;
}

class RuleParser {
 public:
  explicit RuleParser(std::string_view s) : s_(s) {}

  Result<PosixTzRule> parse() {
    PosixTzRule r;
    if (!name()) return error("a zone abbreviation (3+ letters or <...>)");
    int32_t off = 0;
    if (!offset(&off, 24)) return error("a UTC offset after the abbreviation");
    r.std_offset_s = -off;  // POSIX counts west of Greenwich as positive
    if (at_end()) return r;
    if (!name()) return error("a DST abbreviation");
    r.has_dst = true;
    r.dst_offset_s = r.std_offset_s + 3600;
    if (!at_end() && peek() != ',') {
      if (!offset(&off, 24)) return error("a DST offset");
      r.dst_offset_s = -off;
    }
    if (at_end()) {  // POSIX leaves the default rule to the implementation; glibc's is the US one
      r.start = {'M', 3, 2, 0, 0, 7200};
      r.end = {'M', 11, 1, 0, 0, 7200};
      return r;
    }
    if (!eat(',') || !when(&r.start) || !eat(',') || !when(&r.end) || !at_end()) {
      return error("',start[/time],end[/time]' rules (Mm.w.d, Jn or n)");
    }
    return r;
  }

 private:
  Status error(const std::string& what) const {
    return Status(StatusCode::kInvalidArgument,
                  "POSIX TZ rule '" + std::string(s_) + "': expected " + what + " at position " + std::to_string(i_));
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  bool name() {
    if (eat('<')) {
      const size_t close = s_.find('>', i_);
      if (close == std::string_view::npos || close == i_) return false;
      i_ = close + 1;
      return true;
    }
    const size_t start = i_;
    while (!at_end() && std::isalpha(static_cast<unsigned char>(peek()))) ++i_;
    return i_ - start >= 3;
  }
  bool number(int* out, int max) {
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return false;
    int v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (s_[i_++] - '0');
      if (v > max) return false;
    }
    *out = v;
    return true;
  }
  // [+-]hh[:mm[:ss]] in seconds; hours up to `max_hours`.
  bool offset(int32_t* out, int max_hours) {
    int sign = 1;
    if (eat('-')) sign = -1;
    else (void)eat('+');
    int h = 0, m = 0, sec = 0;
    if (!number(&h, max_hours)) return false;
    if (eat(':') && !number(&m, 59)) return false;
    if (eat(':') && !number(&sec, 59)) return false;
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
  bool when(PosixTzRule::When* w) {
    if (eat('M')) {
      w->kind = 'M';
      if (!number(&w->month, 12) || w->month < 1 || !eat('.') || !number(&w->week, 5) || w->week < 1 || !eat('.') ||
          !number(&w->weekday, 6)) {
        return false;
      }
    } else if (eat('J')) {
      w->kind = 'J';
      if (!number(&w->day, 365) || w->day < 1) return false;
    } else {
      w->kind = 'n';
      if (!number(&w->day, 365)) return false;
    }
    w->time_s = 7200;
    if (eat('/')) return offset(&w->time_s, 167);  // RFC 8536 allows −167..167 hours
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

Result<PosixTzRule> PosixTzRule::parse(std::string_view text) { return RuleParser(text).parse(); }

int32_t PosixTzRule::utc_offset_s(int64_t unix_s) const {
  if (!has_dst) return std_offset_s;
  const int year = civil_from_days(floor_div(unix_s + std_offset_s, kSecondsPerDay)).year;
  // The start is given in standard local time, the end in DST local time.
  const int64_t on = rule_day(start, year) * 86400 + start.time_s - std_offset_s;
  const int64_t off = rule_day(end, year) * 86400 + end.time_s - dst_offset_s;
  // Southern hemisphere: DST spans the new year (on after off).
  const bool dst = on < off ? (unix_s >= on && unix_s < off) : !(unix_s >= off && unix_s < on);
  return dst ? dst_offset_s : std_offset_s;
}

}  // namespace ts
