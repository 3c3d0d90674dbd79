// Price, trade and book rules: each fires with the exact values/thresholds, and a close-but-below
// input does not fire.
#include <gtest/gtest.h>

#include <cmath>

#include "detect/rule_test_util.h"

namespace ts::testing {
namespace {

using RulePrice = RuleFixture;

TEST_F(RulePrice, RapidRiseFiresOnA3PercentPumpWithValuesAndContext) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = 300;  // +3% in a minute
  row[kRet10s] = 25;
  row[kVolShort] = 7.5f;
  const Event e = snapshot(1);
  const auto alerts = eval(engine, e, book(1030, 1000, 1031, 1000, 1030));
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.type, AlertType::kRapidRise);
  EXPECT_EQ(a.severity, Severity::kWarning);
  EXPECT_EQ(a.symbol, sym);
  EXPECT_EQ(a.exch_ts_ns, e.exch_ts_ns);
  EXPECT_EQ(a.event_seq, e.seq);
  EXPECT_EQ(a.price, 1030);
  ASSERT_EQ(a.value_count, 2);
  EXPECT_STREQ(a.values[0].name, "ret_60s_bps");
  EXPECT_DOUBLE_EQ(a.values[0].value, 300);
  EXPECT_DOUBLE_EQ(a.values[0].threshold, 200);
  EXPECT_EQ(a.values[0].cmp, Cmp::kGe);
  EXPECT_STREQ(a.values[1].name, "ret_10s_bps");
  EXPECT_DOUBLE_EQ(a.values[1].value, 25);
  EXPECT_DOUBLE_EQ(a.values[1].threshold, 0);
  EXPECT_EQ(a.values[1].cmp, Cmp::kGt);
  EXPECT_FLOAT_EQ(a.features[kVolShort], 7.5f) << "the feature row is copied into the alert";
  EXPECT_FLOAT_EQ(a.features[kRet60s], 300.f);
  EXPECT_GE(a.t.detect_ns, a.t.features_ns) << "detect time is stamped when the rule fires";
  EXPECT_EQ(a.t.book_ns, a.t.recv_ns + 1) << "stage times given are carried";
}

TEST_F(RulePrice, RapidRiseCriticalBeyond500Bps) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = 600;
  row[kRet10s] = 50;
  const auto alerts = eval(engine, snapshot(1), book(1060, 1000, 1061, 1000, 1060));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].severity, Severity::kCritical);
}

TEST_F(RulePrice, RapidRiseStaysQuietBelowThresholdOrWhenStalled) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = 199;  // just below
  row[kRet10s] = 25;
  EXPECT_TRUE(eval(engine, snapshot(1), book(1020, 1000, 1021, 1000, 1020)).empty());
  row[kRet60s] = 300;  // up a lot, but falling back over the last 10 s
  row[kRet10s] = -1;
  EXPECT_TRUE(eval(engine, snapshot(2), book(1030, 1000, 1031, 1000, 1030)).empty());
  row[kRet60s] = 40;   // noise: a few bps per second
  row[kRet10s] = 15;
  EXPECT_TRUE(eval(engine, snapshot(3), book(1004, 1000, 1005, 1000, 1004)).empty());
}

TEST_F(RulePrice, AcceleratingDropFiresWhenTheLast10sFallFasterThanTheMinute) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = -250;  // -4.17 bps/s over 60 s
  row[kRet10s] = -60;   // -6 bps/s over 10 s
  const auto alerts = eval(engine, snapshot(1), book(975, 1000, 976, 1000, 975));
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.type, AlertType::kAcceleratingDrop);
  EXPECT_EQ(a.severity, Severity::kWarning);
  EXPECT_DOUBLE_EQ(value(a, "ret_60s_bps")->value, -250);
  EXPECT_DOUBLE_EQ(value(a, "ret_60s_bps")->threshold, -200);
  EXPECT_EQ(value(a, "ret_60s_bps")->cmp, Cmp::kLe);
  EXPECT_DOUBLE_EQ(value(a, "ret_10s_bps_per_s")->value, -6);
  EXPECT_NEAR(value(a, "ret_10s_bps_per_s")->threshold, -250.0 / 60.0, 1e-9);
}

