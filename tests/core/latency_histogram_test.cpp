#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/latency_histogram.h"

namespace ts {
namespace {

TEST(LatencyHistogram, QuantilesWithinTwoPercentOfExact) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(9.0, 1.5);  // ~8 µs median, long tail
  LatencyHistogram h;
  std::vector<int64_t> xs;
  for (int i = 0; i < 200000; ++i) {
    auto v = static_cast<int64_t>(dist(rng));
    xs.push_back(v);
    h.record(v);
  }
  std::sort(xs.begin(), xs.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = double(xs[size_t(q * double(xs.size())) - 1]);
    EXPECT_NEAR(double(h.quantile_ns(q)), exact, exact * 0.02 + 1) << "q=" << q;
  }
  EXPECT_EQ(h.count(), 200000u);
  EXPECT_EQ(h.max_ns(), xs.back());
}

TEST(LatencyHistogram, SmallValuesExactAndMerge) {
  LatencyHistogram a, b;
  for (int i = 1; i <= 50; ++i) a.record(i);
  for (int i = 51; i <= 100; ++i) b.record(i);
  a.merge(b);
  EXPECT_EQ(a.count(), 100u);
  EXPECT_EQ(a.quantile_ns(0.5), 50);
  EXPECT_EQ(a.quantile_ns(1.0), 100);
  LatencyHistogram empty;
  EXPECT_EQ(empty.quantile_ns(0.99), 0);
}

}  // namespace
}  // namespace ts

#include <thread>

#include "core/clock.h"

namespace ts {
namespace {

TEST(MonoClock, AgreesWithClockMonotonicAndNeverGoesBack) {
  const int64_t a_fast = mono_ns(), a_ref = clock_mono_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int64_t b_fast = mono_ns(), b_ref = clock_mono_ns();
  // Elapsed time agrees within 1%; absolute offset within 1 ms of CLOCK_MONOTONIC.
  EXPECT_NEAR(double(b_fast - a_fast), double(b_ref - a_ref), 0.01 * double(b_ref - a_ref));
  EXPECT_LT(std::abs(b_fast - b_ref), 1'000'000);
  int64_t prev = mono_ns();
  for (int i = 0; i < 100000; ++i) {
    const int64_t now = mono_ns();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

}  // namespace
}  // namespace ts
