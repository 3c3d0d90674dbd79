#include "app/time_arg.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "core/civil_time.h"
#include "core/clock.h"

namespace ts {

namespace {

// Reads exactly `n` digits at `i`.
bool digits(const std::string& s, size_t& i, int n, int* out) {
  int v = 0;
  for (int k = 0; k < n; ++k, ++i) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

constexpr const char* kAbsoluteForms = "nanoseconds since the epoch or YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or +HH:MM";
constexpr const char* kBoundForms =
    "nanoseconds since the epoch, [YYYY-MM-DDT]HH:MM[:SS[.fff]] in the symbol's exchange time, or either with Z or "
    "+HH:MM";

Status bad(const std::string& text, const char* why, const char* forms) {
  return Status(StatusCode::kInvalidArgument, "time '" + text + "': " + why + " (expected " + forms + ")");
}

bool is_digit_at(const std::string& s, size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

// Reads "HH:MM[:SS[.fffffffff]]" at `i` into ns since midnight; nullptr on success, else why.
const char* time_of_day(const std::string& text, size_t& i, int64_t* ns) {
  int h, mi, sec = 0;
  if (!digits(text, i, 2, &h) || i >= text.size() || text[i++] != ':' || !digits(text, i, 2, &mi)) {
    return "bad time of day";
  }
  int64_t frac_ns = 0;
  if (i < text.size() && text[i] == ':') {
    ++i;
    if (!digits(text, i, 2, &sec)) return "bad seconds";
    if (i < text.size() && text[i] == '.') {
      ++i;
      int64_t scale = 100'000'000;
      const size_t start = i;
      for (; is_digit_at(text, i); ++i) {
        if (scale == 0) return "more than 9 fraction digits";
        frac_ns += (text[i] - '0') * scale;
        scale /= 10;
      }
      if (i == start) return "bad fraction";
    }
  }
  if (h > 23 || mi > 59 || sec > 60) return "out of range";
  *ns = (int64_t(h) * 3600 + mi * 60 + sec) * kNsPerSec + frac_ns;
  return nullptr;
}

// Reads an optional zone ("Z", "+08:00", "-0400") at `i`; nullptr on success, else why.
const char* zone(const std::string& text, size_t& i, std::optional<int32_t>* offset_s) {
  if (i >= text.size()) return nullptr;
  if (text[i] == 'Z' || text[i] == 'z') {
    ++i;
    *offset_s = 0;
    return nullptr;
  }
  if (text[i] != '+' && text[i] != '-') return "trailing characters";
  const int sign = text[i++] == '-' ? -1 : 1;
  int oh, om;
  if (!digits(text, i, 2, &oh)) return "bad zone";
  if (i < text.size() && text[i] == ':') ++i;
  if (!digits(text, i, 2, &om) || oh > 23 || om > 59) return "bad zone";
  *offset_s = sign * (oh * 3600 + om * 60);
  return nullptr;
}

Result<TimeBound> parse_bound(const std::string& text, const char* forms) {
  TimeBound b;
  b.text = text;
  if (text.empty()) return bad(text, "empty", forms);
  bool all_digits = true;
  for (size_t i = text[0] == '-' ? 1 : 0; i < text.size(); ++i) all_digits &= is_digit_at(text, i);
  if (all_digits && text != "-") {
    if (text.size() > 20) return bad(text, "too many digits", forms);
    int64_t ns = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ns);
    // 19 digits can pass INT64_MAX: std::stoll threw std::out_of_range past every caller.
    if (ec != std::errc() || end != text.data() + text.size()) return bad(text, "out of range", forms);
    b.absolute_ns = ns;
    return b;
  }
  size_t i = 0;
  // A date is 4 digits and '-'; a time of day is 2 digits and ':'.
  if (is_digit_at(text, 0) && is_digit_at(text, 1) && text.size() > 2 && text[2] == ':') {
    // no date
  } else {
    int y, mo, d;
    if (!digits(text, i, 4, &y) || i >= text.size() || text[i++] != '-' || !digits(text, i, 2, &mo) ||
        i >= text.size() || text[i++] != '-' || !digits(text, i, 2, &d)) {
      return bad(text, "no date", forms);
    }
    // Nanoseconds since the epoch reach 1677-09-21 .. 2262-04-11: a year outside 1678 .. 2261
    // overflowed int64_t (found by config_fuzz, [[silences.declared]] starts = "4986-...").
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1678 || y > 2261) return bad(text, "out of range", forms);
    if (i >= text.size() || (text[i] != 'T' && text[i] != 't' && text[i] != ' ')) {
      return bad(text, "no time of day", forms);
    }
    ++i;
    b.local_day = days_from_civil(y, unsigned(mo), unsigned(d));
  }
  if (const char* why = time_of_day(text, i, &b.time_of_day_ns)) return bad(text, why, forms);
  if (const char* why = zone(text, i, &b.utc_offset_s)) return bad(text, why, forms);
  if (i != text.size()) return bad(text, "trailing characters", forms);
  if (b.local_day && b.utc_offset_s) {
    b.absolute_ns = (*b.local_day * 86400 - *b.utc_offset_s) * kNsPerSec + b.time_of_day_ns;
  }
  return b;
}

}  // namespace

Result<int64_t> parse_exchange_time(const std::string& text) {
  auto b = parse_bound(text, kAbsoluteForms);
  if (!b.is_ok()) return b.status();
  if (!b.value().local_day && !b.value().absolute_ns) return bad(text, "no date", kAbsoluteForms);
  if (!b.value().absolute_ns) return bad(text, "no zone", kAbsoluteForms);
  return *b.value().absolute_ns;
}

Result<TimeBound> parse_time_bound(const std::string& text) { return parse_bound(text, kBoundForms); }

int64_t time_bound_at(const TimeBound& b, int64_t first_event_ns, int32_t offset_at_first_s) {
  const int64_t day = b.local_day ? *b.local_day : floor_div(floor_div(first_event_ns, kNsPerSec) + offset_at_first_s, 86400);
  return (day * 86400 - offset_at_first_s) * kNsPerSec + b.time_of_day_ns;
}

namespace {

std::string format_with_offset(int64_t unix_ns, int32_t utc_offset_s, bool utc) {
  const int64_t local_ns = unix_ns + int64_t(utc_offset_s) * kNsPerSec;
  int64_t secs = floor_div(local_ns, kNsPerSec), ns = local_ns - secs * kNsPerSec;
  const int64_t days = floor_div(secs, 86400), rem = secs - days * 86400;
  const CivilDate c = civil_from_days(days);
  char buf[80];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", int(c.year), c.month, c.day, int(rem / 3600),
                        int(rem % 3600 / 60), int(rem % 60));
  if (ns) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09lld", (long long)ns);
    std::string f = frac;
    while (f.back() == '0') f.pop_back();
    n += std::snprintf(buf + n, sizeof buf - size_t(n), "%s", f.c_str());
  }
  if (utc) {
    std::snprintf(buf + n, sizeof buf - size_t(n), "Z");
  } else {
    const int32_t a = std::abs(utc_offset_s);
    std::snprintf(buf + n, sizeof buf - size_t(n), "%c%02d:%02d", utc_offset_s < 0 ? '-' : '+', a / 3600, a % 3600 / 60);
  }
  return buf;
}

}  // namespace

std::string format_utc_ns(int64_t unix_ns) { return format_with_offset(unix_ns, 0, true); }
std::string format_local_ns(int64_t unix_ns, int32_t utc_offset_s) {
  return format_with_offset(unix_ns, utc_offset_s, false);
}

}  // namespace ts
