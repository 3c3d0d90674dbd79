// A hot swap changes the decision's threshold with the model: a shard adopts the published values
// of the version its results come from (detect/decision_values.h), keeps its values for results
// of versions nothing was published for, and does not flip back for a late result of the old
// engine.
#include "detect/decision_values.h"

#include <gtest/gtest.h>

#include "core/symbol_table.h"

namespace ts {
namespace {

constexpr int64_t kS = 1'000'000'000;

ModelAlertOptions at(double threshold) {
  ModelAlertOptions o;
  o.threshold = threshold;
  o.hysteresis = 0.05;
  o.cooldown_s = 0;
  return o;
}

struct Shard {
  SymbolTable symbols;
  std::unique_ptr<ModelDecision> decision;
  DecisionFollower follower;
  Shard(const ModelAlertOptions& start, uint32_t version, std::shared_ptr<const DecisionValues> values)
      : decision(make_model_decision(start, symbols)), follower(std::move(values), version) {
    symbols.intern("A");
    symbols.intern("B");  // id 1, the symbol of every result here
  }
  // A serving result of `version` for symbol 1: does it alert?
  bool result(uint32_t version, double p, int64_t ts) {
    follower.follow(version, decision, symbols);
    return decision->decide(1, p, ts);
  }
};

TEST(DecisionValues, ASwapToAVersionWithALowerThresholdAlertsAtItsThreshold) {
  auto values = std::make_shared<DecisionValues>();
  values->publish(2, at(0.94));
  Shard s(at(0.94), 2, values);
  EXPECT_FALSE(s.result(2, 0.70, 1 * kS)) << "v2 decides at 0.94";
  values->publish(3, at(0.62));  // the swap handler, before the engine swaps
  EXPECT_FALSE(s.result(2, 0.70, 2 * kS)) << "a v2 result still in flight: the shard keeps its values";
  EXPECT_EQ(s.follower.version(), 2u);
  EXPECT_TRUE(s.result(3, 0.70, 3 * kS)) << "the first v3 result brings v3's threshold";
  EXPECT_EQ(s.follower.version(), 3u);
  EXPECT_DOUBLE_EQ(s.decision->options_for(1).threshold, 0.62);
  EXPECT_FALSE(s.result(2, 0.10, 4 * kS));
  EXPECT_EQ(s.follower.version(), 3u) << "a late v2 result does not bring v2's values back";
  EXPECT_DOUBLE_EQ(s.decision->options_for(1).threshold, 0.62);
}

TEST(DecisionValues, ARollbackBringsTheOlderVersionsThresholdBack) {
  auto values = std::make_shared<DecisionValues>();
  Shard s(at(0.94), 2, values);
  values->publish(3, at(0.62));
  EXPECT_TRUE(s.result(3, 0.70, 1 * kS));
  values->publish(2, at(0.94));  // rollback to v2
  EXPECT_FALSE(s.result(2, 0.20, 2 * kS));
  EXPECT_FALSE(s.result(2, 0.70, 3 * kS)) << "v2 again decides at 0.94";
  EXPECT_DOUBLE_EQ(s.decision->options_for(1).threshold, 0.94);
}

TEST(DecisionValues, WithoutPublishedValuesTheConfiguredOnesStand) {
  Shard none(at(0.9), 1, nullptr);
  EXPECT_TRUE(none.result(7, 0.95, 1 * kS));
  EXPECT_DOUBLE_EQ(none.decision->options_for(1).threshold, 0.9);
  auto values = std::make_shared<DecisionValues>();
  values->publish(5, at(0.5));
  Shard s(at(0.9), 1, values);
  EXPECT_FALSE(s.result(4, 0.6, 1 * kS)) << "v4 was never published: the shard keeps 0.9";
  EXPECT_EQ(s.follower.version(), 1u);
  EXPECT_DOUBLE_EQ(s.decision->options_for(1).threshold, 0.9);
}

}  // namespace
}  // namespace ts
