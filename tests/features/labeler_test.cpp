// The label of docs/labels.md on hand-made per-second series: price moves just above and below
// k * sigma * sqrt(H), volume and liquidity shocks, refractory merging, breaks, injected events,
// and the window label (onset in (end, end + H]).
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
}

}  // namespace
}  // namespace ts
