#include "ingest/crypto/decimal_units.h"

#include <cmath>
#include <cstring>

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

// "00" "01" ... "99": two digits a step when writing a number.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

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
  // A scan where the digits cannot overflow parse_digits' u128 (it rejects ~31+ digits): the
  // integer digits, then '.' and at least one fraction digit, nothing else.
  if (text.size() <= 30) {
    const char* p = text.data();
    const char* const end = p + text.size();
    const char* q = p;
    while (q != end && unsigned(*q - '0') < 10) ++q;
    if (q == p) return -1;
    if (q == end) return 0;
    if (*q != '.' || ++q == end) return -1;
    const char* const frac = q;
    while (q != end && unsigned(*q - '0') < 10) ++q;
    return q == end ? int(end - frac) : -1;
  }
  u128 d;
  int scale;
  return parse_digits(text, d, scale) ? scale : -1;
}

namespace {

// PERF NOTE: the common case (at most 19 digits, result in 64 bits) in uint64 arithmetic; the
// u128 path below makes % and / libgcc calls (__udivmodti4). Before: parse_digits ~7 % and
// append_checksum_digits ~60 % of the Kraken decode (perf, ingest_decode_bench). The digits past
// the unit's scale are checked to be zeros rather than divided off: parse_units was ~40 % of the
// Binance and Bitstamp decodes (callgrind), most of it `m % 10^d` and `m / 10^d` per level.
// 1 = decided (out set), 0 = not a whole count, -1 = let the u128 path decide.
int parse_units_u64(std::string_view text, const Decimal& unit, int64_t& out) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const int us = unit.scale;
  if (text.size() > 20 || us < 0 || us >= 20) return -1;  // possibly more than 19 digits
  uint64_t m = 0;
  const char* q = p;
  for (; q != end && unsigned(*q - '0') < 10; ++q) m = m * 10 + unsigned(*q - '0');
  if (q == p) return 0;  // "", ".5", "-1", ...
  int f = 0;  // fraction digits taken into m (at most us)
  if (q != end) {
    // At most 20 characters: with the point, at most 19 digits, so m cannot overflow.
    if (*q != '.' || ++q == end) return 0;  // not a decimal, or "1."
    for (; q != end && f < us; ++q, ++f) {
      const unsigned d = unsigned(*q - '0');
      if (d >= 10) return 0;
      m = m * 10 + d;
    }
    unsigned rest = 0;  // digits past the unit's scale: a whole count only if all are 0
    for (; q != end; ++q) {
      const unsigned d = unsigned(*q - '0');
      if (d >= 10) return 0;
      rest |= d;
    }
    if (rest != 0) return 0;
  } else if (q - p > 19) {
    return -1;  // 20 integer digits
  }
  if (unit.mantissa <= 0) return 0;
  if (f < us && __builtin_mul_overflow(m, kPow10[us - f], &m)) return -1;
  const auto um = static_cast<uint64_t>(unit.mantissa);
  if (um != 1) {
    if (m % um != 0) return 0;
    m /= um;
  }
  if (m > static_cast<uint64_t>(INT64_MAX)) return 0;
  out = static_cast<int64_t>(m);
  return 1;
}

}  // namespace

bool parse_units(std::string_view text, const Decimal& unit, int64_t& out) {
  if (const int r = parse_units_u64(text, unit, out); r >= 0) return r == 1;
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
  const int d = written - unit.scale;
  // PERF NOTE: in uint64 where the value fits (every Kraken level): u128 % 10 and / 10 are libgcc
  // calls, 40 values × ~10 digits for each checksum.
  uint64_t w = 0;
  bool fits = count >= 0 && unit.mantissa > 0 &&
              !__builtin_mul_overflow(uint64_t(count), uint64_t(unit.mantissa), &w);
  if (fits && d > 0) fits = d < 20 && !__builtin_mul_overflow(w, kPow10[d], &w);
  if (fits) {
    if (d < 0) {
      if (-d >= 20 || w % kPow10[-d] != 0) return false;
      w /= kPow10[-d];
    }
    if (w == 0) return true;  // Kraken's "0.00000000" is ""
    int digits = 1;
    while (digits < 20 && w >= kPow10[digits]) ++digits;
    char* const end = out + len + digits;  // written backwards, two digits a step
    char* q = end;
    for (; w >= 100; w /= 100) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * (w % 100), 2);
    }
    if (w >= 10) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * w, 2);
    } else {
      *--q = char('0' + w);
    }
    len += digits;
    return true;
  }
  u128 v = static_cast<u128>(count) * static_cast<u128>(unit.mantissa);
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
