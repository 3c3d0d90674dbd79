// Limit-up / limit-down seal and open transitions and the sealed-queue shrink rule.
#include <gtest/gtest.h>

#include "detect/rule_test_util.h"

namespace ts::testing {
namespace {

using RuleLimit = RuleFixture;

std::vector<AlertType> types(const std::vector<Alert>& v) {
  std::vector<AlertType> t;
  for (const auto& a : v) t.push_back(a.type);
  return t;
}

TEST_F(RuleLimit, LimitUpSealedOpenedSealedAgainInOrder) {
  RuleEngine engine(symbols, RuleOptions{});
  std::vector<Alert> all;
  auto run = [&](const Event& e, const BookTop& b) {
    auto a = eval(engine, e, b);
    all.insert(all.end(), a.begin(), a.end());
    return a;
  };
  // Climbing: bid below the limit.
  EXPECT_TRUE(run(snapshot(0), book(1098, 20'000, 1099, 3'000, 1099)).empty());
  // Sealed: bid 11.00 x 500 lots, no asks.
  auto a = run(snapshot(1), book(1100, 50'000, 0, 0, 1100));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpSealed);
  EXPECT_EQ(a[0].severity, Severity::kCritical);
  EXPECT_EQ(a[0].price, 1100);
  EXPECT_DOUBLE_EQ(value(a[0], "bid_qty_at_limit")->value, 50'000);
  EXPECT_DOUBLE_EQ(value(a[0], "bid_qty_at_limit")->threshold, 10'000);
  // Staying sealed: no repeat.
  EXPECT_TRUE(run(snapshot(2), book(1100, 52'000, 0, 0, 1100)).empty());
  EXPECT_TRUE(run(trade(3, 1100, 1000, Side::kBuy), book(1100, 51'000, 0, 0, 1100)).empty());
  // Opened: a print below the limit.
  a = run(trade(4, 1099, 500, Side::kSell), book(1100, 51'000, 0, 0, 1099));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpOpened);
  EXPECT_EQ(a[0].price, 1099);
  EXPECT_DOUBLE_EQ(value(a[0], "trade_price_ticks")->value, 1099);
  EXPECT_DOUBLE_EQ(value(a[0], "trade_price_ticks")->threshold, 1100);
  // Sealed again two seconds later (回封).
  a = run(snapshot(6), book(1100, 40'000, 0, 0, 1100));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpSealed);
  // Opened by the bid queue going away.
  a = run(snapshot(8), book(1098, 1'000, 1099, 2'000, 1099));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpOpened);
  EXPECT_DOUBLE_EQ(value(a[0], "best_bid_ticks")->value, 1098);

  EXPECT_EQ(types(all), (std::vector<AlertType>{AlertType::kLimitUpSealed, AlertType::kLimitUpOpened,
                                                 AlertType::kLimitUpSealed, AlertType::kLimitUpOpened}));
}

TEST_F(RuleLimit, LimitUpNotSealedWithThinQueueOrAskAtLimit) {
  RuleEngine engine(symbols, RuleOptions{});
  EXPECT_TRUE(eval(engine, snapshot(1), book(1100, 9'900, 0, 0, 1100)).empty()) << "99 lots < 100";
  // Sellers still at the limit: touched (触及涨停), not sealed.
  const auto touched = eval(engine, snapshot(2), book(1100, 50'000, 1100, 100, 1100));
  ASSERT_EQ(touched.size(), 1u) << "sellers still at the limit";
  EXPECT_EQ(touched[0].type, AlertType::kLimitUpTouched);
  EXPECT_TRUE(eval(engine, snapshot(3), book(1099, 50'000, 0, 0, 1099)).empty()) << "bid not at the limit";
}

TEST_F(RuleLimit, LimitUpOpenedByAnAskAtTheLimit) {
  RuleEngine engine(symbols, RuleOptions{});
  ASSERT_EQ(eval(engine, snapshot(1), book(1100, 50'000, 0, 0, 1100)).size(), 1u);
  const auto a = eval(engine, snapshot(2), book(1100, 20'000, 1100, 5'000, 1100));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpOpened);
}

TEST_F(RuleLimit, LimitDownSealedThenOpened) {
  RuleEngine engine(symbols, RuleOptions{});
  auto a = eval(engine, snapshot(1), book(0, 0, 900, 80'000, 900));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitDownSealed);
  EXPECT_EQ(a[0].price, 900);
  EXPECT_DOUBLE_EQ(value(a[0], "ask_qty_at_limit")->value, 80'000);
  EXPECT_DOUBLE_EQ(value(a[0], "ask_qty_at_limit")->threshold, 10'000);
  EXPECT_TRUE(eval(engine, trade(2, 900, 1000, Side::kSell), book(0, 0, 900, 79'000, 900)).empty());
  a = eval(engine, trade(3, 901, 1000, Side::kBuy), book(0, 0, 900, 78'000, 901));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitDownOpened);
  EXPECT_DOUBLE_EQ(value(a[0], "trade_price_ticks")->value, 901);
}

TEST_F(RuleLimit, LimitDownNotSealedWithThinQueueOrBidAtLimit) {
  RuleEngine engine(symbols, RuleOptions{});
  EXPECT_TRUE(eval(engine, snapshot(1), book(0, 0, 900, 9'900, 900)).empty());
  // Buyers still at the limit: touched (触及跌停), not sealed.
  const auto touched = eval(engine, snapshot(2), book(900, 100, 900, 50'000, 900));
  ASSERT_EQ(touched.size(), 1u) << "buyers still at the limit";
  EXPECT_EQ(touched[0].type, AlertType::kLimitDownTouched);
}

TEST_F(RuleLimit, QueueShrinkFiresOnAFastDropOfTheSealedQueue) {
  RuleEngine engine(symbols, RuleOptions{});
  ASSERT_EQ(eval(engine, snapshot(0), book(1100, 100'000, 0, 0, 1100)).size(), 1u);  // sealed
  EXPECT_TRUE(eval(engine, snapshot(5), book(1100, 51'000, 0, 0, 1100)).empty()) << "49% < 50%";
  const auto a = eval(engine, snapshot(8), book(1100, 45'000, 0, 0, 1100));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpQueueShrink);
  EXPECT_EQ(a[0].severity, Severity::kWarning);
  EXPECT_DOUBLE_EQ(value(a[0], "queue_drop_pct")->value, 55);
  EXPECT_DOUBLE_EQ(value(a[0], "queue_drop_pct")->threshold, 50);
  EXPECT_DOUBLE_EQ(value(a[0], "peak_qty")->value, 100'000);
  EXPECT_DOUBLE_EQ(value(a[0], "bid_qty_at_limit")->value, 45'000);
  // Still shrinking within the cooldown: one alert, not one per event.
  EXPECT_TRUE(eval(engine, snapshot(9), book(1100, 30'000, 0, 0, 1100)).empty());
}

// 跌停封单骤减: the mirror at limit-down (9.00): the sealed ask queue halves within 10 s.
TEST_F(RuleLimit, LimitDownQueueShrinkFiresOnAFastDropOfTheSealedAskQueue) {
  RuleEngine engine(symbols, RuleOptions{});
  const auto sealed = eval(engine, snapshot(0), book(0, 0, 900, 100'000, 900));
  ASSERT_EQ(sealed.size(), 1u);
  EXPECT_EQ(sealed[0].type, AlertType::kLimitDownSealed);
  EXPECT_TRUE(eval(engine, snapshot(5), book(0, 0, 900, 51'000, 900)).empty()) << "49% < 50%";
  const auto a = eval(engine, snapshot(8), book(0, 0, 900, 15'000, 900));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitDownQueueShrink);
  EXPECT_EQ(a[0].severity, Severity::kCritical) << "85% >= 80%";
  EXPECT_DOUBLE_EQ(value(a[0], "queue_drop_pct")->value, 85);
  EXPECT_DOUBLE_EQ(value(a[0], "ask_qty_at_limit")->value, 15'000);
  EXPECT_DOUBLE_EQ(value(a[0], "peak_qty")->value, 100'000);
}

TEST_F(RuleLimit, QueueShrinkQuietWhenTheDropIsSlowerThanTheWindow) {
  RuleEngine engine(symbols, RuleOptions{});
  ASSERT_EQ(eval(engine, snapshot(0), book(1100, 100'000, 0, 0, 1100)).size(), 1u);
  // -55% over 24 s in steps of -15%/6 s: never 50% within 10 s.
  EXPECT_TRUE(eval(engine, snapshot(6), book(1100, 85'000, 0, 0, 1100)).empty());
  EXPECT_TRUE(eval(engine, snapshot(12), book(1100, 70'000, 0, 0, 1100)).empty());
  EXPECT_TRUE(eval(engine, snapshot(18), book(1100, 57'000, 0, 0, 1100)).empty());
  EXPECT_TRUE(eval(engine, snapshot(24), book(1100, 45'000, 0, 0, 1100)).empty());
}

TEST_F(RuleLimit, SymbolsWithoutLimitsNeverSeal) {
  const SymbolId us = symbols.intern("AAPL");
  RuleEngine engine(symbols, RuleOptions{});
  Event e = snapshot(1);
  e.symbol = us;
  EXPECT_TRUE(eval(engine, e, book(1100, 50'000, 0, 0, 1100)).empty());
}

}  // namespace
}  // namespace ts::testing
