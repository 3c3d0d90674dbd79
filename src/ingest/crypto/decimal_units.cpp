#include "ingest/crypto/decimal_units.h"

#include <cmath>

namespace ts::crypto {

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr uint64_t kPow10[20] = {1ull,
                                 10ull,
                                 100ull,
                                 1000ull,
                                 10000ull,
                                 100000ull,
                                 1000000ull,
                                 10000000ull,
                                 100000000ull,
                                 1000000000ull,
                                 10000000000ull,
                                 100000000000ull,
                                 1000000000000ull,
                                 10000000000000ull,
                                 100000000000000ull,
                                 1000000000000000ull,
                                 10000000000000000ull,
                                 100000000000000000ull,
                                 1000000000000000000ull,
                                 10000000000000000000ull};

// Digits of `text` as one integer (point removed) and the count of digits after the point.
bool parse_digits(std::string_view text, u128& digits, int& scale) {
  digits = 0;
  scale = -1;
  int n = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      digits = digits * 10 + unsigned(c - '0');
      if (digits >> 100) return false;  // far beyond int64 whatever the scale
      if (scale >= 0) ++scale;
      ++n;
    } else if (c == '.' && scale < 0 && n > 0) {
      scale = 0;
    } else {
      return false;
    }
  }
  if (n == 0 || scale == 0) return false;  // "" or "1."
  if (scale < 0) scale = 0;
  return true;
}

}  // namespace

int written_scale(std::string_view text) {
  u128 d;
  int scale;
  return parse_digits(text, d, scale) ? scale : -1;
}

bool parse_units(std::string_view text, const Decimal& unit, int64_t& out) {
  u128 m;
  int f;
  if (!parse_digits(text, m, f) || unit.mantissa <= 0) return false;
  // value = m × 10^-f; unit = um × 10^-us; count = m × 10^(us - f) / um.
  const int us = unit.scale;
  if (f > us) {
    const int d = f - us;
    if (d >= 20) {
      if (m != 0) return false;
    } else {
      if (m % kPow10[d] != 0) return false;
      m /= kPow10[d];
    }
  } else if (f < us) {
    m *= kPow10[us - f];
  }
  const auto um = static_cast<u128>(unit.mantissa);
  if (m % um != 0) return false;
  m /= um;
  if (m > static_cast<u128>(INT64_MAX)) return false;
  out = static_cast<int64_t>(m);
  return true;
}

bool round_units(double value, const Decimal& unit, int64_t& out) {
  if (!std::isfinite(value) || value < 0 || unit.mantissa <= 0) return false;
  const double count = value * double(kPow10[unit.scale]) / double(unit.mantissa);
  if (count >= 9.2e18) return false;
  out = std::llround(count);
  return true;
}

bool append_checksum_digits(int64_t count, const Decimal& unit, int written, char* out, int& len) {
  // value × 10^written = count × um × 10^(written - us)
  u128 v = static_cast<u128>(count) * static_cast<u128>(unit.mantissa);
  const int d = written - unit.scale;
  if (d > 0) {
    if (d >= 20) return false;
    v *= kPow10[d];
  } else if (d < 0) {
    if (-d >= 20 || v % kPow10[-d] != 0) return false;
    v /= kPow10[-d];
  }
  char tmp[48];
  int n = 0;
  do {
    tmp[n++] = char('0' + int(v % 10));
    v /= 10;
  } while (v != 0 && n < 48);
  if (v != 0) return false;
  // A zero value writes nothing after its leading zeros are stripped: Kraken's "0.00000000" is "".
  if (n == 1 && tmp[0] == '0') return true;
  while (n > 0) out[len++] = tmp[--n];
  return true;
}

}  // namespace ts::crypto