TEST_F(RulePrice, AcceleratingDropQuietWhenDeceleratingOrSmall) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = -250;
  row[kRet10s] = -30;  // -3 bps/s: slowing down
  EXPECT_TRUE(eval(engine, snapshot(1), book(975, 1000, 976, 1000, 975)).empty());
  row[kRet60s] = -190;  // not down enough
  row[kRet10s] = -60;
  EXPECT_TRUE(eval(engine, snapshot(2), book(981, 1000, 982, 1000, 981)).empty());
}

TEST_F(RulePrice, HighDiveFiresOnAFallFromARecentHighAfterBeingUp) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  // Up 6% on the day (prev close 1000), then a 3.3% slide from that high.
  for (int i = 0; i <= 60; ++i) {
    const Price p = 1000 + i;
    ASSERT_TRUE(eval(engine, snapshot(i), book(p, 1000, p + 1, 1000, p)).empty()) << i;
  }
  ASSERT_TRUE(eval(engine, snapshot(90), book(1031, 1000, 1032, 1000, 1031)).empty())
      << "282 bps below the high: not yet";
  const auto alerts = eval(engine, snapshot(100), book(1025, 1000, 1026, 1000, 1025));
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.type, AlertType::kHighDive);
  EXPECT_NEAR(value(a, "drop_from_high_bps")->value, (1.0 - 1025.0 / 1060.0) * 1e4, 1e-9);
  EXPECT_DOUBLE_EQ(value(a, "drop_from_high_bps")->threshold, 300);
  EXPECT_NEAR(value(a, "high_gain_bps")->value, 600, 1e-9);
  EXPECT_DOUBLE_EQ(value(a, "high_gain_bps")->threshold, 200);
  EXPECT_DOUBLE_EQ(value(a, "recent_high_ticks")->value, 1060);
  EXPECT_EQ(a.price, 1025);
}

TEST_F(RulePrice, HighDiveNeedsTheStockToHaveBeenUpOnTheDay) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  // High only +1% over prev close; a 3.5% drop from it is a plain drop, not a 跳水 from a high.
  ASSERT_TRUE(eval(engine, snapshot(0), book(1010, 1000, 1011, 1000, 1010)).empty());
  EXPECT_TRUE(eval(engine, snapshot(30), book(974, 1000, 975, 1000, 974)).empty());
}

TEST_F(RulePrice, HighDiveForgetsHighsOlderThanTheLookback) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  ASSERT_TRUE(eval(engine, snapshot(0), book(1060, 1000, 1061, 1000, 1060)).empty());
  // 15 minutes later (lookback 10 min), down at 1025 after drifting there slowly.
  for (int i = 1; i <= 900; i += 30) {
    ASSERT_TRUE(eval(engine, snapshot(i), book(1030, 1000, 1031, 1000, 1030)).empty()) << i;
  }
  EXPECT_TRUE(eval(engine, snapshot(901), book(1025, 1000, 1026, 1000, 1025)).empty());
}

