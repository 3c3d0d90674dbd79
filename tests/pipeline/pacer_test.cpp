// The replay pacer's waits end at the run's deadline and on stop, not only when the event is due.
#include <gtest/gtest.h>

#include <thread>

#include "core/clock.h"
#include "pipeline/pacer.h"

namespace ts {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(Pacer, ReleasesEachEventAtItsExchangeTimeOffset) {
  Pacer p(/*speed=*/1.0, /*rate=*/0);
  std::atomic<bool> stop{false};
  const auto first = p.wait_until_due(100 * kSec, stop);
  ASSERT_TRUE(first.has_value());
  const auto second = p.wait_until_due(100 * kSec + 50'000'000, stop);  // 50 ms later
  ASSERT_TRUE(second.has_value());
  EXPECT_GE(*second - *first, 49'000'000);
  EXPECT_LT(*second - *first, 500'000'000);
}

TEST(Pacer, TheDeadlineEndsAWaitForALateEvent) {
  Pacer p(1.0, 0);
  std::atomic<bool> stop{false};
  ASSERT_TRUE(p.wait_until_due(0, stop).has_value());
  const int64_t t0 = mono_ns();
  // The next event is a minute away (a lunch break); the run ends in 200 ms.
  const auto r = p.wait_until_due(60 * kSec, stop, t0 + 200'000'000);
  const int64_t waited = mono_ns() - t0;
  EXPECT_FALSE(r.has_value()) << "an event due after the deadline was released";
  EXPECT_GE(waited, 190'000'000);
  EXPECT_LT(waited, 1 * kSec);
}

TEST(Pacer, StopEndsTheWait) {
  Pacer p(0, /*rate=*/0.1);  // one event per 10 s
  std::atomic<bool> stop{false};
  ASSERT_TRUE(p.wait_until_due(0, stop).has_value());
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  const int64_t t0 = mono_ns();
  const auto r = p.wait_until_due(1, stop);
  t.join();
  EXPECT_FALSE(r.has_value());
  EXPECT_LT(mono_ns() - t0, 1 * kSec);
}

TEST(Pacer, UnpacedNeverWaits) {
  Pacer p(0, 0);
  std::atomic<bool> stop{true};
  EXPECT_TRUE(p.wait_until_due(1000 * kSec, stop, 0).has_value());
}

}  // namespace
}  // namespace ts
