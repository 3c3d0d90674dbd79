// BookSet on hand-made events: L3 add/cancel/execute, level aggregation, top-10 truncation,
// deep books, snapshot vs L3 precedence, crossed snapshots, SSE-style trades, unknown orders.
#include "book/book_set.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

namespace ts {
namespace {

Event add(SymbolId s, uint64_t id, Side side, Price px, Qty qty, uint64_t seq = 0) {
  Event e = Event::make(EventKind::kOrderAdd);
  e.symbol = s;
  e.seq = seq;
  e.order = OrderBody{id, px, qty, side};
  return e;
}
Event cancel(SymbolId s, uint64_t id, Side side, Price px, Qty qty, uint64_t seq = 0) {
  Event e = add(s, id, side, px, qty, seq);
  e.kind = EventKind::kOrderCancel;
  return e;
}
Event execute(SymbolId s, uint64_t id, Side side, Price px, Qty qty) {
  Event e = add(s, id, side, px, qty);
  e.kind = EventKind::kOrderExecute;
  return e;
}
Event trade(SymbolId s, Price px, Qty qty, Side aggressor, uint64_t buy_no, uint64_t sell_no) {
  Event e = Event::make(EventKind::kTrade);
  e.symbol = s;
  e.trade = TradeBody{px, qty, aggressor, buy_no, sell_no};
  return e;
}
Event snapshot(SymbolId s, std::initializer_list<Level> bids, std::initializer_list<Level> asks,
               Phase phase = Phase::kContinuous, uint64_t seq = 0) {
  Event e = Event::make(EventKind::kSnapshot);
  e.symbol = s;
  e.seq = seq;
  int i = 0;
  for (const Level& l : bids) e.snapshot.bids[i++] = l;
  i = 0;
  for (const Level& l : asks) e.snapshot.asks[i++] = l;
  e.snapshot.phase = phase;
  return e;
}

class BookSetTest : public ::testing::Test {
 protected:
  BookSetTest() {
    us = symbols.intern("GOOG");
    sh = symbols.intern("600519.SH");
    errors.set_quiet(true);
  }
  SymbolTable symbols;
  SymbolId us = 0, sh = 0;
  InputErrors errors;
};

TEST_F(BookSetTest, AddsAggregateByPriceLevelBestFirst) {
  BookSet books(symbols);
  ASSERT_TRUE(books.apply(add(us, 1, Side::kBuy, 100, 10), errors));
  ASSERT_TRUE(books.apply(add(us, 2, Side::kBuy, 100, 5), errors));
  ASSERT_TRUE(books.apply(add(us, 3, Side::kBuy, 99, 7), errors));
  ASSERT_TRUE(books.apply(add(us, 4, Side::kBuy, 101, 1), errors));
  ASSERT_TRUE(books.apply(add(us, 5, Side::kSell, 103, 4), errors));
  ASSERT_TRUE(books.apply(add(us, 6, Side::kSell, 102, 2), errors));
  const BookTop& t = books.top(us);
  ASSERT_EQ(t.bid_levels, 3);
  ASSERT_EQ(t.ask_levels, 2);
  EXPECT_EQ(t.bids[0].price, 101);
  EXPECT_EQ(t.bids[0].qty, 1);
  EXPECT_EQ(t.bids[1].price, 100);
  EXPECT_EQ(t.bids[1].qty, 15);  // 10 + 5 aggregated
  EXPECT_EQ(t.bids[2].price, 99);
  EXPECT_EQ(t.asks[0].price, 102);
  EXPECT_EQ(t.asks[1].price, 103);
  EXPECT_EQ(t.bids[3].price, 0);  // unused levels are {0, 0}
  EXPECT_EQ(errors.total(), 0u);
}

TEST_F(BookSetTest, CancelAndExecuteReduceLevelsAndExecutePrints) {
  BookSet books(symbols);
  ASSERT_TRUE(books.apply(add(us, 1, Side::kBuy, 100, 10), errors));
  ASSERT_TRUE(books.apply(add(us, 2, Side::kBuy, 100, 5), errors));
  ASSERT_TRUE(books.apply(add(us, 3, Side::kSell, 105, 8), errors));
  ASSERT_TRUE(books.apply(cancel(us, 1, Side::kBuy, 100, 4), errors));  // partial
  EXPECT_EQ(books.top(us).bids[0].qty, 11);
  ASSERT_TRUE(books.apply(execute(us, 3, Side::kSell, 105, 3), errors));
  EXPECT_EQ(books.top(us).asks[0].qty, 5);
  EXPECT_EQ(books.top(us).last, 105);
  EXPECT_EQ(books.top(us).cum_volume, 3);
  EXPECT_DOUBLE_EQ(books.top(us).cum_turnover, 105 * 0.01 * 3);
  ASSERT_TRUE(books.apply(cancel(us, 3, Side::kSell, 105, 5), errors));  // level gone
  EXPECT_EQ(books.top(us).ask_levels, 0);
  ASSERT_TRUE(books.apply(cancel(us, 1, Side::kBuy, 100, 11), errors));
  EXPECT_EQ(books.top(us).bid_levels, 0);
  EXPECT_FALSE(books.top(us).has_bbo());
}

TEST_F(BookSetTest, TopTenTruncatesAndDeepLevelsComeIntoView) {
  BookSet books(symbols);
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(books.apply(add(us, 100 + i, Side::kSell, 200 + i, 1 + i), errors));
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(books.apply(add(us, 200 + i, Side::kBuy, 199 - i, 1 + i), errors));
  const BookTop& t = books.top(us);
  EXPECT_EQ(t.ask_levels, 10);
  EXPECT_EQ(t.bid_levels, 10);
  EXPECT_EQ(books.ask_depth(us), 25u);
  EXPECT_EQ(t.asks[9].price, 209);
  EXPECT_EQ(t.bids[9].price, 190);
  // Remove the best ask: level 11 (price 210, qty 11) becomes the 10th.
  ASSERT_TRUE(books.apply(cancel(us, 100, Side::kSell, 200, 1), errors));
  EXPECT_EQ(t.asks[0].price, 201);
  EXPECT_EQ(t.asks[9].price, 210);
  EXPECT_EQ(t.asks[9].qty, 11);
  // A change deep in the book (level 20) does not disturb the top, but is kept.
  ASSERT_TRUE(books.apply(cancel(us, 0, Side::kBuy, 180, 5), errors));
  EXPECT_EQ(books.qty_at(us, Side::kBuy, 180), 20 - 5);
  EXPECT_EQ(t.bids[0].price, 199);
}

TEST_F(BookSetTest, DeepRandomBookMatchesReferenceMap) {
  // Full-depth book against std::map on random adds/cancels far from and near the touch.
  BookSet books(symbols);
  std::map<Price, Qty> bids, asks;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const bool bid = rng() & 1;
    const Price px = bid ? 1000 - Price(rng() % 300) : 1001 + Price(rng() % 300);
    auto& ref = bid ? bids : asks;
    const Side side = bid ? Side::kBuy : Side::kSell;
    if ((rng() % 3) != 0 || ref.count(px) == 0) {
      const Qty q = 1 + Qty(rng() % 50);
      ASSERT_TRUE(books.apply(add(us, 0, side, px, q), errors));
      ref[px] += q;
    } else {
      const Qty q = 1 + Qty(rng() % 60);
      ASSERT_TRUE(books.apply(cancel(us, 0, side, px, q), errors));
      if ((ref[px] -= q) <= 0) ref.erase(px);
    }
  }
  ASSERT_EQ(books.bid_depth(us), bids.size());
  ASSERT_EQ(books.ask_depth(us), asks.size());
  for (auto& [px, q] : bids) ASSERT_EQ(books.qty_at(us, Side::kBuy, px), q) << px;
  for (auto& [px, q] : asks) ASSERT_EQ(books.qty_at(us, Side::kSell, px), q) << px;
  const BookTop& t = books.top(us);
  auto bit = bids.rbegin();
  for (int k = 0; k < t.bid_levels; ++k, ++bit) ASSERT_EQ(t.bids[k].price, bit->first);
  auto ait = asks.begin();
  for (int k = 0; k < t.ask_levels; ++k, ++ait) ASSERT_EQ(t.asks[k].price, ait->first);
}

TEST_F(BookSetTest, TopTenMatchesReferenceAfterEveryEventAndVersionTracksChanges) {
  // The top is updated in place (qty change, insert/erase shift); after EVERY event it must equal
  // the reference book's 10 best levels (prices, sizes, zero-filled tail, level counts), and
  // levels_version must change exactly when the top levels changed.
  BookSet books(symbols);
  std::map<Price, Qty> bids, asks;
  std::mt19937_64 rng(11);
  BookTop prev = books.top(us);
  for (int i = 0; i < 30000; ++i) {
    const bool bid = rng() & 1;
    const Price off = Price(std::geometric_distribution<int>(0.15)(rng));  // mostly within 10 levels
    const Price px = bid ? 1000 - off : 1001 + off;
    auto& ref = bid ? bids : asks;
    const Side side = bid ? Side::kBuy : Side::kSell;
    if ((rng() % 2) != 0 || ref.count(px) == 0) {
      const Qty q = 1 + Qty(rng() % 50);
      ASSERT_TRUE(books.apply(add(us, 0, side, px, q), errors));
      ref[px] += q;
    } else {
      const Qty q = 1 + Qty(rng() % 60);
      ASSERT_TRUE(books.apply((rng() & 1) ? cancel(us, 0, side, px, q) : execute(us, 0, side, px, q), errors));
      if ((ref[px] -= q) <= 0) ref.erase(px);
    }
    const BookTop& t = books.top(us);
    ASSERT_EQ(t.bid_levels, int(std::min<size_t>(bids.size(), kBookLevels))) << i;
    ASSERT_EQ(t.ask_levels, int(std::min<size_t>(asks.size(), kBookLevels))) << i;
    auto bit = bids.rbegin();
    for (int k = 0; k < kBookLevels; ++k) {
      const Level want = bit != bids.rend() ? Level{bit->first, bit->second} : Level{};
      ASSERT_EQ(t.bids[k].price, want.price) << i << " bid " << k;
      ASSERT_EQ(t.bids[k].qty, want.qty) << i << " bid " << k;
      if (bit != bids.rend()) ++bit;
    }
    auto ait = asks.begin();
    for (int k = 0; k < kBookLevels; ++k) {
      const Level want = ait != asks.end() ? Level{ait->first, ait->second} : Level{};
      ASSERT_EQ(t.asks[k].price, want.price) << i << " ask " << k;
      ASSERT_EQ(t.asks[k].qty, want.qty) << i << " ask " << k;
      if (ait != asks.end()) ++ait;
    }
    const bool same = std::memcmp(prev.bids, t.bids, sizeof t.bids) == 0 &&
                      std::memcmp(prev.asks, t.asks, sizeof t.asks) == 0;
    ASSERT_NE(t.levels_version, 0u);
    if (same) {
      ASSERT_EQ(t.levels_version, prev.levels_version) << i;
    } else {
      ASSERT_NE(t.levels_version, prev.levels_version) << i;
    }
    prev = t;
  }
}

TEST_F(BookSetTest, SnapshotReplacesL2LevelsAndTotals) {
  BookSet books(symbols);
  Event s = snapshot(us, {{100, 5}, {99, 6}}, {{101, 7}});
  s.snapshot.last = 100;
  s.snapshot.cum_volume = 1234;
  s.snapshot.prev_close = 98;
  ASSERT_TRUE(books.apply(s, errors));
  const BookTop& t = books.top(us);
  EXPECT_EQ(t.bid_levels, 2);
  EXPECT_EQ(t.bids[1].qty, 6);
  EXPECT_EQ(t.last, 100);
  EXPECT_EQ(t.cum_volume, 1234);
  EXPECT_EQ(t.prev_close, 98);
  EXPECT_EQ(t.phase, Phase::kContinuous);
  ASSERT_TRUE(books.apply(snapshot(us, {{97, 1}}, {{102, 2}, {103, 3}}), errors));
  EXPECT_EQ(t.bid_levels, 1);
  EXPECT_EQ(t.bids[0].price, 97);
  EXPECT_EQ(t.ask_levels, 2);
  EXPECT_EQ(t.bids[1].price, 0);
}

TEST_F(BookSetTest, SnapshotBeforeL3SeedsLevelsAfterL3OnlyTotals) {
  BookSet books(symbols);
  // LOBSTER: one snapshot (book before the first message), then order flow.
  ASSERT_TRUE(books.apply(snapshot(us, {{100, 50}}, {{102, 40}}), errors));
  ASSERT_TRUE(books.apply(add(us, 1, Side::kBuy, 101, 10), errors));
  ASSERT_TRUE(books.apply(cancel(us, 9, Side::kBuy, 100, 20), errors));  // anonymous seed depth
  EXPECT_EQ(books.top(us).bids[0].price, 101);
  EXPECT_EQ(books.top(us).bids[1].qty, 30);
  // A later (lagging) snapshot must not overwrite the L3 levels, only the totals/phase.
  Event late = snapshot(us, {{90, 1}}, {{95, 1}}, Phase::kClosingAuction);
  late.snapshot.cum_volume = 777;
  late.snapshot.last = 99;
  ASSERT_TRUE(books.apply(late, errors));
  const BookTop& t = books.top(us);
  EXPECT_EQ(t.bids[0].price, 101);
  EXPECT_EQ(t.asks[0].price, 102);
  EXPECT_EQ(t.cum_volume, 777);
  EXPECT_EQ(t.last, 99);
  EXPECT_EQ(t.phase, Phase::kClosingAuction);
}

Event resync(SymbolId s, std::initializer_list<Level> bids, std::initializer_list<Level> asks, uint64_t seq = 0) {
  Event e = snapshot(s, bids, asks, Phase::kUnknown, seq);
  e.snapshot.resync = 1;
  return e;
}

TEST_F(BookSetTest, ResyncSnapshotAfterL3ReplacesLevelsWithinItsDepthKeepsDeeperOnes) {
  BookSet books(symbols);
  ASSERT_TRUE(books.apply(snapshot(us, {{100, 50}, {99, 10}}, {{102, 40}, {103, 5}}), errors));
  ASSERT_TRUE(books.apply(add(us, 1, Side::kBuy, 101, 10), errors));
  ASSERT_TRUE(books.apply(add(us, 2, Side::kBuy, 95, 7), errors));   // deep bid
  ASSERT_TRUE(books.apply(add(us, 3, Side::kSell, 110, 8), errors));  // deep ask
  Event halt = Event::make(EventKind::kStatus);
  halt.symbol = us;
  halt.status.phase = Phase::kHalted;
  ASSERT_TRUE(books.apply(halt, errors));
  // The vendor's book, 2 levels a side: 101 is gone, 100 holds 60, 98×3 appeared (it was below
  // the view); asks 102×40 and 104×9 (103 went away unseen). Everything at or better than the
  // snapshot's worst level (bid 98, ask 104) is replaced; 95 and 110 lie beyond it and stay.
  ASSERT_TRUE(books.apply(resync(us, {{100, 60}, {98, 3}}, {{102, 40}, {104, 9}}), errors));
  const BookTop& t = books.top(us);
  ASSERT_EQ(t.bid_levels, 3);
  EXPECT_EQ(t.bids[0].price, 100);
  EXPECT_EQ(t.bids[0].qty, 60);
  EXPECT_EQ(t.bids[1].price, 98);
  EXPECT_EQ(t.bids[1].qty, 3);
  EXPECT_EQ(t.bids[2].price, 95);
  EXPECT_EQ(books.qty_at(us, Side::kBuy, 99), 0) << "99 lies within the snapshot's depth: gone";
  ASSERT_EQ(t.ask_levels, 3);
  EXPECT_EQ(t.asks[0].price, 102);
  EXPECT_EQ(t.asks[1].price, 104);
  EXPECT_EQ(t.asks[1].qty, 9);
  EXPECT_EQ(t.asks[2].price, 110);
  EXPECT_EQ(t.phase, Phase::kHalted) << "a resync without a phase keeps the phase";
  // The re-seeded levels are anonymous depth the flow keeps working on.
  ASSERT_TRUE(books.apply(cancel(us, 9, Side::kBuy, 100, 60), errors));
  EXPECT_EQ(books.top(us).bids[0].price, 98);
  // An empty side in a resync snapshot empties the side (any depth shows the best level).
  ASSERT_TRUE(books.apply(resync(us, {{98, 3}}, {}), errors));
  EXPECT_EQ(books.top(us).ask_levels, 0);
  EXPECT_EQ(books.ask_depth(us), 0u);
  EXPECT_EQ(books.top(us).bids[1].price, 95) << "deeper bid kept";
  EXPECT_EQ(errors.total(), 0u);
}

TEST_F(BookSetTest, OrdinarySnapshotAfterL3LeavesLevelsResyncDoesNot) {
  BookSet books(symbols);
  ASSERT_TRUE(books.apply(snapshot(us, {{100, 50}}, {{102, 40}}), errors));
  ASSERT_TRUE(books.apply(add(us, 1, Side::kBuy, 101, 10), errors));
  ASSERT_TRUE(books.apply(snapshot(us, {{99, 1}}, {{103, 1}}), errors));
  EXPECT_EQ(books.top(us).bids[0].price, 101);
  ASSERT_TRUE(books.apply(resync(us, {{99, 1}}, {{103, 1}}), errors));
  EXPECT_EQ(books.top(us).bids[0].price, 99);
  EXPECT_EQ(books.top(us).asks[0].price, 103);
  EXPECT_EQ(books.bid_depth(us), 1u);
  // A crossed resync is rejected and counted like any snapshot; the book stays.
  EXPECT_FALSE(books.apply(resync(us, {{104, 1}}, {{103, 1}}, 7), errors));
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 1u);
  EXPECT_EQ(books.top(us).bids[0].price, 99);
}

