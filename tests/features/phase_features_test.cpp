// Features that know the trading phase, on the real SSE Level-2 day of 600519 (2023-02-01,
// ../shared/data/sse-l2): the 09:25 auction match and the 13:00 reopen give no return jump and no
// volume spike by themselves; the feed's TRADE through the 09:25 pause and the lunch break is
// refined by the schedule, its disagreements counted; the volume profile survives a state file
// and judges a busy opening against the time of day. Integration: skips without the data.
// The simulator's call auctions (no data needed) go through the same book and features: its
// indicative snapshots and auction matches are never trades, returns or volume.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <vector>

#include "book/book_set.h"
#include "book/phase_resolver.h"
#include "core/civil_time.h"
#include "core/market_calendars.h"
#include "features/feature_engine.h"
#include "ingest/sim/simulator.h"
#include "ingest/sse_source.h"
#include "test_data.h"

namespace ts {
namespace {

constexpr int64_t kS = 1'000'000'000;

// Shanghai wall clock (seconds of the day) of UTC ns.
int64_t local_sod(int64_t ts_ns) { return ((ts_ns / kS + 8 * 3600) % 86400 + 86400) % 86400; }
constexpr int64_t hms(int h, int m, int s = 0) { return h * 3600 + m * 60 + s; }

struct Replay {
  SymbolTable symbols;
  MarketCalendars cals;
  InputErrors errors;
  std::unique_ptr<PhaseResolver> resolver;
  std::unique_ptr<BookSet> books;
  std::unique_ptr<FeatureEngine> features;

