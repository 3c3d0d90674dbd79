// Golden tests: each feature against a value computed by hand from a small hand-made event
// sequence (the arithmetic is in the comments). Books are given directly as BookTop.
#include "features/feature_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "book/book_set.h"

namespace ts {
namespace {

constexpr int64_t kS = 1'000'000'000;

BookTop make_book(std::initializer_list<Level> bids, std::initializer_list<Level> asks, Price last = 0) {
  BookTop t;
  for (const Level& l : bids) t.bids[t.bid_levels++] = l;
  for (const Level& l : asks) t.asks[t.ask_levels++] = l;
  t.last = last;
  return t;
}
// A one-level book whose mid is `mid2 / 2` ticks (bid = mid - 1, ask = mid + 1 for even mid2).
BookTop mid_book(Price mid) { return make_book({{mid - 1, 100}}, {{mid + 1, 100}}); }

Event at(EventKind kind, SymbolId s, int64_t ts_ns) {
  Event e = Event::make(kind);
  e.symbol = s;
  e.exch_ts_ns = ts_ns;
  return e;
}
Event trade_at(SymbolId s, int64_t ts_ns, Price px, Qty qty, Side aggressor, uint64_t agg_id = 0) {
  Event e = at(EventKind::kTrade, s, ts_ns);
  e.trade = TradeBody{px, qty, aggressor, aggressor == Side::kBuy ? agg_id : 0, aggressor == Side::kSell ? agg_id : 0};
  return e;
}

class FeatureGolden : public ::testing::Test {
 protected:
  FeatureGolden() {
    us = symbols.intern("GOOG");
    sh = symbols.intern("600519.SH");
  }
  SymbolTable symbols;
  SymbolId us = 0, sh = 0;
  FeatureOptions opts;
};

TEST_F(FeatureGolden, ImbalanceSpreadMicroprice) {
  FeatureEngine fe(symbols, opts);
  // bids 100x10 99x20 98x30 97x40 96x50, then five levels of 1; asks 102x30 103..106 x10, then five of 5.
  BookTop b = make_book({{100, 10}, {99, 20}, {98, 30}, {97, 40}, {96, 50}, {95, 1}, {94, 1}, {93, 1}, {92, 1}, {91, 1}},
                        {{102, 30}, {103, 10}, {104, 10}, {105, 10}, {106, 10}, {107, 5}, {108, 5}, {109, 5}, {110, 5}, {111, 5}});
  const float* r = fe.on_event(at(EventKind::kSnapshot, us, 10 * kS), b);
  EXPECT_NEAR(r[kImbalance1], -0.5, 1e-6);              // (10 - 30) / 40
  EXPECT_NEAR(r[kImbalance5], 80.0 / 220.0, 1e-6);      // (150 - 70) / 220 = 0.363636
  EXPECT_NEAR(r[kImbalance10], 60.0 / 250.0, 1e-6);     // (155 - 95) / 250 = 0.24
  EXPECT_NEAR(r[kSpreadTicks], 2.0, 1e-6);              // 102 - 100
  EXPECT_NEAR(r[kMicropriceDev], -0.5, 1e-6);           // (100*30 + 102*10) / 40 = 100.5; mid 101
  // One-sided book: no spread, no microprice; imbalance from the side present.
  r = fe.on_event(at(EventKind::kSnapshot, us, 11 * kS), make_book({{100, 10}}, {}));
  EXPECT_EQ(r[kSpreadTicks], 0.f);
  EXPECT_EQ(r[kMicropriceDev], 0.f);
  EXPECT_NEAR(r[kImbalance1], 1.0, 1e-6);
}

TEST_F(FeatureGolden, ReturnsOverOneTenSixtyThreeHundredSeconds) {
  FeatureEngine fe(symbols, opts);
  // mid 1000 at t=0.5 s; 1010 at t=1.5 s; 1020 at t=2.2 s.
  fe.on_event(at(EventKind::kSnapshot, us, kS / 2), mid_book(1000));
  fe.on_event(at(EventKind::kSnapshot, us, kS + kS / 2), mid_book(1010));
  const float* r = fe.on_event(at(EventKind::kSnapshot, us, 2 * kS + kS / 5), mid_book(1020));
  EXPECT_NEAR(r[kRet1s], std::log(1020.0 / 1010.0) * 1e4, 1e-3);   // vs close of second 1: 98.522 bps
  EXPECT_NEAR(r[kRet10s], std::log(1020.0 / 1000.0) * 1e4, 1e-3);  // second -8 < first: first mid: 198.026
  EXPECT_NEAR(r[kRet300s], 198.026, 1e-3);

  FeatureEngine fe2(symbols, opts);
  // mid 1000 at t=0, 1100 at t=100 s, 1210 at t=350.5 s (closes carried forward in between).
  fe2.on_event(at(EventKind::kSnapshot, us, 0), mid_book(1000));
  fe2.on_event(at(EventKind::kSnapshot, us, 100 * kS), mid_book(1100));
  r = fe2.on_event(at(EventKind::kSnapshot, us, 350 * kS + kS / 2), mid_book(1210));
  EXPECT_NEAR(r[kRet1s], 953.102, 1e-2);    // ln(1210/1100)e4: close of s=349 is 1100
  EXPECT_NEAR(r[kRet10s], 953.102, 1e-2);   // close of s=340 is 1100
  EXPECT_NEAR(r[kRet60s], 953.102, 1e-2);   // close of s=290 is 1100
  EXPECT_NEAR(r[kRet300s], 1906.204, 2e-2); // close of s=50 is 1000: ln(1.21)e4
}

TEST_F(FeatureGolden, RealizedVolatilityFromKnownReturns) {
  FeatureEngine fe(symbols, opts);
  // Mid 1000 in second 0, 1010 in seconds 1 and 2; the event in second 3 sees the completed
  // 1 s returns R = ln(1010/1000)e4 = 99.50331 bps (s=1) and 0 (s=2).
  // Bias-corrected EWMA with weight a: var = (1-a) a R^2 + a 0, w = (1-a) a + a
  //   → var/w = (1-a) R^2 / (2-a).
  // short: a = 1 - e^(-1/30) = 0.0327839 → vol = R sqrt(0.9672161/1.9672161) = 0.701198 R = 69.7716
  // long:  a = 1 - e^(-1/600) = 0.0016653 → vol = R sqrt(0.9983347/1.9983347) = 0.706812 R = 70.3302
  fe.on_event(at(EventKind::kSnapshot, us, kS / 2), mid_book(1000));
  fe.on_event(at(EventKind::kSnapshot, us, kS + kS / 2), mid_book(1010));
  fe.on_event(at(EventKind::kSnapshot, us, 2 * kS + kS / 2), mid_book(1010));
  const float* r = fe.on_event(at(EventKind::kSnapshot, us, 3 * kS + kS / 2), mid_book(1010));
  EXPECT_NEAR(r[kVolShort], 69.7716, 2e-3);
  EXPECT_NEAR(r[kVolLong], 70.3302, 2e-3);
  EXPECT_NEAR(r[kVolRatio], 69.7716 / 70.3302, 1e-4);   // 0.992058
  // Alternating ±R every second: every squared return is R^2, so both vols are R and the ratio 1.
  FeatureEngine fe2(symbols, opts);
  for (int s = 0; s <= 40; ++s) r = fe2.on_event(at(EventKind::kSnapshot, us, s * kS), mid_book(s % 2 ? 1010 : 1000));
  EXPECT_NEAR(r[kVolShort], 99.5033, 1e-2);
  EXPECT_NEAR(r[kVolLong], 99.5033, 1e-2);
  EXPECT_NEAR(r[kVolRatio], 1.0, 1e-4);
}

TEST_F(FeatureGolden, VolumeAndTradeCountZScores) {
  opts.baseline_min_buckets = 2;
  FeatureEngine fe(symbols, opts);
  const BookTop b = mid_book(180000);
  // Second 5: start (the bucket 0-9 is the first, partial, and skipped).
  fe.on_event(at(EventKind::kSnapshot, sh, 5 * kS), b);
  // Bucket 10-19: 2 trades of 500 (volume 1000). Bucket 20-29: 3 trades of 1000 at second 20.
  fe.on_event(trade_at(sh, 12 * kS, 180000, 500, Side::kBuy, 1), b);
  fe.on_event(trade_at(sh, 13 * kS, 180000, 500, Side::kBuy, 2), b);
  for (int i = 0; i < 3; ++i) fe.on_event(trade_at(sh, 20 * kS, 180000, 1000, Side::kSell, 3), b);
  // Profile (volume_profile.h): both buckets fall in one 5-minute bin (08:00 Shanghai, outside the
  // session: shape 1), so the level and the bin hold the same EWMA, weight max(1/n, 1/memory):
  //   volume: 1000, then 3000 with a = 1/2: mean 2000; var = (1-a)(0 + a * 2000^2) = 1e6, std 1000
  //   count:  2, then 3: mean 2.5; var = 0.5 * 0.5 * 1 = 0.25, std 0.5
  // At second 30 (window 21-30) one trade of 5000:
  //   volume_z = (5000 - 2000) / max(1000, 10 lots * 100 = 1000, 0.1 * 2000) = 3
  //   count_z  = (1 - 2.5) / max(0.5, 2, 0.25) = -0.75
  const float* r = fe.on_event(trade_at(sh, 30 * kS + kS / 2, 180000, 5000, Side::kBuy, 4), b);
  EXPECT_NEAR(r[kVolumeZ], 3.0, 1e-4);
  EXPECT_NEAR(r[kTradeCountZ], -0.75, 1e-4);
}

TEST_F(FeatureGolden, ZScoresZeroUntilBaselineHasEnoughBuckets) {
  FeatureEngine fe(symbols, opts);  // default: 6 completed buckets
  const BookTop b = mid_book(180000);
  const float* r = nullptr;
  for (int s = 0; s < 50; ++s) r = fe.on_event(trade_at(sh, s * kS, 180000, 100, Side::kBuy), b);
  EXPECT_EQ(r[kVolumeZ], 0.f);  // only 4 usable buckets (10-19 .. 40-49 not yet complete)
}

// Phases (docs/features.md, "Phases"): the lunch break is no 90-minute 1 s return, auction
// matches are never volume, and the open is measured against the match.
TEST_F(FeatureGolden, LunchBreakIsNoReturnJumpAndFeedsNoVolatility) {
  FeatureEngine fe(symbols, opts);
  BookTop b = mid_book(1000);
  b.phase = Phase::kContinuous;
  const float* r = nullptr;
  for (int s = 0; s < 20; ++s) r = fe.on_event(at(EventKind::kSnapshot, sh, s * kS), b);
  EXPECT_EQ(r[kVolShort], 0.f);  // a flat morning
  // The break (a status snapshot at 11:30), then 13:00 at mid 1010.
  BookTop brk = mid_book(1000);
  brk.phase = Phase::kBreak;
  r = fe.on_event(at(EventKind::kSnapshot, sh, 30 * kS), brk);
  EXPECT_EQ(r[kRet1s], 0.f);
  BookTop reopen = mid_book(1010);
  reopen.phase = Phase::kContinuous;
  r = fe.on_event(at(EventKind::kSnapshot, sh, 5400 * kS), reopen);
  EXPECT_EQ(r[kRet1s], 0.f) << "13:00 is measured against 13:00, not 11:30";
  EXPECT_EQ(r[kRet300s], 0.f);
  r = fe.on_event(at(EventKind::kSnapshot, sh, 5402 * kS), reopen);
  EXPECT_EQ(r[kVolShort], 0.f) << "the 99.5 bps over the break fed no 1 s return";
  EXPECT_EQ(r[kRet1s], 0.f);
}

TEST_F(FeatureGolden, OpenIsMeasuredAgainstTheAuctionMatch) {
  FeatureEngine fe(symbols, opts);
  BookTop call = make_book({{1020, 300}}, {{1000, 200}});  // crossed indicative book of the call
  call.phase = Phase::kOpeningAuction;
  const float* r = fe.on_event(at(EventKind::kSnapshot, sh, 0), call);
  EXPECT_EQ(r[kRet1s], 0.f);
  // The 09:25 match at 1005: a print, but no volume.
  r = fe.on_event(trade_at(sh, 600 * kS, 1005, 20000, Side::kNone), call);
  EXPECT_EQ(fe.trades(sh).last_price, 1005);
  EXPECT_EQ(r[kVolumeZ], 0.f);
  BookTop open = mid_book(1010);
  open.phase = Phase::kContinuous;
  r = fe.on_event(at(EventKind::kSnapshot, sh, 900 * kS), open);
  EXPECT_NEAR(r[kRet1s], std::log(1010.0 / 1005.0) * 1e4, 1e-2);  // 49.63 bps against the match
  EXPECT_NEAR(r[kRet60s], std::log(1010.0 / 1005.0) * 1e4, 1e-2);
  // The match volume is not in the first continuous 10 s window: one trade of 100 there.
  fe.on_event(trade_at(sh, 901 * kS, 1010, 100, Side::kBuy), open);
  EXPECT_FLOAT_EQ(fe.row(sh)[kTradeFlowImbalance], 1.f);
}

TEST_F(FeatureGolden, LimitDistancesAndReturnFromPrevClose) {
  symbols.set_prev_close(sh, 184576);  // 1845.76 CNY; ±10%: up 203034 (2030.34), down 166118 (1661.18)
  FeatureEngine fe(symbols, opts);
  const float* r = fe.on_event(at(EventKind::kSnapshot, sh, kS), make_book({{185497, 100}}, {{185500, 100}}, 185498));
  EXPECT_NEAR(r[kDistLimitUp], 17536.0 / 184576.0, 1e-6);    // (203034 - 185498) / 184576 = 0.0950069
  EXPECT_NEAR(r[kDistLimitDown], 19380.0 / 184576.0, 1e-6);  // (185498 - 166118) / 184576 = 0.1049974
  EXPECT_NEAR(r[kRetFromPrevClose], 922.0 / 184576.0, 1e-6); // 185498 / 184576 - 1 = 0.0049952
  // A US symbol: no limits; prev close from the snapshot (BookTop::prev_close).
  BookTop g = make_book({{57990, 1}}, {{58010, 1}}, 58000);
  g.prev_close = 58580;
  r = fe.on_event(at(EventKind::kSnapshot, us, kS), g);
  EXPECT_EQ(r[kDistLimitUp], 0.f);
  EXPECT_EQ(r[kDistLimitDown], 0.f);
  EXPECT_NEAR(r[kRetFromPrevClose], 58000.0 / 58580.0 - 1, 1e-6);  // -0.0099010
}

TEST_F(FeatureGolden, TradeFlowImbalanceOverTenSeconds) {
  FeatureEngine fe(symbols, opts);
  const BookTop b = mid_book(1000);
  fe.on_event(trade_at(us, 0, 1000, 500, Side::kSell), b);          // second 0: drops out at 10
  fe.on_event(trade_at(us, 5 * kS, 1000, 300, Side::kBuy), b);
  fe.on_event(trade_at(us, 8 * kS, 1000, 100, Side::kSell), b);
  Event x = at(EventKind::kOrderExecute, us, 9 * kS);               // resting buy hit: sell aggressor
  x.order = OrderBody{7, 999, 100, Side::kBuy};
  fe.on_event(x, b);
  const float* r = fe.on_event(trade_at(us, 10 * kS, 1000, 50, Side::kNone), b);  // auction: neither side
  // window 1-10: buys 300, sells 100 + 100 → (300 - 200) / 500 = 0.2
  EXPECT_NEAR(r[kTradeFlowImbalance], 0.2, 1e-6);
  EXPECT_EQ(fe.trades(us).last_qty, 50);
  EXPECT_EQ(fe.trades(us).day_low, 999);
}

TEST_F(FeatureGolden, LargeTradeRatioCountsWholeAggressiveOrders) {
  FeatureEngine fe(symbols, opts);  // large: notional >= 1,000,000 CNY
  const BookTop b = mid_book(180000);
  // Order 77 sweeps 300 + 300 at 1800.00: 540,000 each, 1,080,000 together → large (600 shares).
  fe.on_event(trade_at(sh, 5 * kS, 180000, 300, Side::kBuy, 77), b);
  fe.on_event(trade_at(sh, 5 * kS, 180000, 300, Side::kBuy, 77), b);
  // Another order of 200 (360,000): not large.
  const float* r = fe.on_event(trade_at(sh, 6 * kS, 180000, 200, Side::kBuy, 78), b);
  EXPECT_NEAR(r[kLargeTradeRatio], 600.0 / 800.0, 1e-6);
  EXPECT_EQ(fe.trades(sh).order_qty, 200);
  // 61 s later the large order has left the 60 s window: 0 / 200.
  r = fe.on_event(trade_at(sh, 66 * kS, 180000, 200, Side::kSell, 79), b);
  EXPECT_NEAR(r[kLargeTradeRatio], 0.0, 1e-6);
  // A quantity threshold, when set, also qualifies.
  opts.large_trade_qty = 100;
  FeatureEngine fq(symbols, opts);
  r = fq.on_event(trade_at(sh, kS, 1000, 100, Side::kBuy), b);
  EXPECT_NEAR(r[kLargeTradeRatio], 1.0, 1e-6);
}

TEST_F(FeatureGolden, DepthChangeOverTenSeconds) {
  FeatureEngine fe(symbols, opts);
  // Top-5 depth 100 (50 + 50) in second 0; at second 12 the reference is the close of second 2
  // (carried: 100): 150 → ln(1.5) = 0.405465; 105 → ln(1.05) = 0.048790.
  fe.on_event(at(EventKind::kSnapshot, us, 0), make_book({{99, 50}}, {{101, 50}}));
  const float* r = fe.on_event(at(EventKind::kSnapshot, us, 12 * kS), make_book({{99, 100}}, {{101, 50}}));
  EXPECT_NEAR(r[kDepthChange], 0.405465, 1e-5);
  r = fe.on_event(at(EventKind::kSnapshot, us, 12 * kS + 1), make_book({{99, 55}}, {{101, 50}}));
  EXPECT_NEAR(r[kDepthChange], 0.048790, 1e-5);
}

TEST(FeatureWindowTest, RowsPerIntervalCarryForwardAndCap) {
  SymbolTable symbols;
  const SymbolId s = symbols.intern("GOOG");
  FeatureOptions opts;
  opts.window_rows = 5;
  FeatureEngine fe(symbols, opts);
  auto spread_book = [](Price spread) { return make_book({{1000, 1}}, {{1000 + spread, 1}}); };
  fe.on_event(at(EventKind::kSnapshot, s, kS / 2), spread_book(1));       // row 0
  EXPECT_EQ(fe.window(s).window_size(), 0);
  fe.on_event(at(EventKind::kSnapshot, s, kS + kS / 5), spread_book(2));  // row 1: row 0 closed
  EXPECT_EQ(fe.window(s).window_size(), 1);
  fe.on_event(at(EventKind::kSnapshot, s, 4 * kS + kS / 2), spread_book(3));  // rows 1, 2, 3 closed
  float rows[FeatureWindow::kMaxRows * kFeatureCount];
  ASSERT_EQ(fe.window(s).window_rows(rows), 4);
  const float want[] = {1, 2, 2, 2};  // rows 2 and 3 carry row 1 forward
  for (int k = 0; k < 4; ++k) EXPECT_EQ(rows[k * kFeatureCount + kSpreadTicks], want[k]) << k;
  fe.on_event(at(EventKind::kSnapshot, s, 20 * kS), spread_book(4));  // 16 intervals: capped at T = 5
  ASSERT_EQ(fe.window(s).window_rows(rows), 5);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(rows[k * kFeatureCount + kSpreadTicks], 3.f) << k;
  EXPECT_EQ(fe.window(12345).window_size(), 0);
}

TEST(FeatureOptionsTest, FromConfigReadsAndValidates) {
  Config c = Config::parse("[features]\nwindow_rows = 60\nlarge_trade_notional = 500000.0\nlarge_trade_qty = 10000\n");
  const FeatureOptions o = FeatureOptions::from_config(c.section("features"));
  EXPECT_EQ(o.window_rows, 60);
  EXPECT_DOUBLE_EQ(o.large_trade_notional, 500000.0);
  EXPECT_EQ(o.large_trade_qty, 10000);
  EXPECT_EQ(o.row_interval_ns, 1'000'000'000);
  Config bad = Config::parse("[features]\nwindow_rows = 500\n");
  EXPECT_THROW(FeatureOptions::from_config(bad.section("features")), ConfigError);
}

TEST(FeaturePerf, RandomStreamThroughBookAndFeatures) {
  // Logs ns/event for BookSet + FeatureEngine over a long random stream (no assertion on time).
  SymbolTable symbols;
  std::vector<SymbolId> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(symbols.intern("6000" + std::to_string(10 + i) + ".SH"));
  BookSet books(symbols);
  FeatureEngine fe(symbols, FeatureOptions{});
  InputErrors errors;
  errors.set_quiet(true);
  std::mt19937_64 rng(3);
  std::vector<Event> events;
  const int n = 200'000;
  events.reserve(n);
  std::vector<std::vector<uint64_t>> live(ids.size());
  uint64_t next_id = 1;
  int64_t ts = 34200 * kS;
  for (int i = 0; i < n; ++i) {
    ts += int64_t(rng() % 2000) * 1000;  // ~1 ms apart on average
    const size_t k = rng() % ids.size();
    Event e;
    const int pick = int(rng() % 10);
    if (live[k].size() < 50 || pick < 5) {
      const bool bid = rng() & 1;
      const Price off = Price(std::geometric_distribution<int>(0.3)(rng));
      e = at(EventKind::kOrderAdd, ids[k], ts);
      e.order = OrderBody{next_id, bid ? 10000 - off : 10001 + off, 100 * Qty(1 + rng() % 5), bid ? Side::kBuy : Side::kSell};
      live[k].push_back(next_id++);
    } else if (pick < 8) {
      const size_t j = rng() % live[k].size();
      e = at(EventKind::kOrderCancel, ids[k], ts);
      e.order = OrderBody{live[k][j], 0, 0, Side::kNone};
      live[k][j] = live[k].back();
      live[k].pop_back();
    } else {
      e = trade_at(ids[k], ts, 10000, 100, rng() & 1 ? Side::kBuy : Side::kSell, 0);
    }
    events.push_back(e);
  }
  double book_ns = 0, total_ns = 0;
  {
    BookSet b2(symbols);
    const auto t0 = std::chrono::steady_clock::now();
    for (const Event& e : events) (void)b2.apply(e, errors);
    book_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
  float sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Event& e : events) {
    (void)books.apply(e, errors);
    sink += fe.on_event(e, books.top(e.symbol))[kImbalance1];
  }
  total_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[perf] book %.1f ns/event, book+features %.1f ns/event, features %.1f ns/event (%d events, 8 symbols) %g\n",
              book_ns / n, total_ns / n, (total_ns - book_ns) / n, n, double(sink) * 0);
  EXPECT_EQ(errors.total(), 0u);
}

}  // namespace
}  // namespace ts
