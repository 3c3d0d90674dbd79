#pragma once
// Field-level parsing shared by the file sources: splitting a CSV line (no quoting: none of the
// supported formats quote fields) and parsing numbers with std::from_chars (no locale, no
// allocation). Every parser returns a FieldError so a source can map it to the right InputError.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/event.h"
#include "core/input_errors.h"

namespace ts::ingest {

enum class FieldError : uint8_t {
  kOk = 0,
  kEmpty,        // required number is an empty field
  kNotANumber,   // "nan", "inf", "-inf", "infinity" in any case, or a non-finite value
  kMalformed,    // anything else that is not the expected number
};

// The InputError a field error is reported as (kEmpty and kNotANumber → kNotANumber).
inline InputError input_error_for(FieldError e) {
  return e == FieldError::kMalformed ? InputError::kMalformedLine : InputError::kNotANumber;
}

// Splits `line` at commas into out[0..max). Returns the number of fields in the line (which
// may exceed `max`; only the first `max` are stored). An empty line has one empty field.
inline size_t split_fields(std::string_view line, std::string_view* out, size_t max) {
  size_t n = 0;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    if (n < max) out[n] = line.substr(start, end - start);
    ++n;
    if (comma == std::string_view::npos) return n;
    start = comma + 1;
  }
}

// True for the spellings of NaN and infinity strtod accepts ("nan", "-inf", "Infinity", ...).
inline bool looks_non_finite(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  if (s.size() < 3) return false;
  auto lower = [](char c) { return static_cast<char>(c | 0x20); };
  const char a = lower(s[0]), b = lower(s[1]), c = lower(s[2]);
  return (a == 'n' && b == 'a' && c == 'n') || (a == 'i' && b == 'n' && c == 'f');
}

// 1..18 ASCII digits (no sign) → value; false for anything else. Every such value fits int64.
// PERF NOTE: the sizes and counts of the vendor CSVs are short digit strings; this loop is about
// half of std::from_chars' cost on them (its per-digit overflow checks), with the same results.
inline bool parse_plain_digits(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  uint64_t v = 0;
  for (const char c : s) {
    const unsigned d = unsigned(c - '0');
    if (d >= 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

inline FieldError parse_i64(std::string_view s, int64_t& out) {
  if (uint64_t v = 0; parse_plain_digits(s, v)) {
    out = int64_t(v);
    return FieldError::kOk;
  }
  if (s.empty()) return FieldError::kEmpty;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc() && p == s.data() + s.size()) return FieldError::kOk;
  return looks_non_finite(s) ? FieldError::kNotANumber : FieldError::kMalformed;
}

inline FieldError parse_u64(std::string_view s, uint64_t& out) {
  if (parse_plain_digits(s, out)) return FieldError::kOk;
  if (s.empty()) return FieldError::kEmpty;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc() && p == s.data() + s.size()) return FieldError::kOk;
  return looks_non_finite(s) ? FieldError::kNotANumber : FieldError::kMalformed;
}

// Finite doubles only; accepts fixed and scientific notation ("2.997269403E9").
inline FieldError parse_f64(std::string_view s, double& out) {
  if (s.empty()) return FieldError::kEmpty;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size()) {
    return looks_non_finite(s) ? FieldError::kNotANumber : FieldError::kMalformed;
  }
  return std::isfinite(out) ? FieldError::kOk : FieldError::kNotANumber;
}

// A decimal price in currency units → integer ticks of `units_per_tick` (0.01 → ×100), rounded
// half away from zero. Absorbs float noise such as "1801.00999999999999" (→ 180101).
inline FieldError parse_price_ticks(std::string_view s, double ticks_per_unit, Price& out) {
  double v = 0;
  const FieldError e = parse_f64(s, v);
  if (e != FieldError::kOk) return e;
  const double t = v * ticks_per_unit;
  if (!(std::fabs(t) < 9.0e18)) return FieldError::kMalformed;
  out = static_cast<Price>(std::llround(t));
  return FieldError::kOk;
}

// "HH:MM:SS" or "HH:MM:SS.f…" (up to 9 fraction digits) → ns after midnight.
inline bool parse_hms_ns(std::string_view s, int64_t& out) {
  if (s.size() < 8 || s[2] != ':' || s[5] != ':') return false;
  auto two = [&](size_t i, int& v) {
    if (s[i] < '0' || s[i] > '9' || s[i + 1] < '0' || s[i + 1] > '9') return false;
    v = (s[i] - '0') * 10 + (s[i + 1] - '0');
    return true;
  };
  int h = 0, m = 0, sec = 0;
  if (!two(0, h) || !two(3, m) || !two(6, sec) || h > 24 || m > 59 || sec > 60) return false;
  int64_t frac = 0;
  if (s.size() > 8) {
    if (s[8] != '.' || s.size() == 9 || s.size() > 18) return false;
    int digits = 0;
    for (size_t i = 9; i < s.size(); ++i, ++digits) {
      if (s[i] < '0' || s[i] > '9') return false;
      frac = frac * 10 + (s[i] - '0');
    }
    for (; digits < 9; ++digits) frac *= 10;
  }
  out = ((int64_t(h) * 60 + m) * 60 + sec) * 1'000'000'000 + frac;
  return true;
}

// "34200.015105074" (seconds, optional fraction of up to 9 digits; more digits are truncated)
// → ns. Returns a FieldError so "nan" is told apart from garbage.
inline FieldError parse_seconds_ns(std::string_view s, int64_t& out) {
  if (s.empty()) return FieldError::kEmpty;
  const size_t dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  int64_t secs = 0;
  if (whole.empty() || whole.front() == '-' || whole.front() == '+') {
    return looks_non_finite(s) ? FieldError::kNotANumber : FieldError::kMalformed;
  }
  const FieldError e = parse_i64(whole, secs);
  if (e != FieldError::kOk) return looks_non_finite(s) ? FieldError::kNotANumber : FieldError::kMalformed;
  // Keeps secs × 10^9 + fraction within int64 (9.2e18 ns): 400e9 s, the bound here before,
  // overflowed (found by lobster_fuzz with UBSan).
  if (secs > 9'000'000'000) return FieldError::kMalformed;
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    const std::string_view f = s.substr(dot + 1);
    if (f.empty()) return FieldError::kMalformed;
    int digits = 0;
    for (char c : f) {
      if (c < '0' || c > '9') return FieldError::kMalformed;
      if (digits < 9) {
        frac = frac * 10 + (c - '0');
        ++digits;
      }
    }
    for (; digits < 9; ++digits) frac *= 10;
  }
  out = secs * 1'000'000'000 + frac;
  return FieldError::kOk;
}

// The file name part of a path, for error reports ("GOOG_..._message_10.csv.gz").
inline std::string_view base_name(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace ts::ingest
