// `ticksentry eval`'s metrics against values computed by hand: ROC-AUC, PR-AUC (average
// precision), the PR curve, alerts with a cooldown, the budget threshold, recall over events and
// the median detection lead time, and the 70/15/15 time split.
#include "serve/eval_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ts {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(EvalMetrics, RocAucAndAveragePrecisionOnAKnownSet) {
  const std::vector<float> s{0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f};
  const std::vector<uint8_t> y{1, 0, 1, 1, 0, 0};
  // Positive-negative pairs ranked right: 3 + 2 + 2 of 9.
  EXPECT_NEAR(roc_auc(s, y), 7.0 / 9.0, 1e-12);
  // Precision at each positive: 1, 2/3, 3/4, each worth a third of the recall.
  EXPECT_NEAR(average_precision(s, y), (1.0 + 2.0 / 3.0 + 0.75) / 3.0, 1e-12);
  // Order of the inputs does not matter.
  const std::vector<float> s2{0.4f, 0.6f, 0.9f, 0.5f, 0.8f, 0.7f};
  const std::vector<uint8_t> y2{0, 1, 1, 0, 0, 1};
  EXPECT_NEAR(roc_auc(s2, y2), 7.0 / 9.0, 1e-12);
  EXPECT_NEAR(average_precision(s2, y2), (1.0 + 2.0 / 3.0 + 0.75) / 3.0, 1e-12);
}

TEST(EvalMetrics, TiesAndDegenerateSets) {
  const std::vector<float> tie{0.5f, 0.5f, 0.5f, 0.5f};
  const std::vector<uint8_t> y{1, 0, 0, 1};
  EXPECT_NEAR(roc_auc(tie, y), 0.5, 1e-12);             // ties count one half
  EXPECT_NEAR(average_precision(tie, y), 0.5, 1e-12);  // one threshold: precision 1/2 at recall 1
  // A binary detector (like the rules): AUC = (TPR + TNR) / 2.
  const std::vector<float> bin{1, 1, 0, 0, 0, 1};
  const std::vector<uint8_t> yb{1, 1, 1, 0, 0, 0};
  EXPECT_NEAR(roc_auc(bin, yb), (2.0 / 3.0 + 2.0 / 3.0) / 2.0, 1e-12);
  const std::vector<uint8_t> none{0, 0, 0, 0};
  EXPECT_TRUE(std::isnan(roc_auc(tie, none)));
  EXPECT_TRUE(std::isnan(average_precision(tie, none)));
}

