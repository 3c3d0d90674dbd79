// Market structure the rules must not misread (issue 22): a book caught between the fills of one
// taker order, the typical minute flow of a symbol that trades in few minutes, and one large
// order on a thin market read as a volume burst as well as a large print.
#include <gtest/gtest.h>

#include "detect/rule_test_util.h"

namespace ts::testing {
namespace {

class RuleStructure : public RuleFixture {};

int count_type(const std::vector<Alert>& v, AlertType t) {
  int n = 0;
  for (const auto& a : v) n += a.type == t;
  return n;
}

// An order-flow feed (SSE L3 2023-07-11, 600536 at 10:46:45.030) prints a taker's fill, then
// publishes the taker's remainder: between the two the book shows the level taken and not yet
// the remainder, 5 ticks for no time at all. Judged at the print, that was a spread alert; the
// spread is judged on the events that leave the book at rest. A spread still wide at the next
// order event is news as before.
// These judge one event: no spread hold (its persistence has its own test).
RuleOptions spread_without_hold() {
  RuleOptions o;
  o.hold_ms[int(AlertType::kSpreadWidening)] = 0;
  return o;
}

TEST_F(RuleStructure, SpreadBetweenFillsOfOneTakerIsNotAWidening) {
  RuleEngine engine(symbols, spread_without_hold());
  row[kSpreadTicks] = 1;
  for (int i = 0; i < 600; ++i) {
    ASSERT_TRUE(eval(engine, order_add(i, 1000, 100, Side::kBuy), book(1000, 500, 1001, 500, 1000)).empty());
  }
  // The fill: the ask at 10.01 is gone, the next ask is 10.10; then the taker's remainder rests.
  row[kSpreadTicks] = 10;
  const auto at_fill = eval(engine, trade(600.0, 1001, 500, Side::kBuy), book(1000, 500, 1010, 500, 1001));
  EXPECT_EQ(count_type(at_fill, AlertType::kSpreadWidening), 0) << "a book mid-match is not a spread";
  row[kSpreadTicks] = 1;
  EXPECT_TRUE(eval(engine, order_add(600.0, 1001, 200, Side::kBuy), book(1001, 200, 1002, 500, 1001)).empty());
  // A sweep that really leaves the book wide: still wide at the next order event.
  row[kSpreadTicks] = 10;
  (void)eval(engine, trade(700.0, 1001, 500, Side::kBuy), book(1000, 500, 1010, 500, 1001));
  const auto after = eval(engine, order_add(700.2, 995, 100, Side::kBuy), book(1000, 500, 1010, 500, 1001));
  EXPECT_EQ(count_type(after, AlertType::kSpreadWidening), 1);
}

// A pair that prints once every ten minutes while its book changes every second (Bitstamp
// BTC/USD at night). The typical minute flow is that of the minutes that trade: an ordinary
// print stays ordinary after hours of it; one 2x the usual print is large. Before, every quiet
// minute counted as a zero, clipped to typical / 3, and the typical minute decayed towards 0
// until every print was "large".
TEST_F(RuleStructure, SparseTradingDoesNotShrinkTheTypicalMinute) {
  RuleEngine engine(symbols, RuleOptions{});
  int ordinary_large = 0;
  for (int s = 0; s < 3 * 3600; ++s) {
    const BookTop b = book(1000, 500, 1001, 500, 1000);
    if (s % 600 == 30) {
      ordinary_large += count_type(eval(engine, trade(s, 1001, 1'000, Side::kBuy), b), AlertType::kLargeBuy);
    } else {
      (void)eval(engine, order_add(s, 990, 100, Side::kBuy), b);
    }
  }
  EXPECT_EQ(ordinary_large, 0) << "ordinary prints of a sparse symbol judged large";
  const auto big = eval(engine, trade(3 * 3600 + 30, 1001, 2'000, Side::kBuy), book(1000, 500, 1001, 500, 1000));
  EXPECT_EQ(count_type(big, AlertType::kLargeBuy), 1);
}

// The lunch break is no time a spread held for anyone: a stock quoted 4 ticks wide all morning
// whose first book at 13:00 is 2 ticks still has a typical spread of ~4 ticks. Before, the first
// sample after the break weighed the 90 minutes (alpha ~1) and the typical became that sample.
TEST_F(RuleStructure, LunchBreakDoesNotWeighTheFirstSampleAfterIt) {
  RuleEngine engine(symbols, spread_without_hold());
  row[kSpreadTicks] = 4;
  for (int i = 0; i < 1200; ++i) (void)eval(engine, snapshot(i), book(1000, 500, 1004, 500, 1000));
  row[kSpreadTicks] = 2;
  (void)eval(engine, snapshot(3 * 3600), book(1000, 500, 1002, 500, 1000));  // 13:00
  row[kSpreadTicks] = 40;
  const auto wide = eval(engine, snapshot(3 * 3600 + 1), book(1000, 500, 1040, 500, 1000));
  ASSERT_EQ(count_type(wide, AlertType::kSpreadWidening), 1);
  EXPECT_GT(value(wide[0], "typical_spread_ticks")->value, 3.5) << "the 13:00 sample replaced the typical spread";
}

// Bitstamp BTC/USD at 01:25:56 UTC (2015-05-01): one 13.2 BTC market buy ($3,135, 2x a typical
// minute) raised large_buy, and 32 ms later the 60 s volume it made (12.9x the expected minute,
// from one or two prints) raised volume_burst: one order, two alerts. Within 60 s of a print that
// large_buy / large_sell judged large, volume_burst's volume path is that order; a burst of many
// prints still fires by its count, and after 60 s the volume path is back.
TEST_F(RuleStructure, OneLargePrintIsNotAlsoAVolumeBurst) {
  RuleEngine engine(symbols, RuleOptions::absolute());  // large_trade: 1,000,000 notional
  const BookTop b = book(1000, 1000, 1001, 1000, 1000);
  set_volume_multiple(12.9f);
  const auto at_print = eval(engine, trade(10, 1001, 200'000, Side::kBuy), b);  // 2,002,000
  EXPECT_EQ(count_type(at_print, AlertType::kLargeBuy), 1);
  EXPECT_EQ(count_type(at_print, AlertType::kVolumeBurst), 0) << "the print's own volume is not a burst";
  EXPECT_EQ(count_type(eval(engine, trade(10.03, 1001, 300, Side::kBuy), b), AlertType::kVolumeBurst), 0)
      << "nor the taker's next fill";
  // Many prints are a burst whatever the volume: the count path fires inside the 60 s.
  volume.count_multiple_60s = 6.f;
  EXPECT_EQ(count_type(eval(engine, snapshot(40), b), AlertType::kVolumeBurst), 1);
  RuleEngine later(symbols, RuleOptions::absolute());
  volume.count_multiple_60s = 0.f;
  EXPECT_EQ(count_type(eval(later, trade(100, 1001, 200'000, Side::kSell), b), AlertType::kLargeSell), 1);
  EXPECT_EQ(count_type(eval(later, snapshot(159), b), AlertType::kVolumeBurst), 0) << "59 s after the print";
  EXPECT_EQ(count_type(eval(later, snapshot(161), b), AlertType::kVolumeBurst), 1) << "61 s after: the volume path is back";
}

}  // namespace
}  // namespace ts::testing
