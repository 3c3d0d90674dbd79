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
    uint64_t rest = 0;  // up to 9 digits past the tick, as a fraction of 10^9
    int rest_digits = 0;
    bool rest_more = false;  // nonzero digits beyond those 9
    if (p != end) {
      if (*p != '.' || ++p == end) return false;
      for (; p != end; ++p) {
        const unsigned d = unsigned(*p - '0');
        if (d >= 10) return false;
        if (k < digits_) {
          ticks = ticks * 10 + d;
          ++k;
        } else if (rest_digits < 9) {
          rest = rest * 10 + d;
          ++rest_digits;
        } else {
          rest_more |= d != 0;
        }
      }
    }
    for (; k < digits_; ++k) ticks *= 10;
    if (rest_digits > 0 || rest_more) {
      for (int i = rest_digits; i < 9; ++i) rest *= 10;
      // True remainder in [rest, rest + 1) × 10^-9 of a tick. Far from a half: both paths agree.
      constexpr uint64_t kHalf = 500'000'000, kMargin = 1'000'000;
      if (rest >= kHalf + kMargin) {
        ++ticks;
      } else if (rest + 1 + kMargin > kHalf) {
        return false;
      }
    }
    // |ticks| < 2^40: the double product is within 2^-12 of the exact one, inside the margin.
    if (ticks >= (uint64_t(1) << 40)) return false;
    out = neg ? -Price(ticks) : Price(ticks);
    return true;
  }

  double ticks_per_unit_;
  int digits_ = -1;  // k where ticks_per_unit = 10^k, else -1
};

}  // namespace ts::ingest
