// Book reconstruction against the exchange's snapshots: rebuild 600519.SH (2023-02-01) from the
// SSE entrust (order add/delete) and trade files, and compare best bid/ask with every
// continuous-trading snapshot (09:30-11:30, 13:00-14:57 Shanghai time). Snapshots lag the
// order flow by up to ~1 s, so a snapshot stamped T matches when the rebuilt book showed the
// same best bid and ask at some instant within 1 s of T (in this file the flow that a snapshot
// reflects is stamped up to ~1 s after the snapshot).
#include <gtest/gtest.h>

#include <cstdio>
#include <algorithm>
#include <vector>

#include "book/book_set.h"
#include "core/clock.h"
#include "ingest/sse_source.h"
#include "test_data.h"

namespace ts {
namespace {

struct Touch {
  int64_t ts_ns;
  Level bid, ask;
};

bool in_continuous(int64_t ts_ns, int64_t midnight) {
  const int64_t t = ts_ns - midnight;
  auto hm = [](int h, int m) { return (int64_t(h) * 3600 + int64_t(m) * 60) * kNsPerSec; };
  return (t >= hm(9, 30) && t < hm(11, 30)) || (t >= hm(13, 0) && t < hm(14, 57));
}

TEST(SseRebuild, Moutai600519BestBidAskMatchesSnapshotsWithinOneSecond) {
  TS_REQUIRE_DATA(ts::testing::sse_day_dir());
  SymbolTable symbols;
  InputErrors src_errors, book_errors;
  book_errors.set_quiet(true);
  auto src = make_sse_source(ts::testing::sse_day_dir().string(), symbols, src_errors);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const int64_t midnight = midnight_ns(2023, 2, 1, 8);

  BookSet books(symbols);
  std::vector<Touch> touches;      // rebuilt touch after each instant's order/trade events
  std::vector<Touch> snaps;        // continuous-trading snapshots' touch
  uint64_t flow_events = 0;
  std::vector<Event> batch(4096);
  while (size_t n = src.value()->next_batch(batch)) {
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      (void)books.apply(e, book_errors);
      if (e.kind != EventKind::kSnapshot) {
        ++flow_events;
        const BookTop& t = books.top(e.symbol);
        if (!touches.empty() && touches.back().ts_ns == e.exch_ts_ns) touches.pop_back();  // keep the instant's last state
        touches.push_back(Touch{e.exch_ts_ns, t.bids[0], t.asks[0]});
      } else if (in_continuous(e.exch_ts_ns, midnight)) {
        snaps.push_back(Touch{e.exch_ts_ns, e.snapshot.bids[0], e.snapshot.asks[0]});
      }
    }
  }
  // A snapshot stamped T matches when the rebuilt touch equalled it at some instant of
  // [T - before, T + after]: the state holding at T - before, or any state set inside.
  auto match_rate = [&](int64_t before_ns, int64_t after_ns, bool with_size) {
    uint64_t hits = 0;
    for (const Touch& s : snaps) {
      auto it = std::upper_bound(touches.begin(), touches.end(), s.ts_ns - before_ns,
                                 [](int64_t t, const Touch& x) { return t < x.ts_ns; });
      if (it != touches.begin()) --it;
      for (; it != touches.end() && it->ts_ns <= s.ts_ns + after_ns; ++it) {
        if (it->bid.price == s.bid.price && it->ask.price == s.ask.price &&
            (!with_size || (it->bid.qty == s.bid.qty && it->ask.qty == s.ask.qty))) {
          ++hits;
          break;
        }
      }
    }
    return double(hits) / double(snaps.size());
  };
  const uint64_t snapshots = snaps.size();
  const double px_lag = match_rate(kNsPerSec, 0, false), px_qty_lag = match_rate(kNsPerSec, 0, true);
  const double px_lead = match_rate(0, kNsPerSec, false), px_qty_lead = match_rate(0, kNsPerSec, true);
  const double px_pm = match_rate(kNsPerSec, kNsPerSec, false), px_qty_pm = match_rate(kNsPerSec, kNsPerSec, true);
  std::printf("[rebuild] 600519.SH: %llu order/trade events, %llu continuous snapshots; best bid/ask "
              "match within [T-1s, T]: price %.5f, price+size %.5f; within [T-1s, T+1s]: price %.5f, "
              "price+size %.5f; within [T, T+1s]: price %.5f, price+size %.5f; book errors %llu\n",
              static_cast<unsigned long long>(flow_events), static_cast<unsigned long long>(snapshots),
              px_lag, px_qty_lag, px_pm, px_qty_pm, px_lead, px_qty_lead, static_cast<unsigned long long>(book_errors.total()));
  for (auto& [k, v] : book_errors.by_kind()) std::printf("[rebuild] book error %s: %llu\n", k.c_str(), (unsigned long long)v);
  ASSERT_GT(snapshots, 4000u);
  // Measured: [T-1s, T+1s] 1.00000 / 1.00000; [T, T+1s] 0.99958 / 0.99895; [T-1s, T] only
  // 0.739 / 0.516 -- the snapshot stamped T shows flow stamped up to ~1 s AFTER T.
  EXPECT_GE(px_pm, 0.999);
  EXPECT_GE(px_qty_pm, 0.999);
  EXPECT_GE(px_lead, 0.99);
  EXPECT_GE(px_qty_lead, 0.99);
  EXPECT_EQ(book_errors.total(), 0u);
}

}  // namespace
}  // namespace ts
