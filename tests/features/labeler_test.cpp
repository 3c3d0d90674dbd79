// The label of docs/labels.md on hand-made per-second series: price moves just above and below
// k * sigma * sqrt(H), volume and liquidity shocks, refractory merging, breaks, injected events,
// the economic minimum (spreads, bps), the phases (no onset from an auction match, a lunch reopen
// or the end of a halt), onset sizes, and the window labels of the two tasks.
#include "features/labeler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ts {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000 * kSec;

// `n` seconds of a flat mid (10,000 ticks) with volatility `vol` bps/sqrt(s).
std::vector<LabelSample> flat(int n, float vol = 1.0f) {
  std::vector<LabelSample> v;
  for (int i = 0; i < n; ++i) v.push_back(LabelSample{kT0 + i * kSec, 10000.0, vol, 0.f, 0.f});
  return v;
}

// Moves the mid to mid0 * exp(bps / 1e4) from second `at` on.
void jump(std::vector<LabelSample>& v, int at, double bps) {
  for (size_t i = size_t(at); i < v.size(); ++i) v[i].mid = 10000.0 * std::exp(bps / 1e4);
}

LabelOptions opts() {
  LabelOptions o;
  o.horizon_s = 60;
  o.k = 6;
  o.vol_floor_bps = 1.0;
  o.min_move_ticks = 2;
  o.volume_z = 10;
  o.depth_drop = 0.8;
  return o;
}

TEST(Labeler, PriceMoveAboveThresholdIsOneOnsetAtTheCrossing) {
  // sigma 1 bps/sqrt(s), H 60, k 6: threshold 6 * sqrt(60) = 46.5 bps.
  auto s = flat(400);
  jump(s, 200, 50.0);
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].kind, OnsetKind::kPriceMove);
  EXPECT_EQ(on[0].ts_ns, kT0 + 200 * kSec);
}

TEST(Labeler, PriceMoveBelowThresholdIsNoOnset) {
  auto s = flat(400);
  jump(s, 200, 45.0);  // < 46.5 bps
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
}

TEST(Labeler, ThresholdScalesWithTheReferenceVolatility) {
  auto s = flat(400, 2.0f);  // threshold 93 bps
  jump(s, 200, 50.0);
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  jump(s, 200, 100.0);
  EXPECT_EQ(label_onsets(s, {}, opts()).size(), 1u);
  // A volatility under the floor counts as the floor.
  auto q = flat(400, 0.01f);
  jump(q, 200, 40.0);  // above 6 * 0.01 * sqrt(60) but below the floor's 46.5
  EXPECT_TRUE(label_onsets(q, {}, opts()).empty());
}

TEST(Labeler, MinimumMoveInTicks) {
  auto s = flat(400);
  for (auto& x : s) x.mid = 100.0;  // 1 tick = 100 bps
  for (size_t i = 200; i < s.size(); ++i) s[i].mid = 101.0;
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());  // 100 bps but one tick
  for (size_t i = 200; i < s.size(); ++i) s[i].mid = 102.0;
  EXPECT_EQ(label_onsets(s, {}, opts()).size(), 1u);
}

TEST(Labeler, SlowDriftIsNotAnOnset) {
  // 40 bps every 60 s, steadily: every H-second return is 40 bps < 46.5.
  auto s = flat(600);
  for (size_t i = 0; i < s.size(); ++i) s[i].mid = 10000.0 * std::exp(40.0 * double(i) / 60.0 / 1e4);
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
}

TEST(Labeler, VolumeAndLiquidityShocks) {
  auto s = flat(400);
  s[100].volume_z = 9.9f;  // below
  s[200].volume_z = 12.f;
  s[300].depth_change = float(std::log(0.25));  // depth fell 75% < 80%
  s[350].depth_change = float(std::log(0.15));  // fell 85%
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 2u);
  EXPECT_EQ(on[0].kind, OnsetKind::kVolumeShock);
  EXPECT_EQ(on[0].ts_ns, kT0 + 200 * kSec);
  EXPECT_EQ(on[1].kind, OnsetKind::kLiquidityShock);
  EXPECT_EQ(on[1].ts_ns, kT0 + 350 * kSec);
  LabelOptions off = opts();
  off.volume_z = 0;
  off.depth_drop = 0;
  EXPECT_TRUE(label_onsets(s, {}, off).empty());
}