TEST(EvalMetrics, PrCurvePointsAndThinning) {
  const std::vector<float> s{0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f};
  const std::vector<uint8_t> y{1, 0, 1, 1, 0, 0};
  auto c = pr_curve(s, y);
  ASSERT_EQ(c.size(), 6u);
  EXPECT_FLOAT_EQ(float(c[0].threshold), 0.9f);
  EXPECT_DOUBLE_EQ(c[0].precision, 1.0);
  EXPECT_NEAR(c[0].recall, 1.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(c[3].precision, 0.75);
  EXPECT_DOUBLE_EQ(c[3].recall, 1.0);
  EXPECT_DOUBLE_EQ(c[5].precision, 0.5);
  auto thin = pr_curve(s, y, 3);
  ASSERT_EQ(thin.size(), 3u);
  EXPECT_FLOAT_EQ(float(thin.front().threshold), 0.9f);
  EXPECT_FLOAT_EQ(float(thin.back().threshold), 0.4f);
}

// One symbol, windows every 5 s from t = 0 to 295 s; an event starts at 100 s (windows 40..95 s
// precede it with H = 60) and another at 250 s (windows 190..245 s).
struct Fixture {
  std::vector<float> score;
  std::vector<uint8_t> label;
  std::vector<int32_t> symbol;
  std::vector<int64_t> end, event;
  Fixture() {
    for (int t = 0; t < 300; t += 5) {
      end.push_back(t * kSec);
      symbol.push_back(0);
      int64_t ev = -1;
      if (t >= 40 && t < 100) ev = 100 * kSec;
      if (t >= 190 && t < 250) ev = 250 * kSec;
      event.push_back(ev);
      label.push_back(ev >= 0);
      score.push_back(0.1f);
    }
  }
  EvalWindows view() const { return EvalWindows{score, label, symbol, end, event}; }
  void set(int t, float v) { score[size_t(t / 5)] = v; }
};

TEST(EvalMetrics, AlertsCooldownRecallAndLeadTime) {
  Fixture f;
  f.set(70, 0.9f);  // 30 s before the first event
  f.set(75, 0.9f);  // within the cooldown: no second alert
  f.set(150, 0.8f);  // a false alert
  f.set(240, 0.7f);  // 10 s before the second event
  BudgetResult r = alerts_at(f.view(), double(0.7f), 60 * kSec);
  EXPECT_EQ(r.alerts, 3);
  EXPECT_EQ(r.false_alerts, 1);
  EXPECT_NEAR(r.precision, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(r.events, 2);
  EXPECT_EQ(r.events_detected, 2);
  EXPECT_DOUBLE_EQ(r.recall, 1.0);
  EXPECT_NEAR(r.median_lead_s, 20.0, 1e-9);  // median of 30 and 10
  r = alerts_at(f.view(), double(0.85f), 60 * kSec);
  EXPECT_EQ(r.alerts, 1);
  EXPECT_EQ(r.events_detected, 1);
  EXPECT_NEAR(r.median_lead_s, 30.0, 1e-9);
  r = alerts_at(f.view(), 0.95, 60 * kSec);
  EXPECT_EQ(r.alerts, 0);
  EXPECT_TRUE(std::isnan(r.precision));
  EXPECT_TRUE(std::isnan(r.median_lead_s));
  EXPECT_DOUBLE_EQ(r.recall, 0.0);
}

TEST(EvalMetrics, ConstantHighScoreIsNotOneAlert) {
  Fixture f;
  for (auto& s : f.score) s = 1.0f;
  // 300 s, cooldown 60 s: alerts at 0, 60, 120, 180, 240; those at 60 and 240 are true.
  BudgetResult r = alerts_at(f.view(), 1.0, 60 * kSec);
  EXPECT_EQ(r.alerts, 5);
  EXPECT_EQ(r.false_alerts, 3);
  EXPECT_NEAR(r.median_lead_s, 60.0, 1e-9);  // first window of each event (40 s, 190 s): 60 s
}

TEST(EvalMetrics, BudgetPicksTheLowestThresholdWithinTheFalseAlertLimit) {
  Fixture f;
  f.set(70, 0.9f);
  f.set(150, 0.8f);  // false
  f.set(240, 0.7f);
  f.set(5, 0.6f);    // false, more than a cooldown before the next
  // No false alert allowed: only 0.9 qualifies (0.8 raises the false one).
  BudgetResult r = at_budget(f.view(), 0.0, 60 * kSec);
  EXPECT_FLOAT_EQ(float(r.threshold), 0.9f);
  EXPECT_EQ(r.events_detected, 1);
  // One allowed: 0.7 (alerts at 70, 150, 240); 0.6 would add a second false alert (at 5 s).
  r = at_budget(f.view(), 1.0, 60 * kSec);
  EXPECT_FLOAT_EQ(float(r.threshold), 0.7f);
  EXPECT_EQ(r.false_alerts, 1);
  EXPECT_EQ(r.events_detected, 2);
  // A detector whose every threshold breaks the budget alerts never.
  Fixture bad;
  for (int t = 0; t < 300; t += 5) bad.set(t, t < 40 || (t >= 100 && t < 190) ? 1.0f : 0.0f);
  r = at_budget(bad.view(), 0.0, 60 * kSec);
  EXPECT_TRUE(std::isinf(r.threshold));
  EXPECT_EQ(r.alerts, 0);
  EXPECT_DOUBLE_EQ(r.recall, 0.0);
}

TEST(EvalMetrics, SplitIsSeventyFifteenFifteenByTime) {
  EXPECT_EQ(split_of(0, 0, 100), Split::kTrain);
  EXPECT_EQ(split_of(69, 0, 100), Split::kTrain);
  EXPECT_EQ(split_of(70, 0, 100), Split::kValidation);
  EXPECT_EQ(split_of(84, 0, 100), Split::kValidation);
  EXPECT_EQ(split_of(85, 0, 100), Split::kTest);
  EXPECT_EQ(split_of(100, 0, 100), Split::kTest);
}

}  // namespace
}  // namespace ts