  explicit Replay(const ProfileStore* profiles = nullptr) {
    EXPECT_TRUE(cals.load_dir(std::string(TICKSENTRY_SOURCE_DIR) + "/config/calendars", errors));
    resolver = std::make_unique<PhaseResolver>(symbols, &cals);
    books = std::make_unique<BookSet>(symbols);
    books->set_phase_resolver(resolver.get());
    features = std::make_unique<FeatureEngine>(symbols, FeatureOptions{});
    features->set_profile_store(profiles);
  }
  // Runs the day; `shift_ns` moves every event's time (to replay the day as a later one).
  // `visit` sees each event with its book and feature row.
  void run(int64_t shift_ns, const std::function<void(const Event&, const BookTop&, const float*)>& visit) {
    auto src = make_sse_source(testing::sse_day_dir().string(), symbols, errors);
    ASSERT_TRUE(src) << src.status().message();
    std::vector<Event> batch(256);
    while (!src.value()->done()) {
      const size_t n = src.value()->next_batch(batch);
      for (size_t i = 0; i < n; ++i) {
        Event e = batch[i];
        e.exch_ts_ns += shift_ns;
        if (!books->apply(e, errors)) continue;
        const BookTop& top = books->top(e.symbol);
        visit(e, top, features->on_event(e, top));
      }
    }
  }
};

#define REQUIRE_SSE_DAY()                                             \
  do {                                                                \
    const std::string missing = testing::missing_data(testing::sse_day_dir()); \
    if (!missing.empty()) GTEST_SKIP() << missing;                    \
  } while (0)

TEST(PhaseFeatures, AuctionMatchAndLunchReopenGiveNoJump) {
  REQUIRE_SSE_DAY();
  Replay r;
  float open_ret = 0, open_ret10 = 0, reopen_ret = 0, reopen_ret10 = 0, open_vz = 0, reopen_vz = 0;
  float break_ret = 0, break_vz = 0;
  int pause_events = 0, pause_not_break = 0, lunch_events = 0, lunch_not_break = 0;
  double open_vol_in_auction = 0;
  r.run(0, [&](const Event& e, const BookTop& top, const float* row) {
    const int64_t t = local_sod(e.exch_ts_ns);
    if (t >= hms(9, 25, 1) && t < hms(9, 30)) {
      ++pause_events;
      if (top.phase != Phase::kBreak) ++pause_not_break;
    }
    if (t >= hms(11, 30, 1) && t < hms(13, 0)) {
      ++lunch_events;
      if (top.phase != Phase::kBreak) ++lunch_not_break;
    }
    if (top.phase != Phase::kContinuous) {
      break_ret = std::max(break_ret, std::fabs(row[kRet1s]));
      break_vz = std::max(break_vz, row[kVolumeZ]);
      if (e.kind == EventKind::kTrade) open_vol_in_auction += double(e.trade.qty);
      return;
    }
    if (t >= hms(9, 30) && t < hms(9, 30, 30)) {
      open_ret = std::max(open_ret, std::fabs(row[kRet1s]));
      open_ret10 = std::max(open_ret10, std::fabs(row[kRet10s]));
      open_vz = std::max(open_vz, row[kVolumeZ]);
    }
    if (t >= hms(13, 0) && t < hms(13, 0, 30)) {
      reopen_ret = std::max(reopen_ret, std::fabs(row[kRet1s]));
      reopen_ret10 = std::max(reopen_ret10, std::fabs(row[kRet10s]));
      reopen_vz = std::max(reopen_vz, row[kVolumeZ]);
    }
  });
  // The feed says TRADE through the pause and the lunch break; the schedule makes them breaks.
  EXPECT_GT(pause_events, 0);
  EXPECT_EQ(pause_not_break, 0);
  EXPECT_GT(lunch_events, 0);
  EXPECT_EQ(lunch_not_break, 0);
  EXPECT_GE(r.resolver->counters().refinements, 2u);  // the pause and the lunch break
  // SSE says OCALL from 09:14:00, a minute before the schedule's call: counted, feed wins.
  EXPECT_GE(r.resolver->counters().disagreements, 1u);
  EXPECT_GT(open_vol_in_auction, 0);  // the 09:25 match was printed, outside continuous trading
  // Outside continuous trading no return and no volume.
  EXPECT_EQ(break_ret, 0.f);
  EXPECT_EQ(break_vz, 0.f);
  // The first continuous prices are measured against the match (09:30) and the session's first
  // mid (13:00): a few bps for Moutai, no 90-minute jump, no volume spike by themselves.
  EXPECT_LT(open_ret, 30.f) << "ret_1s right after the 09:30 open";
  EXPECT_LT(open_ret10, 40.f);
  EXPECT_LT(reopen_ret, 30.f) << "ret_1s right after the 13:00 reopen";
  EXPECT_LT(reopen_ret10, 40.f);
  EXPECT_LT(open_vz, 8.f) << "volume_z right after the open (volume_burst fires at 8)";
  EXPECT_LT(reopen_vz, 8.f) << "volume_z right after the reopen";
  std::printf("open: |ret1s| %.2f |ret10s| %.2f vz %.2f; reopen: |ret1s| %.2f |ret10s| %.2f vz %.2f; "
              "disagreements %llu refinements %llu\n",
              open_ret, open_ret10, open_vz, reopen_ret, reopen_ret10, reopen_vz,
              static_cast<unsigned long long>(r.resolver->counters().disagreements),
              static_cast<unsigned long long>(r.resolver->counters().refinements));
}

// The simulator with and without its call auctions (the continuous flow is the same event for
// event, tests/ingest/sim): every volume and trade feature of every continuous event is
// identical, so neither the indicative snapshots nor the 09:25 match count as volume or prints;
// outside continuous trading no return and no volume; the first continuous returns, measured
// against the match, are no larger than without the auction.
TEST(PhaseFeatures, SimulatorAuctionsAreNeverTradesReturnsOrVolume) {
  struct Seen {
    std::vector<std::array<float, 4>> flow;  // volume_z, trade_count_z, flow imbalance, large ratio
    std::vector<float> multiple_60s;
    float pause_ret = 0, pause_vz = 0, open_ret = 0;
    int pause_events = 0, indicatives = 0;
    double match_qty = 0;
    size_t errors = 0;
  };
  auto run = [](bool auctions) {
    Seen seen;
    SymbolTable symbols;
    MarketCalendars cals;
    InputErrors errors;
    EXPECT_TRUE(cals.load_dir(std::string(TICKSENTRY_SOURCE_DIR) + "/config/calendars", errors));
    SimOptions o;
    o.symbols = 20;
    o.events_per_s = 4000;
    o.duration_s = 120;
    o.anomalies_per_hour = 0;
    o.start_ns = kSimOpeningCallStartNs;  // 09:15: the day starts with its opening call
    o.auctions = auctions;
    Simulator sim(o, symbols);
    PhaseResolver resolver(symbols, &cals);
    BookSet books(symbols);
    books.set_phase_resolver(&resolver);
    FeatureEngine features(symbols, FeatureOptions{});
    std::vector<Event> batch(512);
    while (!sim.done()) {
      const size_t n = sim.next_batch(batch);
      for (size_t i = 0; i < n; ++i) {
        const Event& e = batch[i];
        if (e.kind == EventKind::kSnapshot) ++seen.indicatives;
        if (e.kind == EventKind::kTrade && e.trade.aggressor == Side::kNone) seen.match_qty += double(e.trade.qty);
        if (!books.apply(e, errors)) continue;
        const BookTop& top = books.top(e.symbol);
        const float* row = features.on_event(e, top);
        if (top.phase != Phase::kContinuous) {
          ++seen.pause_events;
          seen.pause_ret = std::max({seen.pause_ret, std::fabs(row[kRet1s]), std::fabs(row[kRet10s])});
          seen.pause_vz = std::max(seen.pause_vz, row[kVolumeZ]);
          continue;
        }
        seen.flow.push_back({row[kVolumeZ], row[kTradeCountZ], row[kTradeFlowImbalance], row[kLargeTradeRatio]});
        seen.multiple_60s.push_back(features.volume(e.symbol).multiple_60s);
        if (local_sod(e.exch_ts_ns) < hms(9, 30, 30)) seen.open_ret = std::max(seen.open_ret, std::fabs(row[kRet1s]));
      }
    }
    seen.errors = errors.total();
    return seen;
  };
  const Seen with = run(true), without = run(false);
  EXPECT_EQ(with.errors, 0u);
  EXPECT_EQ(with.indicatives, 20 * 199);
  EXPECT_GT(with.match_qty, 0);
  EXPECT_GT(with.pause_events, 20 * 200);  // every indicative snapshot and match is outside continuous
  EXPECT_EQ(with.pause_ret, 0.f);
  EXPECT_EQ(with.pause_vz, 0.f);
  ASSERT_GT(without.flow.size(), 10'000u);
  ASSERT_EQ(with.flow.size(), without.flow.size());
  for (size_t i = 0; i < with.flow.size(); ++i) {
    ASSERT_EQ(with.flow[i], without.flow[i]) << "volume/trade features differ at continuous event " << i;
    ASSERT_EQ(with.multiple_60s[i], without.multiple_60s[i]) << "60 s volume multiple differs at event " << i;
  }
  // The first continuous prices are measured against the match: no jump beyond what the same
  // flow shows without the auction (the simulator's opening book settles in its first seconds).
  EXPECT_LE(with.open_ret, without.open_ret + 1.f);
  std::printf("sim auctions: %d indicative snapshots, match volume %.0f; first 30 s |ret_1s| %.2f bps (%.2f without)\n",
              with.indicatives, with.match_qty, with.open_ret, without.open_ret);
}

TEST(PhaseFeatures, ProfileStateRoundTripAndBusyOpeningIsNoSpike) {
  REQUIRE_SSE_DAY();
  // Day 1 learns the profile.
  Replay day1;
  day1.run(0, [](const Event&, const BookTop&, const float*) {});
  ProfileStore saved;
  day1.features->save_profiles(saved);
  ASSERT_EQ(saved.size(), 1u);
  const VolumeProfile* p1 = saved.find("600519.SH");
  ASSERT_NE(p1, nullptr);
  EXPECT_GT(p1->level_n, 1000u);  // 4 hours of 10 s buckets
  EXPECT_EQ(p1->market, MarketKind::kChinaA);
  // Nothing learned outside continuous trading (the auction minutes, the lunch break).
  EXPECT_EQ(p1->bins[hms(9, 20) / kProfileBinSeconds].n, 0u);
  EXPECT_EQ(p1->bins[hms(12, 0) / kProfileBinSeconds].n, 0u);
  EXPECT_GT(p1->bins[hms(9, 30) / kProfileBinSeconds].n, 0u);

  // Save, load: the same profile.
  const auto dir = testing::scratch_dir("profile_state");
  const std::string path = (dir / "state.txt").string();
  ASSERT_TRUE(saved.save(path));
  ProfileStore loaded;
  ASSERT_TRUE(loaded.load(path));
  EXPECT_EQ(loaded.to_text(), saved.to_text());
  const VolumeProfile* p2 = loaded.find("600519.SH");
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(p2->level_n, p1->level_n);
  EXPECT_DOUBLE_EQ(p2->level_vol.mean, p1->level_vol.mean);
  const int b930 = hms(9, 30) / kProfileBinSeconds;
  EXPECT_EQ(p2->bins[b930].n, p1->bins[b930].n);
  EXPECT_DOUBLE_EQ(p2->bins[b930].vol.mean, p1->bins[b930].vol.mean);

  // The next trading day (the same flow replayed on Thursday 2023-02-02) starts from the state:
  // its busy opening minutes are what 09:30 usually trades, not a spike.
  Replay day2(&loaded);
  float open_vz = 0, day_vz = 0;
  int high = 0, rows = 0;
  day2.run(86400 * kS, [&](const Event& e, const BookTop& top, const float* row) {
    if (top.phase != Phase::kContinuous) return;
    const int64_t t = local_sod(e.exch_ts_ns);
    if (t < hms(9, 40)) open_vz = std::max(open_vz, row[kVolumeZ]);
    day_vz = std::max(day_vz, row[kVolumeZ]);
    ++rows;
    if (row[kVolumeZ] >= 8) ++high;
  });
  EXPECT_LT(open_vz, 8.f) << "volume_z in the first ten minutes against the learned profile";
  // The learned level is used from the first bucket: z-scores are given from the open on.
  EXPECT_GT(day2.features->profile(0)->level_n, p1->level_n);
  std::printf("day 2: max volume_z 09:30-09:40 %.2f, whole day %.2f, events with z >= 8: %d of %d\n", open_vz,
              day_vz, high, rows);
}

TEST(PhaseFeatures, BadStateFilesAreRefusedByName) {
  const auto dir = testing::scratch_dir("profile_state_bad");
  auto write = [&](const char* name, const char* text) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  };
  ProfileStore store;
  const std::string old = write("old.txt", "ticksentry-state 0\nbin_seconds 300\n");
  Status s = store.load(old);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find(old), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("version 0, this build reads version 1"), std::string::npos) << s.message();
  const std::string other = write("other.txt", "date,name\n2026-01-01,New Year\n");
  s = store.load(other);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("not a ticksentry state file"), std::string::npos) << s.message();
  const std::string corrupt =
      write("corrupt.txt", "ticksentry-state 1\nbin_seconds 300\nsymbol 600519.SH cn-a 10 1 2 3 4\nbin 114 3 1 x 1 1\n");
  s = store.load(corrupt);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find(corrupt + ":4:"), std::string::npos) << s.message();
  const std::string bins = write("bins.txt", "ticksentry-state 1\nbin_seconds 60\n");
  EXPECT_FALSE(store.load(bins));
  EXPECT_FALSE(store.load((dir / "absent.txt").string()));
  EXPECT_EQ(store.size(), 0u);  // nothing from a refused file
  // A good one loads.
  const std::string good =
      write("good.txt", "ticksentry-state 1\nbin_seconds 300\nsymbol 600519.SH cn-a 10 1 2 3 4\nbin 114 3 1 0.5 1 1\n");
  ASSERT_TRUE(store.load(good));
  ASSERT_NE(store.find("600519.SH"), nullptr);
  EXPECT_EQ(store.find("600519.SH")->bins[114].n, 3u);
}

}  // namespace
}  // namespace ts