TEST(Labeler, ConditionsWithinTheRefractoryPeriodBelongToOneOnset) {
  auto s = flat(600);
  s[100].volume_z = 12.f;
  s[130].volume_z = 12.f;  // 30 s later: same episode
  s[160].volume_z = 12.f;  // 30 s after the last abnormal second: still the same
  s[300].volume_z = 12.f;  // 140 s later: a new onset
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 2u);
  EXPECT_EQ(on[0].ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(on[1].ts_ns, kT0 + 300 * kSec);
}

TEST(Labeler, NoReturnAcrossABreak) {
  // Morning session, 90 minutes of lunch, then an afternoon opening 80 bps higher.
  std::vector<LabelSample> s = flat(300);
  for (int i = 0; i < 300; ++i) s.push_back(LabelSample{kT0 + (5700 + i) * kSec, 10080.3, 1.f, 0.f, 0.f});
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  // Without the break (a 60 s pause), the same jump is a move.
  std::vector<LabelSample> c = flat(300);
  for (int i = 0; i < 300; ++i) c.push_back(LabelSample{kT0 + (360 + i) * kSec, 10080.3, 1.f, 0.f, 0.f});
  EXPECT_EQ(label_onsets(c, {}, opts()).size(), 1u);
}

TEST(Labeler, NothingIsCheckedOutsideContinuousTrading) {
  // A call auction's indicative price and match volume, then continuous trading from 300 s.
  auto s = flat(600);
  for (int i = 0; i < 300; ++i) s[size_t(i)].trading = false;
  jump(s, 100, 200.0);     // the auction's price moves: not a move
  s[200].volume_z = 30.f;  // the opening match: not a shock
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  s[400].volume_z = 30.f;  // in continuous trading: a shock
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].ts_ns, kT0 + 400 * kSec);
}

TEST(Labeler, InjectedEventsAreOnsetsAndAbsorbTheirOwnMoves) {
  auto s = flat(600);
  jump(s, 230, 300.0);  // the injected crash's move, 30 s after its start
  s[500].volume_z = 20.f;  // an unrelated shock long after it
  std::vector<InjectedSpan> inj{{kT0 + 200 * kSec + 123, kT0 + 260 * kSec}};
  auto on = label_onsets(s, inj, opts());
  ASSERT_EQ(on.size(), 2u);
  EXPECT_EQ(on[0].kind, OnsetKind::kInjected);
  EXPECT_EQ(on[0].ts_ns, kT0 + 200 * kSec + 123);
  EXPECT_EQ(on[1].kind, OnsetKind::kVolumeShock);
  EXPECT_EQ(on[1].ts_ns, kT0 + 500 * kSec);
}

