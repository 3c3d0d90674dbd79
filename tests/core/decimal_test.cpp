#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/decimal.h"

namespace ts {
namespace {

TEST(Decimal, ParseFormatRoundTrips) {
  for (const char* text : {"2.76", "0.00001", "100", "-0.001", "1845.76", "0.10", "0",
                           "9223372036854775807", "0.000000000000000001", "60000.01"}) {
    auto d = Decimal::parse(text);
    ASSERT_TRUE(d) << text << ": " << d.status().to_string();
    EXPECT_EQ(d.value().to_string(), text);
  }
  auto d = Decimal::parse("2.760").value();
  EXPECT_EQ(d.mantissa, 2760);
  EXPECT_EQ(d.scale, 3);
  EXPECT_EQ(d.trimmed().to_string(), "2.76");
  EXPECT_EQ(d.trimmed(3).to_string(), "2.760");
  EXPECT_EQ(Decimal::parse("1.000").value().trimmed().to_string(), "1");
}

TEST(Decimal, RejectsAnythingButPlainDecimals) {
  for (const char* text : {"", ".", "-", "1.", ".5", "+1", "1e-5", " 1", "1 ", "1.2.3", "0x10",
                           "nan", "0.0000000000000000001", "9223372036854775808"}) {
    auto d = Decimal::parse(text);
    EXPECT_FALSE(d) << "\"" << text << "\" parsed as " << (d ? d.value().to_string() : "");
    if (!d) {
      EXPECT_EQ(d.status().code(), StatusCode::kParseError);
    }
  }
}

TEST(Decimal, EqualityIsByValueAcrossScales) {
  EXPECT_EQ((Decimal{10, 1}), (Decimal{1, 0}));
  EXPECT_EQ(Decimal::parse("0.010").value(), Decimal::parse("0.01").value());
  EXPECT_FALSE(Decimal::parse("0.011").value() == Decimal::parse("0.01").value());
}

TEST(Decimal, UnitsPrintInTheInstrumentsPrecision) {
  // 276 × 0.01 in double prints as 2.7600000000000002 at full precision; ticks never go
  // through double here.
  EXPECT_EQ(format_units(276, {1, 2}), "2.76");
  EXPECT_EQ(format_units(184500, {1, 2}), "1845.00");
  EXPECT_EQ(format_units(-5, {1, 2}), "-0.05");
  EXPECT_EQ(format_units(5, {1, 5}), "0.00005");
  EXPECT_EQ(format_units(123, {5, 3}), "0.615");  // tick 0.005
  EXPECT_EQ(format_units(0, {1, 2}), "0.00");
  EXPECT_EQ(format_units(std::numeric_limits<int64_t>::max(), {1, 0}), "9223372036854775807");
}

TEST(Decimal, NotionalIsExact) {
  const Decimal cent{1, 2}, share{1, 0}, btc_step{1, 5};
  // BTCUSDT: 60000.01 USDT × 0.00001 BTC = 0.6000001 USDT, exactly.
  EXPECT_EQ(format_notional(6000001, cent, 1, btc_step).value(), "0.6000001");
  // 0.01 BTC at 60000.00: trailing zeros trimmed down to the tick's 2 digits.
  EXPECT_EQ(format_notional(6000000, cent, 1000, btc_step).value(), "600.00");
  // A-share: 2.76 × 100 shares.
  EXPECT_EQ(format_notional(276, cent, 100, share).value(), "276.00");
  // 1845.76 × 300 shares = 553728.00.
  EXPECT_EQ(format_notional(184576, cent, 300, share).value(), "553728.00");
  // A tick written with a trailing zero keeps its digits: 0.10 × 3 = 0.30.
  EXPECT_EQ(format_notional(3, {10, 2}, 1, share).value(), "0.30");
  // A sell-side negative size stays exact.
  EXPECT_EQ(format_notional(6000001, cent, -3, btc_step).value(), "-1.8000003");
  // Large but real: 1e9 ticks × 1e12 increments.
  EXPECT_EQ(format_notional(1'000'000'000, cent, 1'000'000'000'000, btc_step).value(),
            "100000000000000.00");
  // Beyond 127 bits is an error, not a wrapped number.
  const int64_t big = std::numeric_limits<int64_t>::max();
  auto overflow = format_notional(big, {7, 0}, big, {7, 0});
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.status().code(), StatusCode::kOutOfRange);
}

TEST(Decimal, ToUnitsNeedsWholeMultiples) {
  EXPECT_EQ(to_units(Decimal::parse("2.76").value(), {1, 2}).value(), 276);
  EXPECT_EQ(to_units(Decimal::parse("0.5").value(), {1, 5}).value(), 50000);
  EXPECT_EQ(to_units(Decimal::parse("100").value(), {1, 0}).value(), 100);
  EXPECT_EQ(to_units(Decimal::parse("0.615").value(), {5, 3}).value(), 123);
  EXPECT_FALSE(to_units(Decimal::parse("2.765").value(), {1, 2}));
  EXPECT_FALSE(to_units(Decimal::parse("0.617").value(), {5, 3}));
  EXPECT_FALSE(to_units(Decimal::parse("1").value(), {0, 2}));
  EXPECT_EQ(to_units(Decimal::parse("9223372036854775807").value(), {1, 1}).status().code(),
            StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace ts
