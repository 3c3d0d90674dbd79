#pragma once
// ShardPort: one shard's side of the model server. The shard thread copies a symbol's window
// into a free slot of its arena and queues a request naming the slot; results (one per request,
// whatever its code) come back on rings the shard polls, and polling returns the slot.
//
// Threading: submit() and poll() are called by the owning shard thread only. The server's
// scheduler thread pops requests and reads the slots they name; it and each worker thread push
// results to their own ring (one producer per ring), so nothing here takes a lock.
// Memory: slots × T × F floats, allocated once at construction.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/clock.h"
#include "core/latency_histogram.h"
#include "core/spsc_ring.h"
#include "serve/inference_request.h"

namespace ts::serve {

// Why a request was not queued or not answered with a probability. Counted per shard.
enum class DropReason : uint8_t { kNoSlot = 0, kRingFull, kQueueFull, kSuperseded, kExpired, kFailed, kStopped, kCount };
constexpr int kDropReasonCount = int(DropReason::kCount);
const char* drop_reason_name(DropReason r);

struct ShardServeCounts {
  uint64_t requests = 0;                       // submit() calls that queued a request
  uint64_t results_ok = 0;
  uint64_t fallback_ok = 0;                    // of results_ok, those the CPU fallback produced
  uint64_t shadow_ok = 0;                      // shadow version results (not in results_ok)
  uint64_t drops[kDropReasonCount] = {};
  LatencyHistogram queue_wait;                 // enqueue → batch dispatch
  LatencyHistogram compute;                    // dispatch → outputs ready (the batch's run)
  LatencyHistogram end_to_end;                 // enqueue → result seen by the shard
  LatencyHistogram receive_to_score;           // the event's receive → its result seen by the shard
                                               // (requests that carry a receive time)
};

class ShardPort {
 public:
  // rows × features: the model's window; result_rings: 1 (scheduler) + workers.
  ShardPort(int shard, int rows, int features, size_t slots, size_t request_ring, int result_rings);
  ShardPort(const ShardPort&) = delete;
  ShardPort& operator=(const ShardPort&) = delete;

  // A symbol's completed rows, oldest → newest, as one or two contiguous runs of whole rows of
  // features() floats each (a ring buffer's older and newer halves, e.g.
  // FeatureWindow::window_runs(); `newer` may be empty). The port reads them, never keeps them.
  struct Rows {
    std::span<const float> older;
    std::span<const float> newer;
  };

  // Shard thread. Copies the last rows of `rows` (padding at the front with its oldest row
  // when it holds fewer than rows(); it must hold at least one row, or a `current_row`) — and,
  // when `current_row` (features() floats) is not null, uses it as the newest row after
  // rows()-1 completed rows — into a free slot, and queues a request. Returns false (counted as
  // kNoSlot or kRingFull) when it cannot.
  bool submit(Rows rows, const float* current_row, InferenceRequest r);

  // Shard thread. Calls on_result(const InferenceResult&, const float* window) for each result
  // waiting (up to max), then frees its slot; records counts and latencies. Returns the number.
  // Shadow results (r.shadow) free nothing and get window = nullptr: their slot has already
  // been returned by the serving version's result.
  template <typename F>
  size_t poll(F&& on_result, size_t max = 256);

  // Scheduler/worker side.
  SpscRing<InferenceRequest>& requests() { return *requests_; }
  SpscRing<InferenceResult>& results(int ring) { return *results_[size_t(ring)]; }
  const float* slot_data(uint32_t slot) const { return data_.get() + size_t(slot) * slot_floats_; }

  int shard() const { return shard_; }
  int rows() const { return rows_; }
  int features() const { return features_; }
  size_t slot_floats() const { return slot_floats_; }
  size_t free_slots() const { return free_.size(); }
  size_t slot_count() const { return slot_count_; }
  const ShardServeCounts& counts() const { return counts_; }  // shard thread (or after stop)

 private:
  void account(const InferenceResult& r, int64_t now_ns);

  int shard_, rows_, features_;
  size_t slot_floats_, slot_count_;
  std::unique_ptr<float[]> data_;
  std::vector<uint32_t> free_;   // free slot ids (a stack)
  std::unique_ptr<SpscRing<InferenceRequest>> requests_;
  std::vector<std::unique_ptr<SpscRing<InferenceResult>>> results_;
  size_t next_ring_ = 0;         // round-robin start for poll fairness
  ShardServeCounts counts_;
};

template <typename F>
size_t ShardPort::poll(F&& on_result, size_t max) {
  size_t n = 0;
  InferenceResult r;
  int64_t now_ns = 0;
  for (size_t k = 0; k < results_.size() && n < max; ++k) {
    auto& ring = *results_[(next_ring_ + k) % results_.size()];
    while (n < max && ring.try_pop(r)) {
      if (now_ns == 0) now_ns = mono_ns();
      if (r.shadow) {
        ++counts_.shadow_ok;
        on_result(r, static_cast<const float*>(nullptr));
        ++n;
        continue;
      }
      account(r, now_ns);
      on_result(r, slot_data(r.request.slot));
      free_.push_back(r.request.slot);
      ++n;
    }
  }
  next_ring_ = (next_ring_ + 1) % results_.size();
  return n;
}

}  // namespace ts::serve
