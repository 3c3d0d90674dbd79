#include "notify/time_zone.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/clock.h"

namespace ts::notify {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Inverse of days_from_civil (H. Hinnant's algorithm): the proleptic Gregorian year of a day.
int year_of_day(int64_t days) {
  days += 719468;
  const int64_t era = floor_div(days, 146097);
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return int(yoe + era * 400 + (m <= 2));
}

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

class Bytes {
 public:
  explicit Bytes(std::string_view b) : b_(b) {}
  bool has(size_t n) const { return pos_ + n <= b_.size(); }
  uint8_t u8() { return uint8_t(b_[pos_++]); }
  int64_t be(int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v = (v << 8) | uint8_t(b_[pos_++]);
    if (width == 4) return int64_t(int32_t(uint32_t(v)));
    return int64_t(v);
  }
  void skip(size_t n) { pos_ += n; }
  size_t pos() const { return pos_; }
  std::string_view rest() const { return b_.substr(pos_); }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

struct TzifHeader {
  char version = 0;
  uint32_t isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0;
  size_t data_size(int time_bytes) const {
    return size_t(timecnt) * size_t(time_bytes) + timecnt + size_t(typecnt) * 6 + charcnt +
           size_t(leapcnt) * size_t(time_bytes + 4) + isstdcnt + isutcnt;
  }
};

bool read_header(Bytes& in, TzifHeader* h) {
  if (!in.has(44)) return false;
  const char magic[4] = {char(in.u8()), char(in.u8()), char(in.u8()), char(in.u8())};
  if (std::string_view(magic, 4) != "TZif") return false;
  h->version = char(in.u8());
  in.skip(15);
  h->isutcnt = uint32_t(in.be(4));
  h->isstdcnt = uint32_t(in.be(4));
  h->leapcnt = uint32_t(in.be(4));
  h->timecnt = uint32_t(in.be(4));
  h->typecnt = uint32_t(in.be(4));
  h->charcnt = uint32_t(in.be(4));
  return h->typecnt >= 1 && h->typecnt <= 256 && h->timecnt <= 100000 && h->charcnt <= 65536 && h->leapcnt <= 10000;
}

bool valid_zone_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name.front() == '/' || name.find("..") != std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+';
  });
}

}  // namespace

Result<PosixTzRule> PosixTzRule::parse(std::string_view text) { return RuleParser(text).parse(); }

int32_t PosixTzRule::utc_offset_s(int64_t unix_s) const {
  if (!has_dst) return std_offset_s;
  const int year = year_of_day(floor_div(unix_s + std_offset_s, 86400));
  // The start is given in standard local time, the end in DST local time.
  const int64_t on = rule_day(start, year) * 86400 + start.time_s - std_offset_s;
  const int64_t off = rule_day(end, year) * 86400 + end.time_s - dst_offset_s;
  // Southern hemisphere: DST spans the new year (on after off).
  const bool dst = on < off ? (unix_s >= on && unix_s < off) : !(unix_s >= off && unix_s < on);
  return dst ? dst_offset_s : std_offset_s;
}

Result<std::shared_ptr<const TimeZone>> TimeZone::from_tzif(const std::string& name, std::string_view bytes) {
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument, "time zone '" + name + "': not a valid TZif file (" + what + ")");
  };
  Bytes in(bytes);
  TzifHeader h;
  if (!read_header(in, &h)) return bad("header");
  int time_bytes = 4;
  if (h.version >= '2') {
    // Skip the 32-bit block; the 64-bit one after the second header covers every instant.
    if (!in.has(h.data_size(4))) return bad("truncated v1 data");
    in.skip(h.data_size(4));
    if (!read_header(in, &h)) return bad("second header");
    time_bytes = 8;
  }
  if (!in.has(h.data_size(time_bytes))) return bad("truncated data");
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = name;
  tz->transitions_.resize(h.timecnt);
  for (auto& t : tz->transitions_) t = in.be(time_bytes);
  std::vector<uint8_t> idx(h.timecnt);
  for (auto& i : idx) i = in.u8();
  std::vector<int32_t> type_offsets(h.typecnt);
  for (auto& o : type_offsets) {
    o = int32_t(in.be(4));
    in.skip(2);  // isdst, abbreviation index
  }
  in.skip(size_t(h.charcnt) + size_t(h.leapcnt) * size_t(time_bytes + 4) + h.isstdcnt + h.isutcnt);
  if (!std::is_sorted(tz->transitions_.begin(), tz->transitions_.end())) return bad("transitions out of order");
  tz->offsets_.reserve(h.timecnt);
  for (uint8_t i : idx) {
    if (i >= h.typecnt) return bad("time type index out of range");
    tz->offsets_.push_back(type_offsets[i]);
  }
  tz->initial_offset_s_ = type_offsets[0];
  if (time_bytes == 8) {
    // Footer: "\n<POSIX TZ rule>\n" (empty: no rule; the last offset holds).
    std::string_view rest = in.rest();
    if (rest.size() >= 2 && rest.front() == '\n') {
      const size_t nl = rest.find('\n', 1);
      if (nl == std::string_view::npos) return bad("footer");
      const std::string_view text = rest.substr(1, nl - 1);
      if (!text.empty()) {
        auto rule = PosixTzRule::parse(text);
        if (!rule.is_ok()) return bad(rule.status().message());
        tz->rule_ = rule.value();
      }
    }
  }
  return std::shared_ptr<const TimeZone>(std::move(tz));
}

Result<std::shared_ptr<const TimeZone>> TimeZone::load(const std::string& name) {
  if (!valid_zone_name(name)) {
    return Status(StatusCode::kInvalidArgument,
                  "time zone '" + name + "': expected an IANA zone name such as America/New_York or Asia/Shanghai");
  }
  const char* env = std::getenv("TZDIR");
  const std::string dir = env && *env ? env : "/usr/share/zoneinfo";
  const std::string path = dir + "/" + name;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return Status(StatusCode::kNotFound, "unknown time zone '" + name + "' (no " + path +
                                             "; zone names are IANA's, e.g. America/New_York, Asia/Shanghai)");
  }
  std::ostringstream buf;
  buf << f.rdbuf();
  const std::string bytes = buf.str();
  if (bytes.size() > (1u << 20)) return Status(StatusCode::kInvalidArgument, "time zone '" + name + "': file too large");
  return from_tzif(name, bytes);
}

int32_t TimeZone::utc_offset_s(int64_t unix_s) const {
  if (transitions_.empty() || unix_s < transitions_.front()) {
    return transitions_.empty() && rule_ ? rule_->utc_offset_s(unix_s) : initial_offset_s_;
  }
  if (unix_s >= transitions_.back() && rule_) return rule_->utc_offset_s(unix_s);
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), unix_s);
  return offsets_[size_t(it - transitions_.begin()) - 1];
}

}  // namespace ts::notify