TEST_F(BookSetTest, CrossedSnapshotRejectedAndCountedBookUnchanged) {
  BookSet books(symbols);
  ASSERT_TRUE(books.apply(snapshot(us, {{100, 5}}, {{101, 5}}), errors));
  EXPECT_FALSE(books.apply(snapshot(us, {{102, 5}}, {{101, 5}}, Phase::kContinuous, 42), errors));
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 1u);
  EXPECT_EQ(books.top(us).bids[0].price, 100);
  EXPECT_EQ(books.top(us).asks[0].price, 101);
  // Locked (bid == ask) counts as crossed too; in a call auction a crossed book is legitimate.
  EXPECT_FALSE(books.apply(snapshot(us, {{101, 5}}, {{101, 5}}), errors));
  EXPECT_TRUE(books.apply(snapshot(us, {{102, 5}}, {{101, 5}}, Phase::kOpeningAuction), errors));
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 2u);
  EXPECT_EQ(books.top(us).bids[0].price, 102);
}

TEST_F(BookSetTest, CrossingL3AddCountedOutsideAuctionsOnly) {
  BookSet books(symbols);
  Event st = Event::make(EventKind::kStatus);
  st.symbol = us;
  st.status.phase = Phase::kOpeningAuction;
  ASSERT_TRUE(books.apply(st, errors));
  ASSERT_TRUE(books.apply(add(us, 1, Side::kSell, 100, 5), errors));
  ASSERT_TRUE(books.apply(add(us, 2, Side::kBuy, 101, 5), errors));  // auction: crossed is normal
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 0u);
  st.status.phase = Phase::kContinuous;
  ASSERT_TRUE(books.apply(st, errors));
  ASSERT_TRUE(books.apply(add(us, 3, Side::kBuy, 102, 5), errors));
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 1u);
  EXPECT_EQ(books.top(us).bids[0].price, 102);  // kept: later messages refer to it
}