TEST_F(RulePrice, LargeBuyAndSellByAggressorWithNotional) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  const BookTop b = book(1000, 1000, 1001, 1000, 1000);
  // 100,000 shares at 10.00 = 1,000,000: exactly the threshold.
  auto alerts = eval(engine, trade(1, 1000, 100'000, Side::kBuy), b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].type, AlertType::kLargeBuy);
  EXPECT_EQ(alerts[0].price, 1000);
  EXPECT_DOUBLE_EQ(value(alerts[0], "notional")->value, 1'000'000);
  EXPECT_DOUBLE_EQ(value(alerts[0], "notional")->threshold, 1'000'000);
  EXPECT_DOUBLE_EQ(value(alerts[0], "qty")->value, 100'000);

  alerts = eval(engine, trade(2, 1000, 600'000, Side::kSell), b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].type, AlertType::kLargeSell);
  EXPECT_EQ(alerts[0].severity, Severity::kCritical) << "6,000,000 >= 5,000,000";

  // An execution against a resting BUY order was a sell-initiated trade.
  Event ex = Event::make(EventKind::kOrderExecute);
  ex.symbol = sym;
  ex.exch_ts_ns = at_s(10);
  ex.order = OrderBody{42, 1001, 200'000, Side::kBuy};
  alerts = eval(engine, ex, b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].type, AlertType::kLargeSell);
  EXPECT_NEAR(value(alerts[0], "notional")->value, 2'002'000, 1e-6);
}

TEST_F(RulePrice, LargeTradeQuietBelowNotionalOrWithoutAggressor) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  const BookTop b = book(1000, 1000, 1001, 1000, 1000);
  EXPECT_TRUE(eval(engine, trade(1, 1000, 99'900, Side::kBuy), b).empty()) << "999,000 < 1,000,000";
  EXPECT_TRUE(eval(engine, trade(2, 1000, 500'000, Side::kNone), b).empty());
}

// The thresholds on one event (no hold: the persistence is WideSpreadMustPersistForTheHold's).
RuleOptions spread_without_hold() {
  RuleOptions o;
  o.hold_ms[int(AlertType::kSpreadWidening)] = 0;
  return o;
}

TEST_F(RulePrice, SpreadWideningAgainstTheSymbolsTypicalSpread) {
  RuleEngine engine(symbols, spread_without_hold());
  row[kSpreadTicks] = 2;
  // 100 samples over 60 s: the typical spread is trusted once it spans one time constant.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(eval(engine, snapshot(i * 0.61), book(1000, 1000, 1002, 1000, 1000)).empty());
  }
  row[kSpreadTicks] = 7.5f;  // below 4 x typical (8)
  EXPECT_TRUE(eval(engine, snapshot(61.49), book(996, 1000, 1004, 1000, 1000)).empty());
  // The 7.5 moved the typical spread, clipped to 2 × 2 = 4 (bounded influence) and weighted by
  // the 1.1 s since the last sample: 2 + 1.1 / (60 + 1.1) × (4 - 2) = 2.036: threshold 8.144.
  const double typical = 2 + 1.1 / (60 + 1.1) * (4 - 2);
  row[kSpreadTicks] = 8.5f;
  const auto alerts = eval(engine, snapshot(62.49), book(996, 1000, 1004, 1000, 1000));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].type, AlertType::kSpreadWidening);
  EXPECT_EQ(alerts[0].severity, Severity::kWarning);
  EXPECT_DOUBLE_EQ(value(alerts[0], "spread_ticks")->value, 8.5);
  EXPECT_NEAR(value(alerts[0], "spread_ticks")->threshold, 4 * typical, 1e-9);
  EXPECT_NEAR(value(alerts[0], "typical_spread_ticks")->value, typical, 1e-9);
  EXPECT_EQ(value(alerts[0], "depth_change"), nullptr) << "depth did not collapse: no withdrawal value";
}

// Liquidity withdrawal: when the top-5 depth collapsed (depth_change <= -1.2, under 30 % of what
// it was 10 s ago), a 3x widening is enough; without the collapse it takes 4x.
TEST_F(RulePrice, SpreadWideningAtThreeTimesTypicalWhenDepthWasWithdrawn) {
  auto learned = [&](RuleEngine& engine) {
    row[kSpreadTicks] = 2;
    row[kDepthChange] = 0;
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(eval(engine, snapshot(i * 0.61), book(1000, 1000, 1002, 1000, 1000)).empty());
    }
  };
  RuleEngine kept(symbols, spread_without_hold());
  learned(kept);
  row[kSpreadTicks] = 6;      // 3 x typical
  row[kDepthChange] = -1.1f;  // depth down to 33 %: not a collapse
  EXPECT_TRUE(eval(kept, snapshot(61.49), book(997, 1000, 1003, 1000, 1000)).empty())
      << "3x without a depth collapse is below the 4x threshold";

  RuleEngine withdrawn(symbols, spread_without_hold());
  learned(withdrawn);
  row[kSpreadTicks] = 6;
  row[kDepthChange] = -1.5f;  // depth down to 22 %
  const auto alerts = eval(withdrawn, snapshot(61.49), book(997, 1000, 1003, 1000, 1000));
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.type, AlertType::kSpreadWidening);
  EXPECT_DOUBLE_EQ(value(a, "spread_ticks")->value, 6);
  EXPECT_DOUBLE_EQ(value(a, "spread_ticks")->threshold, 6) << "max(5, 3 x 2)";
  EXPECT_DOUBLE_EQ(value(a, "typical_spread_ticks")->value, 2);
  ASSERT_NE(value(a, "depth_change"), nullptr);
  EXPECT_DOUBLE_EQ(value(a, "depth_change")->value, -1.5);
  EXPECT_DOUBLE_EQ(value(a, "depth_change")->threshold, -1.2);
  EXPECT_EQ(value(a, "depth_change")->cmp, Cmp::kLe);
}

TEST_F(RulePrice, SpreadWideningWaitsForABaseline) {
  RuleEngine engine(symbols, RuleOptions{});
  row[kSpreadTicks] = 50;
  EXPECT_TRUE(eval(engine, snapshot(1), book(975, 1000, 1025, 1000, 1000)).empty());
}

TEST_F(RulePrice, BookImbalanceNeedsStrengthAndDepth) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  BookTop b = book(1000, 5000, 1001, 500, 1000);
  for (int i = 1; i < 5; ++i) {
    b.bids[i] = {1000 - i, 5000};
    b.asks[i] = {1001 + i, 500};
  }
  b.bid_levels = b.ask_levels = 5;  // depth 27,500 shares >= 200 lots
  auto imbalance = [&](double t, float imb) {
    row[kImbalance5] = imb;
    return eval(engine, snapshot(t), b);
  };
  EXPECT_TRUE(imbalance(1, 0.79f).empty()) << "below 0.8";
  // Lopsided from t=2: it has to stay lopsided for hold_ms (2 s) before it is news.
  EXPECT_TRUE(imbalance(2, 0.82f).empty()) << "one lopsided event is noise";
  EXPECT_TRUE(imbalance(3.9, 0.82f).empty()) << "held 1.9 s";
  EXPECT_TRUE(imbalance(4, 0.79f).empty()) << "a break ...";
  EXPECT_TRUE(imbalance(5, 0.82f).empty()) << "... restarts the hold at t=5";
  EXPECT_TRUE(imbalance(6.9, 0.82f).empty()) << "held 1.9 s since the break (4.9 s since t=2)";
  auto alerts = imbalance(7, 0.82f);
  ASSERT_EQ(alerts.size(), 1u) << "held 2 s";
  EXPECT_EQ(alerts[0].type, AlertType::kBookImbalance);
  EXPECT_NEAR(value(alerts[0], "imbalance_5")->value, 0.82, 1e-6);
  EXPECT_DOUBLE_EQ(value(alerts[0], "imbalance_5")->threshold, 0.8);
  EXPECT_DOUBLE_EQ(value(alerts[0], "depth_5")->value, 27'500);
  EXPECT_DOUBLE_EQ(value(alerts[0], "depth_5")->threshold, 20'000);

  RuleEngine thin(symbols, RuleOptions::absolute());
  BookTop t = book(1000, 1000, 1001, 100, 1000);  // 1,100 shares: too thin to mean anything
  EXPECT_TRUE(eval(thin, snapshot(3), t).empty());
}

TEST_F(RulePrice, VolumeBurst) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  const BookTop b = book(1000, 1000, 1001, 1000, 1000);
  row[kVolumeZ] = 30.f;  // one block print makes a 10 s spike: not a burst by itself
  set_volume_multiple(4.9f);
  EXPECT_TRUE(eval(engine, snapshot(1), b).empty()) << "below 5 x the expected 60 s volume";
  set_volume_multiple(5.5f);
  row[kVolumeZ] = 8.5f;
  row[kTradeCountZ] = 3.f;
  auto alerts = eval(engine, snapshot(2), b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].type, AlertType::kVolumeBurst);
  EXPECT_EQ(alerts[0].severity, Severity::kWarning);
  EXPECT_NEAR(value(alerts[0], "volume_multiple_60s")->value, 5.5, 1e-6);
  EXPECT_DOUBLE_EQ(value(alerts[0], "volume_multiple_60s")->threshold, 5);
  EXPECT_NEAR(value(alerts[0], "volume_z")->value, 8.5, 1e-6);
  EXPECT_DOUBLE_EQ(value(alerts[0], "trade_count_z")->value, 3);

  RuleEngine burst(symbols, RuleOptions::absolute());
  set_volume_multiple(10.f);
  alerts = eval(burst, snapshot(3), b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].severity, Severity::kCritical) << "multiple >= 10";

  // Many small prints are a burst too: the number of prints at 6 x its expectation.
  RuleEngine prints(symbols, RuleOptions::absolute());
  set_volume_multiple(1.5f);
  volume.count_multiple_60s = 6.f;
  alerts = eval(prints, snapshot(3), b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_NEAR(value(alerts[0], "count_multiple_60s")->value, 6, 1e-6);
  EXPECT_EQ(alerts[0].severity, Severity::kWarning);
  volume.count_multiple_60s = 0.f;

  // Without the 60 s window (a caller that has no feature engine) the rule stays silent.
  RuleEngine blind(symbols, RuleOptions::absolute());
  Alert out[kAlertTypeCount];
  EXPECT_EQ(blind.evaluate(snapshot(4), b, row, StageTimes{}, out, kAlertTypeCount), 0);
}

TEST_F(RulePrice, AuctionPhasesAreSkipped) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = 900;
  row[kRet10s] = 100;
  row[kVolumeZ] = 50;
  row[kSpreadTicks] = 0;
  // Crossed call-auction book, big opening print: nothing fires until continuous trading.
  const BookTop auction = book(1050, 90'000, 1040, 80'000, 1045, Phase::kOpeningAuction);
  EXPECT_TRUE(eval(engine, snapshot(0), auction).empty());
  EXPECT_TRUE(eval(engine, trade(1, 1045, 1'000'000, Side::kNone), auction).empty());
  const BookTop closing = book(1045, 1000, 1046, 1000, 1045, Phase::kClosingAuction);
  EXPECT_TRUE(eval(engine, trade(2, 1045, 1'000'000, Side::kBuy), closing).empty());
  EXPECT_FALSE(eval(engine, snapshot(3), book(1045, 1000, 1046, 1000, 1045)).empty());
}

TEST_F(RulePrice, SeveralRulesOnOneEventAndOverflowIsCounted) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  row[kRet60s] = 300;
  row[kRet10s] = 20;
  row[kVolumeZ] = 9;
  set_volume_multiple(6);
  Alert out[1];
  const int n = engine.evaluate(snapshot(1), book(1030, 1000, 1031, 1000, 1030), row, StageTimes{}, out, 1, &volume);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(engine.overflow(), 1u);
  RuleEngine roomy(symbols, RuleOptions::absolute());
  EXPECT_EQ(eval(roomy, snapshot(1), book(1030, 1000, 1031, 1000, 1030)).size(), 2u);
}

// 大单挂单: every other top-5 bid level holds 10,000 shares (100,000 at 10.00).
TEST_F(RulePrice, LargeOrderFiresOnA15xBidAtLevel2WithValues) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  BookTop b = deep_book(1000, 1001, 10'000);
  b.bids[1].qty = 150'000;  // the book after the add: the new order is all of level 2
  const Event e = order_add(1, 999, 150'000, Side::kBuy);
  const auto alerts = eval(engine, e, b);
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.type, AlertType::kLargeOrder);
  EXPECT_STREQ(alert_type_name(a.type), "large_order");
  EXPECT_EQ(a.severity, Severity::kWarning);
  EXPECT_EQ(a.price, 999);
  EXPECT_EQ(a.event_seq, e.seq);
  EXPECT_DOUBLE_EQ(value(a, "level_multiple")->value, 15);
  EXPECT_DOUBLE_EQ(value(a, "level_multiple")->threshold, 12);
  EXPECT_EQ(value(a, "level_multiple")->cmp, Cmp::kGe);
  EXPECT_NEAR(value(a, "notional")->value, 1'498'500, 1e-6);  // 9.99 x 150,000
  EXPECT_DOUBLE_EQ(value(a, "notional")->threshold, 500'000);
  EXPECT_DOUBLE_EQ(value(a, "level")->value, 2);
  EXPECT_DOUBLE_EQ(value(a, "level")->threshold, 3);
  EXPECT_DOUBLE_EQ(value(a, "side_buy")->value, 1);

  BookTop again = deep_book(1000, 1001, 10'000);
  again.bids[2].qty = 150'000;  // another 15x order, at level 3
  EXPECT_TRUE(eval(engine, order_add(30.9, 998, 150'000, Side::kBuy), again).empty()) << "30 s cooldown";
  EXPECT_EQ(eval(engine, order_add(31, 998, 150'000, Side::kBuy), again).size(), 1u) << "cooldown over";
}

TEST_F(RulePrice, LargeOrderJoiningALevelCountsWhatRestedThere) {
  RuleEngine engine(symbols, RuleOptions::absolute());
  BookTop b = deep_book(1000, 1001, 10'000);
  b.asks[0].qty = 10'000 + 200'000;  // 10,000 already at the best ask, then a 200,000 sell
  const auto alerts = eval(engine, order_add(1, 1001, 200'000, Side::kSell), b);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].type, AlertType::kLargeOrder);
  EXPECT_EQ(alerts[0].severity, Severity::kCritical) << "20x";
  EXPECT_DOUBLE_EQ(value(alerts[0], "level_multiple")->value, 20);
  EXPECT_DOUBLE_EQ(value(alerts[0], "level")->value, 1);
  EXPECT_DOUBLE_EQ(value(alerts[0], "side_buy")->value, 0);
}

TEST_F(RulePrice, LargeOrderQuietWhenSmallDeepOrCheap) {
  {
    RuleEngine engine(symbols, RuleOptions::absolute());
    BookTop b = deep_book(1000, 1001, 10'000);
    b.bids[1].qty = 100'000;  // 10x, 999,000 notional
    EXPECT_TRUE(eval(engine, order_add(1, 999, 100'000, Side::kBuy), b).empty()) << "10x < 12x";
    b.bids[1].qty = 119'000;  // 11.9x
    EXPECT_TRUE(eval(engine, order_add(2, 999, 119'000, Side::kBuy), b).empty()) << "11.9x < 12x";
  }
  {
    RuleEngine engine(symbols, RuleOptions::absolute());
    BookTop b = deep_book(1000, 1001, 10'000);
    b.bids[3].qty = 150'000;  // 15x, but at level 4
    EXPECT_TRUE(eval(engine, order_add(1, 997, 150'000, Side::kBuy), b).empty()) << "beyond level 3";
    b.bids[3].qty = 10'000;
    b.bids[2].qty = 150'000;  // the same order at level 3 fires
    EXPECT_EQ(of_type(eval(engine, order_add(2, 998, 150'000, Side::kBuy), b), AlertType::kLargeOrder).size(), 1u);
  }
  {
    RuleEngine engine(symbols, RuleOptions::absolute());
    BookTop b = deep_book(1000, 1001, 2'000);
    b.bids[1].qty = 30'000;  // 15x, but 9.99 x 30,000 = 299,700 < 500,000
    EXPECT_TRUE(eval(engine, order_add(1, 999, 30'000, Side::kBuy), b).empty()) << "under the notional floor";
  }
}

}  // namespace
}  // namespace ts::testing