TEST(Labeler, WindowLabelIsTheFirstOnsetWithinTheHorizon) {
  const std::vector<Onset> on{{kT0 + 100 * kSec, OnsetKind::kPriceMove}, {kT0 + 130 * kSec, OnsetKind::kInjected}};
  LabelOptions o = opts();
  o.grace_s = 0;
  EXPECT_EQ(label_window(on, kT0 + 39 * kSec, o).label, 0);  // 61 s ahead: outside
  auto w = label_window(on, kT0 + 40 * kSec, o);             // exactly H ahead: inside
  EXPECT_EQ(w.label, 1);
  EXPECT_EQ(w.event_ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(label_window(on, kT0 + 99 * kSec, o).event_ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(label_window(on, kT0 + 100 * kSec, o).event_ts_ns, kT0 + 130 * kSec);  // the onset itself is past
  auto none = label_window(on, kT0 + 130 * kSec, o);
  EXPECT_EQ(none.label, 0);
  EXPECT_EQ(none.event_ts_ns, -1);
}

TEST(Labeler, WindowsShortlyAfterAnOnsetArePositiveWithinTheGrace) {
  const std::vector<Onset> on{{kT0 + 100 * kSec, OnsetKind::kPriceMove}, {kT0 + 300 * kSec, OnsetKind::kInjected}};
  LabelOptions o = opts();
  o.grace_s = 10;
  EXPECT_EQ(label_window(on, kT0 + 100 * kSec, o).event_ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(label_window(on, kT0 + 109 * kSec, o).event_ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(label_window(on, kT0 + 110 * kSec, o).label, 0);  // 10 s after: past the grace
  EXPECT_EQ(label_window(on, kT0 + 240 * kSec, o).event_ts_ns, kT0 + 300 * kSec);
  o.grace_s = 61;
  EXPECT_FALSE(o.validate().is_ok());  // longer than the horizon
}

TEST(Labeler, AMoveThatDoesNotPaySeveralSpreadsIsNoOnset) {
  // 50 bps on a 10,000-tick mid = 50 ticks; a 20-tick spread makes it 2.5 spreads < 4.
  auto s = flat(400);
  for (auto& x : s) x.spread = 20;
  jump(s, 200, 50.0);
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  for (auto& x : s) x.spread = 10;  // 5 spreads: an onset
  EXPECT_EQ(label_onsets(s, {}, opts()).size(), 1u);
  LabelOptions off = opts();
  off.min_move_spreads = 0;
  for (auto& x : s) x.spread = 20;
  EXPECT_EQ(label_onsets(s, {}, off).size(), 1u);
}

TEST(Labeler, AMoveUnderTheBpsFloorIsNoOnsetHoweverQuietTheMarket) {
  // sigma 0.05 with a floor of 0.05: threshold 6 * 0.05 * sqrt(60) = 2.3 bps; a 8 bps move is
  // 20 sigma, 8 ticks on a 10,000-tick mid, but under the 10 bps floor.
  auto s = flat(400, 0.05f);
  jump(s, 200, 8.0);
  LabelOptions o = opts();
  o.vol_floor_bps = 0.05;
  EXPECT_TRUE(label_onsets(s, {}, o).empty());
  jump(s, 200, 12.0);
  EXPECT_EQ(label_onsets(s, {}, o).size(), 1u);
  o.min_move_bps = 15;
  EXPECT_TRUE(label_onsets(s, {}, o).empty());
}

TEST(Labeler, NoOnsetFromTheLunchReopenButOneLaterInTheAfternoon) {
  // Morning to 300 s, lunch (snapshots keep coming, not trading) to 600 s, afternoon after.
  auto s = flat(1200);
  for (int i = 300; i < 600; ++i) s[size_t(i)].trading = false;
  s[600].volume_z = 40.f;  // the reopen's first trades
  s[640].volume_z = 15.f;  // still the reopening (within the settle)
  s[690].volume_z = 12.f;  // after the settle, but within R of the last abnormal second: same episode
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  s[900].volume_z = 12.f;  // a quiet afternoon's shock: an event
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].ts_ns, kT0 + 900 * kSec);
  // Without the settle the reopen itself would be an onset.
  LabelOptions o = opts();
  o.settle_s = 0;
  EXPECT_EQ(label_onsets(s, {}, o).front().ts_ns, kT0 + 600 * kSec);
}

TEST(Labeler, NoOnsetFromAnAuctionMatchOrTheEndOfAHalt) {
  // Opening call auction to 100 s (the match prints at 100 s, 150 bps above the indicative
  // price); a halt from 500 to 700 s, trading resumes 300 bps lower with a volume burst.
  auto s = flat(1200);
  for (int i = 0; i < 100; ++i) s[size_t(i)].trading = false;
  jump(s, 100, 150.0);
  s[100].volume_z = 50.f;
  s[101].depth_change = float(std::log(0.05));
  for (int i = 500; i < 700; ++i) s[size_t(i)].trading = false;
  for (size_t i = 700; i < s.size(); ++i) s[i].mid = 10000.0 * std::exp(-150.0 / 1e4);
  s[700].volume_z = 30.f;
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  // The price settling 80 bps away 40 s after the match: the return is taken from inside the
  // settle, so it is the match's aftermath, not an onset 60 s later.
  for (size_t i = 140; i < 500; ++i) s[i].mid = 10000.0 * std::exp(230.0 / 1e4);
  EXPECT_TRUE(label_onsets(s, {}, opts()).empty());
  LabelOptions no_settle = opts();
  no_settle.settle_s = 0;
  EXPECT_FALSE(label_onsets(s, {}, no_settle).empty());
  // A move inside continuous trading is still one.
  for (size_t i = 1000; i < s.size(); ++i) s[i].mid = 10000.0 * std::exp(-80.0 / 1e4);
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].ts_ns, kT0 + 1000 * kSec);
  EXPECT_EQ(on[0].kind, OnsetKind::kPriceMove);
}