TEST_F(BookSetTest, SseTradeReducesRestingOrdersByNumber) {
  BookSet books(symbols);  // 600519.SH: order tracking on (auto)
  ASSERT_TRUE(books.apply(add(sh, 11, Side::kSell, 180000, 300), errors));
  ASSERT_TRUE(books.apply(add(sh, 12, Side::kSell, 180000, 200), errors));
  ASSERT_TRUE(books.apply(add(sh, 13, Side::kBuy, 179900, 100), errors));
  EXPECT_EQ(books.tracked_orders(sh), 3u);
  // Aggressive buy order 99 (not yet published) takes 300 from order 11 and 100 from order 12.
  ASSERT_TRUE(books.apply(trade(sh, 180000, 300, Side::kBuy, 99, 11), errors));
  ASSERT_TRUE(books.apply(trade(sh, 180000, 100, Side::kBuy, 99, 12), errors));
  EXPECT_EQ(errors.total(), 0u);  // order 99 unknown: normal, not an error
  EXPECT_EQ(books.top(sh).asks[0].qty, 100);
  EXPECT_EQ(books.tracked_orders(sh), 2u);  // 11 fully filled and gone
  EXPECT_EQ(books.top(sh).last, 180000);
  EXPECT_EQ(books.top(sh).cum_volume, 400);
  // SSE delete names the order; no price needed.
  ASSERT_TRUE(books.apply(cancel(sh, 12, Side::kNone, 0, 100), errors));
  EXPECT_EQ(books.top(sh).ask_levels, 0);
  ASSERT_TRUE(books.apply(cancel(sh, 13, Side::kNone, 0, 0), errors));  // qty 0: whole order
  EXPECT_EQ(books.top(sh).bid_levels, 0);
  EXPECT_EQ(books.tracked_orders(sh), 0u);
}

