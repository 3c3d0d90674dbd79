#include "ingest/merge_source.h"

namespace ts {

MergeSource::MergeSource(std::vector<std::unique_ptr<Source>> inputs, MergeOrder order,
                         std::string description)
    : order_(order), description_(std::move(description)) {
  inputs_.reserve(inputs.size());
  for (auto& s : inputs) {
    Input in;
    in.source = std::move(s);
    in.buf.resize(kInputBatch);
    inputs_.push_back(std::move(in));
  }
  done_ = inputs_.empty();
}

bool MergeSource::prime(Input& in) {
  if (in.pos < in.len) return true;
  if (in.exhausted) return false;
  in.pos = 0;
  in.len = in.source->next_batch(std::span<Event>(in.buf));
  if (in.len == 0 && in.source->done()) in.exhausted = true;
  return in.len > 0;
}

bool MergeSource::before(const Event& a, size_t ia, const Event& b, size_t ib) const {
  if (a.exch_ts_ns != b.exch_ts_ns) return a.exch_ts_ns < b.exch_ts_ns;
  if (order_ == MergeOrder::kTimeThenSeq) {
    const bool sa = a.kind == EventKind::kSnapshot, sb = b.kind == EventKind::kSnapshot;
    if (sa != sb) return sb;
    if (a.seq != b.seq) return a.seq < b.seq;
  }
  return ia < ib;
}

size_t MergeSource::next_batch(std::span<Event> out) {
  size_t n = 0;
  while (n < out.size()) {
    // PERF NOTE: linear scan; merges here have a handful of inputs, where a heap costs more.
    size_t best = inputs_.size();
    bool waiting = false;  // a live input has nothing now: cannot know the next event yet
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Input& in = inputs_[i];
      if (!prime(in)) {
        if (!in.exhausted) waiting = true;
        continue;
      }
      if (best == inputs_.size() ||
          before(in.buf[in.pos], i, inputs_[best].buf[inputs_[best].pos], best)) {
        best = i;
      }
    }
    if (waiting || best == inputs_.size()) {
      if (best == inputs_.size() && !waiting) done_ = true;
      break;
    }
    Input& in = inputs_[best];
    out[n++] = in.buf[in.pos++];
  }
  return n;
}

}  // namespace ts