TEST(Labeler, OnsetsCarryTheirSizeInTheUnitOfTheirKind) {
  auto s = flat(800);
  jump(s, 200, -50.0);
  s[400].volume_z = 17.5f;
  s[600].depth_change = float(std::log(0.04));
  auto on = label_onsets(s, {}, opts());
  ASSERT_EQ(on.size(), 3u);
  EXPECT_NEAR(on[0].size, -50.0, 1e-6);
  EXPECT_STREQ(onset_size_unit(on[0].kind), "bps");
  EXPECT_NEAR(on[1].size, 17.5, 1e-6);
  EXPECT_STREQ(onset_size_unit(on[1].kind), "z");
  EXPECT_NEAR(on[2].size, 0.96, 1e-6);
  EXPECT_STREQ(onset_size_unit(on[2].kind), "depth_lost");
}

TEST(Labeler, DetectionAndForecastAreSeparateTasks) {
  const std::vector<Onset> on{{kT0 + 100 * kSec, OnsetKind::kPriceMove, 40}};
  LabelOptions o = opts();
  o.grace_s = 10;
  auto at = [&](int s, LabelTask t) { return label_window(on, kT0 + s * kSec, o, t); };
  // Forecast: strictly ahead, within H.
  EXPECT_EQ(at(39, LabelTask::kForecast).label, 0);
  EXPECT_EQ(at(40, LabelTask::kForecast).event_ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(at(99, LabelTask::kForecast).label, 1);
  EXPECT_EQ(at(100, LabelTask::kForecast).label, 0);  // the onset is no longer ahead
  // Detection: the onset in the last 10 s, the window's own second included.
  EXPECT_EQ(at(99, LabelTask::kDetect).label, 0);
  EXPECT_EQ(at(100, LabelTask::kDetect).event_ts_ns, kT0 + 100 * kSec);
  EXPECT_EQ(at(109, LabelTask::kDetect).label, 1);
  EXPECT_EQ(at(110, LabelTask::kDetect).label, 0);
  // The training label is their union; no window is positive for both.
  for (int t = 0; t < 200; ++t) {
    const int d = at(t, LabelTask::kDetect).label, f = at(t, LabelTask::kForecast).label;
    EXPECT_EQ(at(t, LabelTask::kAny).label, d | f) << t;
    EXPECT_FALSE(d && f) << t;
  }
}

TEST(Labeler, BadOptionsAreRejected) {
  LabelOptions o = opts();
  EXPECT_TRUE(o.validate().is_ok());
  o.horizon_s = 0;
  EXPECT_FALSE(o.validate().is_ok());
  o = opts();
  o.k = -1;
  EXPECT_FALSE(o.validate().is_ok());
  o = opts();
  o.depth_drop = 1.0;
  EXPECT_NE(o.validate().message().find("depth drop"), std::string::npos);
  o = opts();
  o.min_move_bps = -1;
  EXPECT_NE(o.validate().message().find("bps"), std::string::npos);
  o = opts();
  o.min_move_spreads = -1;
  EXPECT_NE(o.validate().message().find("spreads"), std::string::npos);
  o = opts();
  o.settle_s = 4000;
  EXPECT_NE(o.validate().message().find("settle"), std::string::npos);
}

}  // namespace
}  // namespace ts
