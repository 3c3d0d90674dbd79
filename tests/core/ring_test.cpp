#include <gtest/gtest.h>

#include <thread>

#include "core/spsc_ring.h"

namespace ts {
namespace {

TEST(SpscRing, RoundsCapacityUpAndReportsFull) {
  SpscRing<int> ring(5);
  EXPECT_EQ(ring.capacity(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(ring.try_push(i));
  EXPECT_FALSE(ring.try_push(99)) << "a full ring must refuse, not overwrite";
  int v = -1;
  EXPECT_TRUE(ring.try_pop(v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ring.try_push(8));
}

// `[pipeline] event_ring = -1` reached the ring as 2^64 - 1: rounding up to a power of two
// overflowed to 0 and spun forever. Any capacity now either builds or throws at once.
TEST(SpscRing, HugeCapacityThrowsInsteadOfSpinning) {
  EXPECT_THROW(SpscRing<int>(size_t(-1)), std::length_error);
  EXPECT_THROW(SpscRing<int>((size_t(1) << 63) + 1), std::length_error);
  EXPECT_EQ(SpscRing<int>(0).capacity(), 1u);
  EXPECT_EQ(SpscRing<char>(size_t(1) << 20).capacity(), size_t(1) << 20);
}

TEST(SpscRing, EmptyPopFails) {
  SpscRing<int> ring(4);
  int v = 7;
  EXPECT_FALSE(ring.try_pop(v));
  EXPECT_EQ(v, 7);
}

TEST(SpscRing, TwoThreadsDeliverEverythingInOrder) {
  SpscRing<uint64_t> ring(1024);
  constexpr uint64_t kN = 200'000;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kN;) {
      if (ring.try_push(i)) ++i;
    }
  });
  uint64_t expected = 0, v = 0;
  while (expected < kN) {
    if (ring.try_pop(v)) {
      ASSERT_EQ(v, expected);
      ++expected;
    }
  }
  producer.join();
  EXPECT_FALSE(ring.try_pop(v));
}

}  // namespace
}  // namespace ts
