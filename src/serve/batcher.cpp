#include "serve/batcher.h"

#include <algorithm>
#include <bit>
#include <climits>

namespace ts::serve {

Batcher::Batcher(BatcherOptions opts) : opts_(opts) {
  opts_.max_batch = std::max(1, opts_.max_batch);
  const size_t cap = std::bit_ceil(std::clamp<size_t>(opts_.max_queue, 1, size_t(1) << 32));  // no loop to overflow
  opts_.max_queue = cap;
  ring_.resize(cap);
  mask_ = cap - 1;
}

Batcher::AddOutcome Batcher::add(const InferenceRequest& r, InferenceRequest& superseded) {
  if (opts_.latest_wins && r.symbol < position_by_symbol_.size()) {
    if (const uint64_t pos = position_by_symbol_[r.symbol]) {
      Entry& e = at(pos - 1);
      superseded = e.req;
      e.req = r;  // keeps e.first_enqueue_ns: the symbol's wait counts from its first request
      return AddOutcome::kReplaced;
    }
  }
  if (size() >= opts_.max_queue) return AddOutcome::kFull;
  if (r.symbol >= position_by_symbol_.size()) position_by_symbol_.resize(size_t(r.symbol) + 1024, 0);
  Entry& e = at(tail_);
  e.req = r;
  e.first_enqueue_ns = r.enqueue_ns;
  position_by_symbol_[r.symbol] = ++tail_;  // index + 1
  return AddOutcome::kQueued;
}

InferenceRequest Batcher::pop_front() {
  const InferenceRequest r = at(head_).req;
  // Without latest-wins a symbol may wait several times; only its newest entry is indexed.
  if (position_by_symbol_[r.symbol] == head_ + 1) position_by_symbol_[r.symbol] = 0;
  ++head_;
  return r;
}

size_t Batcher::take_expired(int64_t now_ns, std::vector<InferenceRequest>& out) {
  size_t n = 0;
  while (head_ != tail_ && at(head_).req.deadline_ns < now_ns) {
    out.push_back(pop_front());
    ++n;
  }
  return n;
}

int64_t Batcher::due_at_ns() const {
  if (head_ == tail_) return INT64_MAX;
  return at(head_).first_enqueue_ns + opts_.max_delay_us * 1000;
}

bool Batcher::due(int64_t now_ns, bool device_idle) const {
  if (head_ == tail_) return false;
  if (device_idle) return true;
  if (size() >= size_t(opts_.max_batch)) return true;
  return now_ns >= due_at_ns();
}

size_t Batcher::pop_batch(size_t max, int64_t now_ns, std::vector<InferenceRequest>& out,
                          std::vector<InferenceRequest>& expired) {
  out.clear();
  max = std::min(max, size_t(opts_.max_batch));
  while (out.size() < max && head_ != tail_) {
    InferenceRequest r = pop_front();
    if (r.deadline_ns < now_ns) {
      expired.push_back(r);
    } else {
      out.push_back(r);
    }
  }
  return out.size();
}

}  // namespace ts::serve
