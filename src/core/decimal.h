#pragma once
// Decimal: an exact decimal number, mantissa × 10^-scale (int64 mantissa, scale 0..18), for tick
// sizes, size increments, prices, sizes and notionals. Parsing and formatting never go through
// double, so "2.76" stays "2.76" (never "2.7600000000000002") and 0.00001 BTC is exact.
// Everything here is a pure function of its arguments; safe from any thread.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ts {

struct Decimal {
  static constexpr int kMaxScale = 18;
  int64_t mantissa = 0;  // value = mantissa / 10^scale
  int32_t scale = 0;     // digits after the point, 0..kMaxScale

  // "2.76", "-0.00001", "100", "1e-5" is rejected (plain decimal notation only), as are "", ".",
  // "1.", ".5", "+1", spaces, more than 18 fractional digits or a value beyond int64.
  // The scale is the number of digits written after the point ("2.760" has scale 3).
  static Result<Decimal> parse(std::string_view text);
  // Exactly `scale` fractional digits: {276, 2} → "2.76", {5, 0} → "5", {-1, 3} → "-0.001".
  std::string to_string() const;
  // The same value with trailing fractional zeros removed, but keeping at least `min_scale`
  // digits: {27600, 4}.trimmed(2) → {276, 2}.
  Decimal trimmed(int32_t min_scale = 0) const;
  double to_double() const;  // for legacy double fields only (RefData::tick_size)
  bool is_positive() const { return mantissa > 0; }
  // Exact value comparison across scales ({10, 1} == {1, 0}).
  friend bool operator==(const Decimal& a, const Decimal& b);
};

// An integer count of units (ticks, size increments) written in units of `unit`:
// format_units(276, {1, 2}) → "2.76"; format_units(5, {1, 5}) → "0.00005". The result has
// exactly unit.scale fractional digits: the instrument's own precision.
std::string format_units(int64_t count, const Decimal& unit);

// Exact notional of `price_ticks` × `size_incs`: ticks × tick_size × increments × size_increment,
// computed in 128-bit integers, written with trailing zeros trimmed down to tick_size.scale digits (never fewer):
// 6000001 ticks of 0.01 × 1 increment of 0.00001 → "0.6000001"; 276 ticks × 100 shares →
// "276.00". This is the one notional formatting every output uses. kOutOfRange when the exact
// product exceeds 127 bits (|value| × 10^scale ≥ 1.7e38: no real trade).
Result<std::string> format_notional(int64_t price_ticks, const Decimal& tick_size,
                                    int64_t size_incs, const Decimal& size_increment);

// `value` as an integer count of `unit` (a price in ticks, a size in increments); an error when
// value is not a whole multiple of unit ("2.765" at tick 0.01) or the count exceeds int64.
Result<int64_t> to_units(const Decimal& value, const Decimal& unit);

}  // namespace ts