TEST_F(BookSetTest, UnknownOrderCancelWithoutPriceCounted) {
  BookSet books(symbols);
  ASSERT_TRUE(books.apply(add(sh, 1, Side::kBuy, 100, 10), errors));
  EXPECT_FALSE(books.apply(cancel(sh, 777, Side::kNone, 0, 10, 55), errors));
  EXPECT_EQ(errors.count(InputError::kUnknownOrder), 1u);
  EXPECT_EQ(books.top(sh).bids[0].qty, 10);
  // LOBSTER-style (no tracking): unknown id but price+side given → applied to the level.
  ASSERT_TRUE(books.apply(add(us, 1, Side::kBuy, 100, 10), errors));
  EXPECT_TRUE(books.apply(cancel(us, 12345, Side::kBuy, 100, 4), errors));
  EXPECT_EQ(books.top(us).bids[0].qty, 6);
  EXPECT_FALSE(books.apply(cancel(us, 12345, Side::kNone, 0, 4), errors));
  EXPECT_EQ(errors.count(InputError::kUnknownOrder), 2u);
}

TEST_F(BookSetTest, RejectsBadAddsAndSurvivesUnseenSymbols) {
  BookSet books(symbols);
  EXPECT_FALSE(books.apply(add(us, 1, Side::kBuy, 0, 10), errors));
  EXPECT_FALSE(books.apply(add(us, 1, Side::kBuy, 10, 0), errors));
  EXPECT_EQ(errors.count(InputError::kBadPrice), 1u);
  EXPECT_EQ(errors.count(InputError::kBadSize), 1u);
  EXPECT_EQ(books.top(us).bid_levels, 0);
  EXPECT_EQ(books.top(12345).bid_levels, 0);  // never seen: empty book
}

