// Issue 22's rules on market structure: limit touches, baselines that keep learning while a rule
// alerts, relative thresholds across price scales, exact notionals across size increments, and
// every [rules.*] value range-checked.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/config.h"
#include "core/input_errors.h"
#include "core/instrument_ref.h"
#include "core/instrument_table.h"
#include "detect/rule_test_util.h"

namespace ts::testing {
namespace {

class RuleMarkets : public RuleFixture {
 protected:
  // Ten minutes of steady flow (one print every 6 s), then one print of big_qty; how many
  // large_buy alerts the big print raised.
  int large_after_flow(SymbolId id, Price price, Qty steady_qty, Qty big_qty);
};

int count_type(const std::vector<Alert>& v, AlertType t) {
  int n = 0;
  for (const auto& a : v) n += a.type == t;
  return n;
}

// 600000.SH, prev close 10.00: limit-up 11.00. A stock runs up, trades at 11.00 twice, the ask
// at 11.00 is taken and refilled, and sellers keep it from sealing: 触及涨停 but never 封涨停.
TEST_F(RuleMarkets, LimitTouchedWithoutSealRaisesTouchedNotSealed) {
  RuleEngine engine(symbols, RuleOptions{});
  std::vector<Alert> all;
  auto run = [&](const Event& e, const BookTop& b) {
    auto a = eval(engine, e, b);
    all.insert(all.end(), a.begin(), a.end());
    return a;
  };
  EXPECT_TRUE(run(snapshot(0), book(1097, 30'000, 1098, 12'000, 1098)).empty());
  EXPECT_TRUE(run(trade(1, 1099, 2'000, Side::kBuy), book(1098, 30'000, 1099, 4'000, 1099)).empty());
  // The best ask is now the limit price: touched.
  auto a = run(snapshot(2), book(1099, 25'000, 1100, 60'000, 1099));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpTouched);
  EXPECT_DOUBLE_EQ(value(a[0], "limit_up_ticks")->value, 1100);
  EXPECT_DOUBLE_EQ(value(a[0], "best_ask_ticks")->value, 1100);
  // Trades at the limit while sellers still offer there: the same touch, no repeat, no seal.
  EXPECT_TRUE(run(trade(3, 1100, 20'000, Side::kBuy), book(1099, 25'000, 1100, 40'000, 1100)).empty());
  EXPECT_TRUE(run(snapshot(4), book(1100, 8'000, 0, 0, 1100)).empty()) << "bid at limit: 80 lots < 100";
  // Falls back 0.45 %: not far enough to count a new touch.
  EXPECT_TRUE(run(trade(10, 1095, 3'000, Side::kSell), book(1094, 9'000, 1095, 5'000, 1095)).empty());
  EXPECT_TRUE(run(trade(80, 1100, 1'000, Side::kBuy), book(1099, 9'000, 1100, 5'000, 1100)).empty())
      << "still the first touch: the price never left the limit by 1 %";
  // Falls 1.4 % (re-arms), and trades at the limit again a minute later: a second touch.
  EXPECT_TRUE(run(trade(100, 1085, 3'000, Side::kSell), book(1084, 9'000, 1085, 5'000, 1085)).empty());
  a = run(trade(200, 1100, 1'000, Side::kBuy), book(1099, 9'000, 1101, 0, 1100));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitUpTouched);
  EXPECT_DOUBLE_EQ(value(a[0], "trade_price_ticks")->value, 1100);
  EXPECT_EQ(count_type(all, AlertType::kLimitUpSealed), 0);
  EXPECT_EQ(count_type(all, AlertType::kLimitUpTouched), 2);
}

TEST_F(RuleMarkets, LimitDownTouchedByTheBestBidAndSealIsItsOwnAlert) {
  RuleEngine engine(symbols, RuleOptions{});
  auto a = eval(engine, snapshot(1), book(900, 3'000, 901, 50'000, 901));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitDownTouched);
  // Sealed at the limit-down (ask at limit, no bid): limit_down_sealed, no second touch.
  a = eval(engine, snapshot(2), book(0, 0, 900, 80'000, 900));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, AlertType::kLimitDownSealed);
}

TEST_F(RuleMarkets, NoLimitAlertsOnMarketsWithoutLimits) {
  const SymbolId us = symbols.intern("AAPL.US");
  symbols.set_prev_close(us, 58000);
  ASSERT_EQ(symbols.ref(us).limit_up, 0);
  RuleEngine engine(symbols, RuleOptions{});
  sym = us;
  // +10 % and -10 % prints: would be A-share limits, are nothing on NASDAQ.
  EXPECT_TRUE(eval(engine, trade(1, 63800, 100, Side::kBuy), book(63790, 100, 63800, 100, 63800)).empty());
  EXPECT_TRUE(eval(engine, trade(2, 52200, 100, Side::kSell), book(52200, 100, 52210, 100, 52200)).empty());
}

// A stock whose spread is 2 ticks for 10 minutes, then 20 ticks for an hour (a market maker left
// for good). Before issue 22 the typical spread learned from non-alerting events only: one alert
// a minute for the whole hour. Now the wide spread becomes the normal one within minutes.
TEST_F(RuleMarkets, PermanentlyWideSpreadStopsAlertingWithinBoundedTime) {
  RuleEngine engine(symbols, RuleOptions{});
  row[kSpreadTicks] = 2;
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(eval(engine, snapshot(i), book(1000, 1000, 1002, 1000, 1000)).empty());
  row[kSpreadTicks] = 20;
  std::vector<double> fired_at;
  for (int i = 600; i < 4200; ++i) {
    for (const auto& a : eval(engine, snapshot(i), book(990, 1000, 1010, 1000, 1000))) {
      if (a.type == AlertType::kSpreadWidening) fired_at.push_back(i - 600);
    }
  }
  ASSERT_FALSE(fired_at.empty()) << "the widening itself is news";
  const int64_t hold_s = RuleOptions{}.hold_ms[int(AlertType::kSpreadWidening)] / 1000;
  EXPECT_EQ(fired_at.front(), hold_s) << "once it has held for the hold";
  // Bound: tau × ln(20 / (4 × 2)) / ln(clip) = 60 s × ln 2.5 / ln 2 = 79 s, plus one cooldown.
  EXPECT_LE(fired_at.back(), 140) << "alerts for " << fired_at.back() << " s";
  EXPECT_LE(fired_at.size(), 2u);
  // A short widening, by contrast, is not learned away: 10 s of 20 ticks, back to 2, then 20 again.
  RuleEngine fresh(symbols, RuleOptions{});
  row[kSpreadTicks] = 2;
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(eval(fresh, snapshot(i), book(1000, 1000, 1002, 1000, 1000)).empty());
  row[kSpreadTicks] = 20;
  for (int i = 600; i < 610; ++i) (void)eval(fresh, snapshot(i), book(990, 1000, 1010, 1000, 1000));
  row[kSpreadTicks] = 2;
  for (int i = 610; i < 700; ++i) (void)eval(fresh, snapshot(i), book(1000, 1000, 1002, 1000, 1000));
  row[kSpreadTicks] = 20;
  std::vector<Alert> again;
  for (int i = 700; i <= 700 + hold_s; ++i) {
    for (const auto& a : eval(fresh, snapshot(i), book(990, 1000, 1010, 1000, 1000))) again.push_back(a);
  }
  ASSERT_EQ(count_type(again, AlertType::kSpreadWidening), 1) << "a new widening 90 s later still alerts";
  EXPECT_LT(value(again[0], "typical_spread_ticks")->value, 3.0);
}

// The same move in units of each symbol's own volatility alerts on a ¥2.72 stock and a $60,000
// coin alike; an absolute 200 bps threshold would alert only on the volatile cheap stock.
TEST_F(RuleMarkets, RelativeMoveThresholdsAreComparableAcrossPriceScales) {
  InstrumentTable instruments;
  auto btc = intern_instrument(symbols, instruments, "BINANCE:BTCUSDT");
  ASSERT_TRUE(btc.is_ok()) << btc.status().message();
  const SymbolId stock = symbols.intern("600010.SH");
  symbols.set_prev_close(stock, 270);
  struct Case {
    SymbolId id;
    Price price;      // ticks
    float vol_long;   // bps per √s: the cheap stock moves in 37 bps ticks, the coin is calm
  };
  const Case cases[] = {{stock, 272, 12.0f}, {btc.value(), 6'000'000, 0.8f}};
  for (const Case& k : cases) {
    for (bool relative : {true, false}) {
      RuleOptions o;
      o.rapid_rise.relative = relative;
      RuleEngine engine(symbols, o);
      sym = k.id;
      const double sigma60 = k.vol_long * std::sqrt(60.0);
      row[kVolLong] = k.vol_long;
      row[kRet10s] = 1;
      row[kRet60s] = float(7 * sigma60);  // 7 sigma: ordinary for this symbol
      const BookTop b = book(k.price - 1, 1000, k.price + 1, 1000, k.price);
      const int quiet = count_type(eval(engine, snapshot(1), b), AlertType::kRapidRise);
      row[kRet60s] = float(9 * sigma60);  // 9 sigma: a rapid rise for this symbol
      const int moved = count_type(eval(engine, snapshot(2), b), AlertType::kRapidRise);
      SCOPED_TRACE(symbols.name(k.id) + (relative ? " relative" : " absolute"));
      if (relative) {
        EXPECT_EQ(quiet, 0);
        EXPECT_EQ(moved, 1);
      } else if (k.id == stock) {
        EXPECT_EQ(quiet + moved, 1) << "7 sigma = 650 bps already passes 200 bps";
      } else {
        EXPECT_EQ(quiet + moved, 0) << "9 sigma = 56 bps never reaches 200 bps";
      }
    }
  }
}

int RuleMarkets::large_after_flow(SymbolId id, Price price, Qty steady_qty, Qty big_qty) {
  RuleEngine engine(symbols, RuleOptions{});
  sym = id;
  const BookTop b = book(price - 1, steady_qty, price + 1, steady_qty, price);
  int n = 0;
  for (int i = 0; i < 100; ++i) n += int(eval(engine, trade(i * 6, price, steady_qty, Side::kBuy), b).size());
  EXPECT_EQ(n, 0);
  return count_type(eval(engine, trade(606, price, big_qty, Side::kBuy), b), AlertType::kLargeBuy);
}

TEST_F(RuleMarkets, RelativeLargeTradeComparableAcrossPriceScales) {
  InstrumentTable instruments;
  auto btc = intern_instrument(symbols, instruments, "BINANCE:BTCUSDT");
  ASSERT_TRUE(btc.is_ok());
  const SymbolId cheap = symbols.intern("600010.SH");
  symbols.set_prev_close(cheap, 270);
  // A minute = 10 prints; 1.2 × the typical minute is quiet, 2 × alerts (min_flow_multiple 1.5),
// whatever the price scale and size unit. Stock: 10 × 2,000 shares at ¥2.72 = ¥54,400. Coin: 10 × 0.05 BTC at
  // $60,000 = $30,000.
  EXPECT_EQ(large_after_flow(cheap, 272, 2'000, 24'000), 0);
  EXPECT_EQ(large_after_flow(cheap, 272, 2'000, 40'000), 1);
  EXPECT_EQ(large_after_flow(btc.value(), 6'000'000, 5'000, 60'000), 0);
  EXPECT_EQ(large_after_flow(btc.value(), 6'000'000, 5'000, 100'000), 1);
}

// BTCUSDT: ticks of 0.01 USDT, sizes in 0.00001 BTC. 1 BTC at 60,000.00 and 5,000 shares at 12.00
// are both 60,000 of notional, 20 BTC and 100,000 shares both 1,200,000: the same notional flow
// gives the same alerts with the same exact values, in absolute and in relative mode.
TEST_F(RuleMarkets, CryptoAndShareWithTheSameNotionalFlowGiveTheSameAlert) {
  InstrumentTable instruments;
  auto btc = intern_instrument(symbols, instruments, "BINANCE:BTCUSDT");
  ASSERT_TRUE(btc.is_ok());
  ASSERT_EQ(symbols.ref(btc.value()).size_increment.scale, 5);
  const SymbolId share = symbols.intern("600011.SH");
  symbols.set_prev_close(share, 1200);
  struct Leg {
    SymbolId id;
    Price price;
    Qty steady;  // size units of 60,000 of notional
  };
  const Leg legs[] = {{btc.value(), 6'000'000, 100'000}, {share, 1200, 5'000}};
  for (bool relative : {false, true}) {
    std::vector<std::vector<std::pair<AlertType, double>>> seen;
    for (const Leg& leg : legs) {
      RuleOptions o;
      o.large_trade.relative = relative;
      RuleEngine engine(symbols, o);
      sym = leg.id;
      const BookTop b = book(leg.price - 1, 1, leg.price + 1, 1, leg.price);
      std::vector<std::pair<AlertType, double>> got;
      auto run = [&](double t, Qty q) {
        for (const auto& a : eval(engine, trade(t, leg.price, q, Side::kBuy), b)) {
          if (a.type == AlertType::kLargeBuy) got.emplace_back(a.type, value(a, "notional")->value);
        }
      };
      for (int i = 0; i < 60; ++i) run(i * 10, leg.steady);  // 60,000 a print, 360,000 a minute
      run(700, leg.id == share ? 80'000 : 1'600'000);           // 960,000: below 1,000,000
      run(710, leg.id == share ? 100'000 : 2'000'000);          // 1,200,000
      seen.push_back(got);
    }
    SCOPED_TRACE(relative ? "relative" : "absolute");
    // absolute: 1,000,000; relative: 1.5 × 360,000 = 540,000 (the 960,000 print alerts too).
    ASSERT_EQ(seen[1].size(), relative ? 2u : 1u);
    EXPECT_DOUBLE_EQ(seen[1].back().second, 1'200'000.0) << "exact: 1200 ticks × 0.01 × 100,000 shares";
    EXPECT_EQ(seen[0], seen[1]) << "the coin and the share alert alike";
  }
}

// book_imbalance's depth floor (min_depth_lots, 200) is counted in trading lots: for a coin the
// venue's minimum order at the current price (BINANCE BTCUSDT: 5 USDT, at 60,000.00 0.0000833 BTC
// = 8.33 increments of 0.00001), as volume_burst's floor is, not in size increments. 200 raw
// increments are 0.002 BTC ($120): a book of $600 is no book to call lopsided; $1,000 of depth
// (200 minimum orders) is the floor, like the 200 board lots of a share.
TEST_F(RuleMarkets, CryptoBookImbalanceDepthFloorIsInTradingLots) {
  InstrumentTable instruments;
  auto btc = intern_instrument(symbols, instruments, "BINANCE:BTCUSDT");
  ASSERT_TRUE(btc.is_ok());
  sym = btc.value();
  auto lopsided = [&](Qty bid_qty, Qty ask_qty) {
    RuleEngine engine(symbols, RuleOptions::absolute());
    BookTop b = book(6'000'000, bid_qty, 6'000'001, ask_qty, 6'000'000);
    row[kImbalance5] = 0.98f;
    std::vector<Alert> got;
    for (double t : {1.0, 2.0, 3.5}) {
      for (const auto& a : eval(engine, snapshot(t), b)) {
        if (a.type == AlertType::kBookImbalance) got.push_back(a);
      }
    }
    return got;
  };
  // 0.01 BTC bid ($600) against 0.0001 BTC: 1,010 increments, under 200 × 8.33 = 1,667.
  EXPECT_TRUE(lopsided(1'000, 10).empty()) << "a $606 book is too thin to be lopsided";
  // 1 BTC bid ($60,000) against 0.001 BTC: fires, the floor named in minimum orders' increments.
  const auto a = lopsided(100'000, 100);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_NEAR(value(a[0], "depth_5")->threshold, 200.0 * 5.0 / 60'000.0 / 0.00001, 1e-6);
}

TEST_F(RuleMarkets, BadRulesValueIsAConfigErrorNamingTheKey) {
  const char* bad[][2] = {
      {"[rules.rapid_rise]\nmin_sigma_60s = -3.0\n", "min_sigma_60s"},
      {"[rules.spread_widening]\ntypical_tau_s = 0.0\n", "typical_tau_s"},
      {"[rules.book_imbalance]\nmin_abs_imbalance_5 = nan\n", "min_abs_imbalance_5"},
      {"[rules.large_trade]\ncritical_flow_multiple = inf\n", "critical_flow_multiple"},
      {"[rules.large_buy]\ncooldown_ms = -5\n", "cooldown_ms"},
      {"[rules.large_order]\nmax_level = 7\n", "max_level"},
      {"[rules]\nrearm_fraction = 1.5\n", "rearm_fraction"},
      {"[rules.limit]\ntouch_rearm_bps = -1.0\n", "touch_rearm_bps"},
      {"[rules.spread_widening]\nown_quantile = 1.0\n", "own_quantile"},
      {"[rules.spread_widening]\nquantile_tau_s = 0.5\n", "quantile_tau_s"},
      {"[rules.spread_widening]\nhold_ms = -1\n", "hold_ms"},
      {"[rules.large_order]\nsame_wall_s = -1\n", "same_wall_s"},
  };
  for (const auto& [text, key] : bad) {
    SCOPED_TRACE(text);
    try {
      Config config = Config::parse(text);
      (void)RuleOptions::from_config(config);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ts::testing
