// The model-alert decision: threshold, hysteresis (one alert per excursion), cooldown.
#include "detect/model_decision.h"

#include <gtest/gtest.h>

namespace ts {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(ModelDecision, FiresAtTheThresholdOncePerExcursion) {
  ModelDecision d({.threshold = 0.9, .hysteresis = 0.1, .cooldown_ns = 0});
  EXPECT_FALSE(d.decide(1, 0.5, 1 * kS));
  EXPECT_TRUE(d.decide(1, 0.9, 2 * kS)) << "at the threshold";
  EXPECT_FALSE(d.decide(1, 0.95, 3 * kS)) << "still high: the same excursion";
  EXPECT_FALSE(d.decide(1, 0.85, 4 * kS)) << "inside the hysteresis band: not re-armed";
  EXPECT_FALSE(d.decide(1, 0.92, 5 * kS));
  EXPECT_FALSE(d.decide(1, 0.79, 6 * kS)) << "below threshold - hysteresis re-arms";
  EXPECT_TRUE(d.decide(1, 0.91, 7 * kS)) << "a new excursion";
}

TEST(ModelDecision, CooldownIsPerSymbolInExchangeTime) {
  ModelDecision d({.threshold = 0.9, .hysteresis = 0.0, .cooldown_ns = 60 * kS});
  EXPECT_TRUE(d.decide(1, 0.99, 100 * kS));
  EXPECT_TRUE(d.decide(2, 0.99, 101 * kS)) << "another symbol is not cooled down";
  EXPECT_FALSE(d.decide(1, 0.5, 110 * kS));  // re-armed
  EXPECT_FALSE(d.decide(1, 0.99, 150 * kS)) << "re-armed but within 60 s of the last alert";
  EXPECT_FALSE(d.decide(1, 0.5, 155 * kS));
  EXPECT_TRUE(d.decide(1, 0.99, 160 * kS)) << "60 s later";
}

}  // namespace
}  // namespace ts
