// The fast parse helpers against the reference functions of field_parse.h:
// - DecimalTicks vs parse_price_ticks (from_chars → double → llround): the same ticks and the
//   same error for every input, on edge cases and on a seeded random sample of prices as vendors
//   write them (float noise, half ticks, long fractions, negatives, garbage);
// - split_fields_wide vs split_fields: the same fields and count on seeded random lines of every
//   length around the 32-byte blocks, with empty fields, and with `max` below the count;
// - parse_i64 / parse_u64 vs std::from_chars on seeded random integers.
#include "ingest/csv_split.h"
#include "ingest/decimal_ticks.h"
#include "ingest/field_parse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <random>
#include <string>

namespace ts::ingest {
namespace {

void expect_same(const DecimalTicks& fast, std::string_view s) {
  Price want = -777, got = -777;
  const FieldError we = parse_price_ticks(s, fast.ticks_per_unit(), want);
  const FieldError ge = fast.parse(s, got);
  ASSERT_EQ(int(ge), int(we)) << "\"" << s << "\" at " << fast.ticks_per_unit();
  if (we == FieldError::kOk) {
    ASSERT_EQ(got, want) << "\"" << s << "\" at " << fast.ticks_per_unit();
  }
}

TEST(DecimalTicks, EdgeCasesMatchTheDoublePath) {
  for (double scale : {1.0, 100.0, 1000.0, 1e4, 1e9, 20.0, 0.5}) {
    const DecimalTicks fast(scale);
    for (const char* s :
         {"0", "-0", "8.179999999999999", "1801.00999999999999", "1.005", "1.015", "2.675", "0.125", "-0.125",
          "12.345", "12.3450000000001", "12.3449999999999", "99999999999.99", "999999999999.999", "1234567890123",
          "1e3", "1.5E2", "", "-", ".", "1.", ".5", "+1", "nan", "-inf", "Infinity", "1.2.3", "12a", " 1", "0x10",
          "00012.50", "-12.005", "0.0000000000000000001", "5.5", "4.4999999999", "4.5000000001"}) {
      expect_same(fast, s);
    }
  }
}

TEST(DecimalTicks, SeededRandomPricesMatchTheDoublePath) {
  std::mt19937_64 rng(20261202);
  const char digits[] = "0123456789";
  int checked = 0;
  for (double scale : {1.0, 10.0, 100.0, 1000.0, 1e4, 1e6, 1e8}) {
    const DecimalTicks fast(scale);
    for (int i = 0; i < 40000; ++i) {
      std::string s;
      if (rng() % 8 == 0) s += '-';
      const int int_digits = 1 + int(rng() % 13);
      for (int d = 0; d < int_digits; ++d) s += digits[rng() % 10];
      const int frac = int(rng() % 20);
      if (frac > 0) {
        s += '.';
        const int kind = int(rng() % 4);
        for (int d = 0; d < frac; ++d) {
          // Runs of 9s, 0s and a 5 followed by 0s/9s: the float-noise and half-tick spellings.
          char c = digits[rng() % 10];
          if (kind == 1 && d > 1) c = '9';
          if (kind == 2 && d > 1) c = d == 2 ? '5' : '0';
          if (kind == 3 && d > 2) c = d == 3 ? '4' : '9';
          s += c;
        }
      }
      if (rng() % 200 == 0) s[rng() % s.size()] = "x.e-+ "[rng() % 6];
      expect_same(fast, s);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 7 * 40000);
}

TEST(SplitFieldsWide, SameFieldsAsSplitFields) {
  std::mt19937_64 rng(7);
  const char alphabet[] = ",,,,0123456789.-ab";
  std::string_view want[128], got[128];
  for (int i = 0; i < 20000; ++i) {
    std::string line(rng() % 200, 'x');
    for (char& c : line) c = alphabet[rng() % (sizeof alphabet - 1)];
    const size_t max = rng() % 4 == 0 ? rng() % 8 : 128;
    const size_t nw = split_fields(line, want, max);
    const size_t ng = split_fields_wide(line, got, max);
    ASSERT_EQ(ng, nw) << line;
    for (size_t k = 0; k < std::min(nw, max); ++k) ASSERT_EQ(got[k], want[k]) << line << " field " << k;
  }
  std::string_view one[1];
  EXPECT_EQ(split_fields_wide("", one, 1), 1u);
  EXPECT_EQ(one[0], "");
  EXPECT_EQ(split_fields_wide(std::string(40, ','), got, 128), 41u);
}

// parse_i64 / parse_u64 (a digits-only fast path before std::from_chars) against from_chars
// itself, as they were: same value and same error on seeded random integers of every length
// around the 18-digit fast path, with signs, leading zeros, spaces and garbage.
template <typename T>
FieldError reference_integer(std::string_view s, T& out) {
  if (s.empty()) return FieldError::kEmpty;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc() && p == s.data() + s.size()) return FieldError::kOk;
  return looks_non_finite(s) ? FieldError::kNotANumber : FieldError::kMalformed;
}

TEST(ParseIntegers, SameAsFromChars) {
  std::mt19937_64 rng(1202);
  const char alphabet[] = "01234567890123456789-+ x.naNinf";
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    const size_t len = rng() % 24;
    for (size_t k = 0; k < len; ++k) {
      s += rng() % 8 == 0 ? alphabet[rng() % (sizeof alphabet - 1)] : char('0' + rng() % 10);
    }
    int64_t si = -5, si_ref = -5;
    uint64_t ui = 5, ui_ref = 5;
    const FieldError es = parse_i64(s, si), es_ref = reference_integer(s, si_ref);
    const FieldError eu = parse_u64(s, ui), eu_ref = reference_integer(s, ui_ref);
    ASSERT_EQ(int(es), int(es_ref)) << s;
    ASSERT_EQ(int(eu), int(eu_ref)) << s;
    if (es == FieldError::kOk) {
      ASSERT_EQ(si, si_ref) << s;
    }
    if (eu == FieldError::kOk) {
      ASSERT_EQ(ui, ui_ref) << s;
    }
  }
}

}  // namespace
}  // namespace ts::ingest
