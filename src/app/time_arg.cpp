#include "app/time_arg.h"

#include <cctype>
#include <cstdio>

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

Status bad(const std::string& text, const char* why) {
  return Status(StatusCode::kInvalidArgument,
                "time '" + text + "': " + why +
                    " (expected nanoseconds since the epoch or YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or +HH:MM)");
}

}  // namespace

Result<int64_t> parse_exchange_time(const std::string& text) {
  if (text.empty()) return bad(text, "empty");
  bool all_digits = true;
  for (size_t i = text[0] == '-' ? 1 : 0; i < text.size(); ++i) all_digits &= std::isdigit(static_cast<unsigned char>(text[i])) != 0;
  if (all_digits && text != "-") {
    if (text.size() > 19) return bad(text, "too many digits");
    return int64_t(std::stoll(text));
  }
  size_t i = 0;
  int y, mo, d, h, mi, sec = 0;
  if (!digits(text, i, 4, &y) || i >= text.size() || text[i++] != '-' || !digits(text, i, 2, &mo) ||
      i >= text.size() || text[i++] != '-' || !digits(text, i, 2, &d)) {
    return bad(text, "no date");
  }
  if (i >= text.size() || (text[i] != 'T' && text[i] != ' ')) return bad(text, "no time of day");
  ++i;
  if (!digits(text, i, 2, &h) || i >= text.size() || text[i++] != ':' || !digits(text, i, 2, &mi)) {
    return bad(text, "bad time of day");
  }
  int64_t frac_ns = 0;
  if (i < text.size() && text[i] == ':') {
    ++i;
    if (!digits(text, i, 2, &sec)) return bad(text, "bad seconds");
    if (i < text.size() && text[i] == '.') {
      ++i;
      int64_t scale = 100'000'000;
      const size_t start = i;
      for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        if (scale == 0) return bad(text, "more than 9 fraction digits");
        frac_ns += (text[i] - '0') * scale;
        scale /= 10;
      }
      if (i == start) return bad(text, "bad fraction");
    }
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return bad(text, "out of range");
  int offset_min = 0;
  if (i >= text.size()) return bad(text, "no zone");
  if (text[i] == 'Z' || text[i] == 'z') {
    ++i;
  } else if (text[i] == '+' || text[i] == '-') {
    const int sign = text[i++] == '-' ? -1 : 1;
    int oh, om;
    if (!digits(text, i, 2, &oh)) return bad(text, "bad zone");
    if (i < text.size() && text[i] == ':') ++i;
    if (!digits(text, i, 2, &om) || oh > 23 || om > 59) return bad(text, "bad zone");
    offset_min = sign * (oh * 60 + om);
  } else {
    return bad(text, "no zone");
  }
  if (i != text.size()) return bad(text, "trailing characters");
  const int64_t secs = days_from_civil(y, unsigned(mo), unsigned(d)) * 86400 + h * 3600 + mi * 60 + sec -
                       int64_t(offset_min) * 60;
  return secs * kNsPerSec + frac_ns;
}

std::string format_utc_ns(int64_t unix_ns) {
  int64_t secs = unix_ns / kNsPerSec, ns = unix_ns % kNsPerSec;
  if (ns < 0) ns += kNsPerSec, --secs;
  int64_t days = secs / 86400, rem = secs % 86400;
  if (rem < 0) rem += 86400, --days;
  const CivilDate c = civil_from_days(days);
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", int(c.year), c.month, c.day, int(rem / 3600),
                        int(rem % 3600 / 60), int(rem % 60));
  if (ns) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09lld", (long long)ns);
    std::string f = frac;
    while (f.back() == '0') f.pop_back();
    n += std::snprintf(buf + n, sizeof buf - size_t(n), "%s", f.c_str());
  }
  std::snprintf(buf + n, sizeof buf - size_t(n), "Z");
  return buf;
}

}  // namespace ts
