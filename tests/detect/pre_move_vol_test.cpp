// PreMoveVol (detect/rule_state.h): a move is judged against the volatility from before it.
#include <gtest/gtest.h>

#include "detect/rule_state.h"

namespace ts {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(PreMoveVol, AMoveDoesNotRaiseItsOwnThreshold) {
  PreMoveVol v;
  const int64_t t0 = 1'000 * 60 * kSec;  // a minute boundary
  // Two calm minutes at vol 1.0 bps/sqrt(s).
  for (int64_t s = 0; s < 120; ++s) EXPECT_DOUBLE_EQ(v.reference(t0 + s * kSec, 1.0), 1.0);
  // A crash in jumps: vol_long quadruples within seconds; the reference stays at the calm value.
  EXPECT_DOUBLE_EQ(v.reference(t0 + 121 * kSec, 4.0), 1.0);
  EXPECT_DOUBLE_EQ(v.reference(t0 + 150 * kSec, 4.5), 1.0);
  // Next minute: the reference is the vol at the start of the previous minute (still the calm one).
  EXPECT_DOUBLE_EQ(v.reference(t0 + 181 * kSec, 4.5), 1.0);
  // Two minutes on, the busy level is the past and becomes the reference.
  EXPECT_DOUBLE_EQ(v.reference(t0 + 241 * kSec, 4.5), 4.5);
}

TEST(PreMoveVol, NeverAboveTheCurrentValueAndFirstMinuteUsesTheCurrent) {
  PreMoveVol v;
  const int64_t t0 = 5'000 * 60 * kSec;
  EXPECT_DOUBLE_EQ(v.reference(t0, 3.0), 3.0) << "nothing from before: the current value";
  EXPECT_DOUBLE_EQ(v.reference(t0 + 61 * kSec, 2.0), 2.0) << "a calm after a busy minute: the calm";
  EXPECT_DOUBLE_EQ(v.reference(t0 + 62 * kSec, 5.0), 3.0);
}

}  // namespace
}  // namespace ts
