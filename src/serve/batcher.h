#pragma once
// Batcher: the dynamic batching policy, as a single-threaded queue with an explicit clock (the
// scheduler thread owns it; tests drive it with made-up times).
//
// - Bounded: at most `max_queue` requests wait; add() refuses more (the caller answers the
//   request as dropped and counts it). Back-pressure is a return value, not an error.
// - Latest-wins: a newer request of a symbol already waiting takes the older one's place in
//   the queue (and its age, so a busy symbol is not starved); the older one is handed back to be
//   answered kSuperseded.
// - A batch is due when `max_batch` requests wait, when the oldest has waited `max_delay_us`,
//   or at once when the device is idle (no batch in flight).
// - Requests whose deadline has passed are never run: take_expired() takes them from the front,
//   pop_batch() sets aside any it meets (a replaced entry keeps its place but takes the newer
//   request's deadline, so deadlines are only nearly in queue order).
// Cost: O(1) per add, O(batch) per pop; allocates only when a new symbol id extends the index.
#include <cstdint>
#include <optional>
#include <vector>

#include "serve/inference_request.h"

namespace ts::serve {

struct BatcherOptions {
  int max_batch = 256;            // requests per batch (capped by the plan's max profile batch)
  int64_t max_delay_us = 200;     // oldest request's wait before a partial batch leaves (busy device)
  size_t max_queue = 1 << 16;     // requests waiting at most (rounded up to a power of two)
  bool latest_wins = true;        // false: every request queues (lossless replay)
};

class Batcher {
 public:
  explicit Batcher(BatcherOptions opts);

  enum class AddOutcome : uint8_t { kQueued, kReplaced, kFull };
  // Queues `r`. kReplaced: `superseded` holds the older request of the same symbol (answer it).
  // kFull: `r` was not queued (answer it as dropped).
  AddOutcome add(const InferenceRequest& r, InferenceRequest& superseded);

  // Moves every waiting request whose deadline_ns < now_ns into `out` (appended).
  size_t take_expired(int64_t now_ns, std::vector<InferenceRequest>& out);

  // Whether a batch should leave now.
  bool due(int64_t now_ns, bool device_idle) const;
  // mono_ns at which the oldest request reaches max_delay (INT64_MAX when empty).
  int64_t due_at_ns() const;

  // Moves up to `max` (≤ max_batch) oldest requests still within their deadline into `out`
  // (cleared first); expired ones met on the way are appended to `expired`. Returns out.size().
  size_t pop_batch(size_t max, int64_t now_ns, std::vector<InferenceRequest>& out,
                   std::vector<InferenceRequest>& expired);

  size_t size() const { return size_t(tail_ - head_); }
  bool empty() const { return size() == 0; }
  const BatcherOptions& options() const { return opts_; }

 private:
  struct Entry {
    InferenceRequest req;
    int64_t first_enqueue_ns = 0;  // the oldest request this entry replaced (its age counts)
  };
  Entry& at(uint64_t i) { return ring_[i & mask_]; }
  const Entry& at(uint64_t i) const { return ring_[i & mask_]; }
  InferenceRequest pop_front();

  BatcherOptions opts_;
  std::vector<Entry> ring_;
  uint64_t mask_ = 0;
  uint64_t head_ = 0, tail_ = 0;   // waiting entries are [head_, tail_), oldest first
  // position_by_symbol_[s] = (index in ring) + 1 of s's waiting entry, or 0.
  std::vector<uint64_t> position_by_symbol_;
};

}  // namespace ts::serve
