#include "serve/shard_port.h"

#include <algorithm>
#include <cstring>

namespace ts::serve {

const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::kNoSlot: return "no_slot";
    case DropReason::kRingFull: return "ring_full";
    case DropReason::kQueueFull: return "queue_full";
    case DropReason::kSuperseded: return "superseded";
    case DropReason::kExpired: return "deadline";
    case DropReason::kFailed: return "failed";
    case DropReason::kStopped: return "stopped";
    case DropReason::kCount: break;
  }
  return "unknown";
}

ShardPort::ShardPort(int shard, int rows, int features, size_t slots, size_t request_ring, int result_rings)
    : shard_(shard),
      rows_(rows),
      features_(features),
      slot_floats_(size_t(rows) * size_t(features)),
      slot_count_(std::max<size_t>(slots, 1)),
      data_(new float[slot_count_ * slot_floats_]()),
      requests_(std::make_unique<SpscRing<InferenceRequest>>(request_ring)) {
  free_.reserve(slot_count_);
  for (size_t i = slot_count_; i-- > 0;) free_.push_back(uint32_t(i));
  for (int i = 0; i < result_rings; ++i) {
    // A result ring must hold every request this shard can have out (one per slot), so a
    // producer never waits on a full result ring for long.
    results_.push_back(std::make_unique<SpscRing<InferenceResult>>(slot_count_));
  }
}

bool ShardPort::submit(Rows rows, const float* current_row, InferenceRequest r) {
  if (free_.empty()) {
    ++counts_.drops[int(DropReason::kNoSlot)];
    return false;
  }
  const uint32_t slot = free_.back();
  float* out = data_.get() + size_t(slot) * slot_floats_;
  const size_t row_bytes = size_t(features_) * sizeof(float);
  // Rows newest-last: `want` completed rows, then the current row if given.
  const size_t older_rows = rows.older.size() / size_t(features_);
  const int total = int(older_rows + rows.newer.size() / size_t(features_));
  auto row_back = [&](int age) {  // the row `age` rows back from the newest (0 = newest)
    const size_t k = size_t(total - 1 - age);
    return k < older_rows ? rows.older.data() + k * size_t(features_)
                          : rows.newer.data() + (k - older_rows) * size_t(features_);
  };
  const int want = current_row ? rows_ - 1 : rows_;
  const int have = std::min(total, want);
  const int pad = want - have;  // front rows repeated from the oldest we have
  for (int i = 0; i < want; ++i) {
    const int age = i < pad ? have - 1 : want - 1 - i;
    const float* src = have > 0 ? row_back(age) : current_row;
    std::memcpy(out + size_t(i) * size_t(features_), src, row_bytes);
  }
  if (current_row) std::memcpy(out + size_t(rows_ - 1) * size_t(features_), current_row, row_bytes);
  r.slot = slot;
  r.shard = uint16_t(shard_);
  if (!requests_->try_push(r)) {
    ++counts_.drops[int(DropReason::kRingFull)];
    return false;
  }
  free_.pop_back();
  ++counts_.requests;
  return true;
}

void ShardPort::account(const InferenceResult& r, int64_t now_ns) {
  switch (r.code) {
    case ResultCode::kOk:
      ++counts_.results_ok;
      if (r.fallback) ++counts_.fallback_ok;
      counts_.queue_wait.record(r.dispatch_ns - r.request.enqueue_ns);
      counts_.compute.record(r.done_ns - r.dispatch_ns);
      counts_.end_to_end.record(now_ns - r.request.enqueue_ns);
      if (r.request.t.recv_ns > 0) counts_.receive_to_score.record(now_ns - r.request.t.recv_ns);
      return;
    case ResultCode::kSuperseded: ++counts_.drops[int(DropReason::kSuperseded)]; return;
    case ResultCode::kExpired: ++counts_.drops[int(DropReason::kExpired)]; return;
    case ResultCode::kQueueFull: ++counts_.drops[int(DropReason::kQueueFull)]; return;
    case ResultCode::kFailed: ++counts_.drops[int(DropReason::kFailed)]; return;
    case ResultCode::kStopped: ++counts_.drops[int(DropReason::kStopped)]; return;
  }
}

}  // namespace ts::serve