TEST_F(BookSetTest, PerfRandomL3NearTouch) {
  // Logs ns/event for a long random stream concentrated near the touch (no assertion on time).
  BookSet books(symbols);
  std::mt19937_64 rng(1);
  std::vector<Event> events;
  events.reserve(200'000);
  std::vector<uint64_t> live;  // order ids resting
  uint64_t next_id = 1;
  for (int i = 0; i < 200'000; ++i) {
    if (live.size() < 500 || rng() % 2) {
      const bool bid = rng() & 1;
      const Price off = Price(std::geometric_distribution<int>(0.3)(rng));
      const Price px = bid ? 10000 - off : 10001 + off;
      events.push_back(add(sh, next_id++, bid ? Side::kBuy : Side::kSell, px, 100));
      live.push_back(next_id - 1);
    } else {
      const size_t k = rng() % live.size();
      events.push_back(cancel(sh, live[k], Side::kNone, 0, 100));
      live[k] = live.back();
      live.pop_back();
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (const Event& e : events) (void)books.apply(e, errors);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[perf] BookSet::apply: %.1f ns/event over %zu L3 events (SSE-style, order map on)\n",
              ns / double(events.size()), events.size());
  EXPECT_EQ(errors.total(), 0u);
}

}  // namespace
}  // namespace ts
