#pragma once
// DecimalTicks: a decimal price text → integer ticks, in integer arithmetic, giving the same
// result as ingest::parse_price_ticks (from_chars to double, × ticks per unit, llround) for every
// input. The vendor CSV readers parse 40+ prices a row with it (SZSE ten-level snapshots).
//
// - The scale is resolved once (the constructor): a ticks-per-unit that is 10^k (k = 0..9) gets
//   the integer path; any other scale (a layout's price_scale = 20, 0.5, ...) always takes the
//   double path.
// - Integer path: `-?D+(.D+)?` with at most 12 integer digits. Digits up to the tick are exact;
//   the digits past it round half away from zero, like llround. Where those digits are within
//   10^-3 of a half tick (there the double product's rounding error could decide the other way)
//   and for every other spelling (exponents, "nan", ".5", "+1", empty), the double path
//   (parse_price_ticks) decides, so errors and edge cases are the old ones exactly.
// Pure value type; safe from any thread.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ingest/field_parse.h"

namespace ts::ingest {

class DecimalTicks {
 public:
  explicit DecimalTicks(double ticks_per_unit) : ticks_per_unit_(ticks_per_unit) {
    int64_t p = 1;
    for (int k = 0; k <= 9; ++k, p *= 10) {
      if (double(p) == ticks_per_unit) {
        digits_ = k;
        return;
      }
    }
  }

  // As parse_price_ticks(s, ticks_per_unit, out).
  FieldError parse(std::string_view s, Price& out) const {
    return digits_ >= 0 && parse_exact(s, out) ? FieldError::kOk : parse_price_ticks(s, ticks_per_unit_, out);
  }

  double ticks_per_unit() const { return ticks_per_unit_; }

 private:
  // True when `s` was decided in integers (out set); false: let the double path decide.
  bool parse_exact(std::string_view s, Price& out) const {
    const char* p = s.data();
    const char* const end = p + s.size();
    const bool neg = p != end && *p == '-';
    p += neg;
    const char* const int_begin = p;
    uint64_t whole = 0;
    while (p != end && unsigned(*p - '0') < 10) whole = whole * 10 + unsigned(*p++ - '0');
    const ptrdiff_t int_digits = p - int_begin;
    if (int_digits == 0 || int_digits > 12 || int_digits + digits_ > 18) return false;  // no uint64 overflow
    uint64_t ticks = whole;
    int k = 0;
    if (p != end) {
      if (*p != '.' || ++p == end) return false;
      for (; p != end && k < digits_; ++p, ++k) {
        const unsigned d = unsigned(*p - '0');
        if (d >= 10) return false;
        ticks = ticks * 10 + d;
      }
    }
    for (; k < digits_; ++k) ticks *= 10;
    if (p != end) {
      // Digits past the tick ("87.18|0000000000006", float noise): all must be digits; the
      // first decides unless it is 4 or 5 (a remainder of at most 0.4 or at least 0.6 of a tick).
      if (!all_digits(p, end)) return false;
      const unsigned first = unsigned(*p - '0');
      if (first >= 6) {
        ++ticks;
      } else if (first >= 4) {
        uint64_t rest = 0;  // the first 9 digits past the tick, as a fraction of 10^9
        int n = 0;
        for (const char* q = p; q != end && n < 9; ++q, ++n) rest = rest * 10 + unsigned(*q - '0');
        for (; n < 9; ++n) rest *= 10;
        // True remainder in [rest, rest + 1) × 10^-9 of a tick. Far from a half: both paths agree.
        constexpr uint64_t kHalf = 500'000'000, kMargin = 1'000'000;
        if (rest >= kHalf + kMargin) {
          ++ticks;
        } else if (rest + 1 + kMargin > kHalf) {
          return false;
        }
      }
    }
    // |ticks| < 2^40: the double product is within 2^-12 of the exact one, inside the margin.
    if (ticks >= (uint64_t(1) << 40)) return false;
    out = neg ? -Price(ticks) : Price(ticks);
    return true;
  }

  // True when [p, end) are all ASCII digits; eight bytes a step where eight remain, the last
  // eight loaded again (overlapping) rather than a byte loop for the tail.
  static bool all_digits(const char* p, const char* end) {
    if (end - p >= 8) {
      for (; end - p > 8; p += 8) {
        if (!eight_digits(p)) return false;
      }
      return eight_digits(end - 8);
    }
    for (; p != end; ++p) {
      if (unsigned(*p - '0') >= 10) return false;
    }
    return true;
  }

  static bool eight_digits(const char* p) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    // Every byte 0x30..0x39: high nibble 3, and adding 6 keeps it 3 (fast_float's test; a carry
    // out of a byte only happens from a byte that already fails).
    return ((x & 0xF0F0F0F0F0F0F0F0ull) | (((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
           0x3333333333333333ull;
  }

  double ticks_per_unit_;
  int digits_ = -1;  // k where ticks_per_unit = 10^k, else -1
};

}  // namespace ts::ingest
