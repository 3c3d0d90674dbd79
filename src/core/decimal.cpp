#include "core/decimal.h"

#include <algorithm>
#include <limits>

namespace ts {

namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr int64_t kPow10[19] = {1,
                                10,
                                100,
                                1000,
                                10000,
                                100000,
                                1000000,
                                10000000,
                                100000000,
                                1000000000,
                                10000000000,
                                100000000000,
                                1000000000000,
                                10000000000000,
                                100000000000000,
                                1000000000000000,
                                10000000000000000,
                                100000000000000000,
                                1000000000000000000};

// Writes |m| in decimal, then places the point `scale` digits from the right.
std::string format_scaled(Int128 m, int32_t scale) {
  const bool negative = m < 0;
  UInt128 u = negative ? -static_cast<UInt128>(m)
                                 : static_cast<UInt128>(m);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + int(u % 10)));
    u /= 10;
  } while (u != 0);
  while (static_cast<int32_t>(digits.size()) <= scale) digits.push_back('0');  // a leading 0
  std::reverse(digits.begin(), digits.end());
  if (scale > 0) digits.insert(digits.end() - scale, '.');
  if (negative) digits.insert(digits.begin(), '-');
  return digits;
}

Status parse_error(std::string_view text, const char* why) {
  return {StatusCode::kParseError,
          "decimal \"" + std::string(text) + "\": " + why};
}

}  // namespace

Result<Decimal> Decimal::parse(std::string_view text) {
  size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) i = 1;
  UInt128 m = 0;
  int32_t scale = 0;
  bool seen_point = false;
  size_t int_digits = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (seen_point) return parse_error(text, "two decimal points");
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') return parse_error(text, "not a plain decimal number");
    if (seen_point) {
      if (++scale > kMaxScale) return parse_error(text, "more than 18 fractional digits");
    } else {
      ++int_digits;
    }
    m = m * 10 + unsigned(c - '0');
    if (m > static_cast<UInt128>(std::numeric_limits<int64_t>::max())) {
      return parse_error(text, "out of range");
    }
  }
  if (int_digits == 0) return parse_error(text, "no digits before the point");
  if (seen_point && scale == 0) return parse_error(text, "no digits after the point");
  const auto mantissa = static_cast<int64_t>(m);
  return Decimal{negative ? -mantissa : mantissa, scale};
}

std::string Decimal::to_string() const { return format_scaled(mantissa, scale); }

Decimal Decimal::trimmed(int32_t min_scale) const {
  Decimal d = *this;
  while (d.scale > min_scale && d.mantissa % 10 == 0) {
    d.mantissa /= 10;
    --d.scale;
  }
  return d;
}

double Decimal::to_double() const { return double(mantissa) / double(kPow10[scale]); }

bool operator==(const Decimal& a, const Decimal& b) {
  const int32_t s = std::max(a.scale, b.scale);
  return Int128(a.mantissa) * kPow10[s - a.scale] == Int128(b.mantissa) * kPow10[s - b.scale];
}

std::string format_units(int64_t count, const Decimal& unit) {
  return format_scaled(Int128(count) * unit.mantissa, unit.scale);
}

Result<std::string> format_notional(int64_t price_ticks, const Decimal& tick_size,
                                    int64_t size_incs, const Decimal& size_increment) {
  // Each int64 × int64 product fits 127 bits; their product may not, so it is checked. The units
  // are reduced to their shortest form first so that 0.010 costs no extra digit.
  const Decimal tick = tick_size.trimmed();
  const Decimal inc = size_increment.trimmed();
  const Int128 p = Int128(price_ticks) * tick.mantissa;
  const Int128 n = Int128(size_incs) * inc.mantissa;
  Int128 m = 0;
  if (__builtin_mul_overflow(p, n, &m)) {
    return Status{StatusCode::kOutOfRange, "notional of " + std::to_string(price_ticks) +
                                               " ticks x " + std::to_string(size_incs) +
                                               " increments exceeds 128 bits"};
  }
  int32_t scale = tick.scale + inc.scale;
  const int32_t keep = tick_size.scale;
  while (scale > keep && m % 10 == 0) {
    m /= 10;
    --scale;
  }
  while (scale < keep) {  // e.g. tick 0.10 trimmed to 0.1 but written with 2 digits
    m *= 10;
    ++scale;
  }
  return format_scaled(m, scale);  // PERF NOTE: outputs only, not the hot path
}

Result<int64_t> to_units(const Decimal& value, const Decimal& unit) {
  if (unit.mantissa <= 0) return Status{StatusCode::kInvalidArgument, "unit must be positive"};
  const int32_t s = std::max(value.scale, unit.scale);
  const Int128 v = Int128(value.mantissa) * kPow10[s - value.scale];
  const Int128 u = Int128(unit.mantissa) * kPow10[s - unit.scale];
  if (v % u != 0) {
    return Status{StatusCode::kInvalidArgument,
                  value.to_string() + " is not a multiple of " + unit.to_string()};
  }
  const Int128 q = v / u;
  if (q > std::numeric_limits<int64_t>::max() || q < std::numeric_limits<int64_t>::min()) {
    return Status{StatusCode::kOutOfRange, value.to_string() + " in units of " +
                                               unit.to_string() + " exceeds int64"};
  }
  return static_cast<int64_t>(q);
}

}  // namespace ts
