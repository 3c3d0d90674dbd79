// Dynamic batching policies of serve::Batcher, driven with made-up times (no threads, no sleeps).
#include "serve/batcher.h"

#include <gtest/gtest.h>

namespace ts::serve {
namespace {

constexpr int64_t kUs = 1000;

InferenceRequest req(SymbolId s, int64_t enqueue_ns, int64_t deadline_ns = INT64_MAX, uint32_t slot = 0) {
  InferenceRequest r;
  r.symbol = s;
  r.enqueue_ns = enqueue_ns;
  r.deadline_ns = deadline_ns;
  r.slot = slot;
  return r;
}

TEST(Batcher, FullBatchLeavesWhileTheDeviceIsBusy) {
  Batcher b({.max_batch = 4, .max_delay_us = 1000, .max_queue = 64});
  InferenceRequest old;
  for (SymbolId s = 0; s < 3; ++s) ASSERT_EQ(b.add(req(s, 0), old), Batcher::AddOutcome::kQueued);
  EXPECT_FALSE(b.due(10 * kUs, /*device_idle=*/false)) << "3 of 4, young, device busy: wait";
  ASSERT_EQ(b.add(req(3, 0), old), Batcher::AddOutcome::kQueued);
  EXPECT_TRUE(b.due(10 * kUs, false)) << "a full batch leaves at once";
  std::vector<InferenceRequest> out, expired;
  EXPECT_EQ(b.pop_batch(16, 10 * kUs, out, expired), 4u) << "never more than max_batch";
  EXPECT_TRUE(b.empty());
}

TEST(Batcher, PartialBatchLeavesWhenTheOldestHasWaitedMaxDelay) {
  Batcher b({.max_batch = 64, .max_delay_us = 500, .max_queue = 64});
  InferenceRequest old;
  b.add(req(1, 100 * kUs), old);
  b.add(req(2, 300 * kUs), old);
  EXPECT_EQ(b.due_at_ns(), 600 * kUs);
  EXPECT_FALSE(b.due(599 * kUs, false));
  EXPECT_TRUE(b.due(600 * kUs, false));
  std::vector<InferenceRequest> out, expired;
  ASSERT_EQ(b.pop_batch(64, 600 * kUs, out, expired), 2u);
  EXPECT_EQ(out[0].symbol, 1u) << "oldest first";
}

TEST(Batcher, IdleDeviceTakesWhateverWaits) {
  Batcher b({.max_batch = 64, .max_delay_us = 100000, .max_queue = 64});
  InferenceRequest old;
  EXPECT_FALSE(b.due(0, true)) << "nothing waits";
  b.add(req(7, 0), old);
  EXPECT_FALSE(b.due(1, false));
  EXPECT_TRUE(b.due(1, /*device_idle=*/true));
}

TEST(Batcher, LatestWinsPerSymbolKeepsThePlaceAndAge) {
  Batcher b({.max_batch = 8, .max_delay_us = 1000, .max_queue = 64});
  InferenceRequest old;
  b.add(req(5, 0, INT64_MAX, /*slot=*/11), old);
  b.add(req(6, 10 * kUs, INT64_MAX, 12), old);
  ASSERT_EQ(b.add(req(5, 50 * kUs, INT64_MAX, 13), old), Batcher::AddOutcome::kReplaced);
  EXPECT_EQ(old.slot, 11u) << "the older window is handed back to be answered";
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.due_at_ns(), 1000 * kUs) << "the symbol's wait counts from its first request";
  std::vector<InferenceRequest> out, expired;
  b.pop_batch(8, 60 * kUs, out, expired);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].symbol, 5u);
  EXPECT_EQ(out[0].slot, 13u) << "the newest window runs";
  EXPECT_EQ(out[1].symbol, 6u);
  // Once popped, a symbol queues afresh.
  EXPECT_EQ(b.add(req(5, 70 * kUs), old), Batcher::AddOutcome::kQueued);
}

TEST(Batcher, ExpiredRequestsAreTakenOutNeverRun) {
  Batcher b({.max_batch = 8, .max_delay_us = 1000, .max_queue = 64});
  InferenceRequest old;
  b.add(req(1, 0, /*deadline=*/100 * kUs), old);
  b.add(req(2, 0, 300 * kUs), old);
  b.add(req(3, 0, 900 * kUs), old);
  std::vector<InferenceRequest> expired;
  EXPECT_EQ(b.take_expired(200 * kUs, expired), 1u);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].symbol, 1u);
  std::vector<InferenceRequest> out;
  expired.clear();
  b.pop_batch(8, 400 * kUs, out, expired);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].symbol, 3u);
  ASSERT_EQ(expired.size(), 1u) << "an expired request met while popping is set aside";
  EXPECT_EQ(expired[0].symbol, 2u);
}

TEST(Batcher, QueueIsBoundedAndSaysSo) {
  Batcher b({.max_batch = 8, .max_delay_us = 1000, .max_queue = 4});
  InferenceRequest old;
  for (SymbolId s = 0; s < 4; ++s) ASSERT_EQ(b.add(req(s, 0), old), Batcher::AddOutcome::kQueued);
  EXPECT_EQ(b.add(req(99, 0), old), Batcher::AddOutcome::kFull);
  EXPECT_EQ(b.add(req(2, 5), old), Batcher::AddOutcome::kReplaced) << "a symbol already waiting still replaces";
  EXPECT_EQ(b.size(), 4u);
}

}  // namespace
}  // namespace ts::serve
