#pragma once
// MergeSource: merges several sources into one stream in exchange-time order.
// Used for several files of one format (LOBSTER days of several symbols, several csv files)
// and inside the SSE source (orders, trades and snapshots of one day).
//
// Order: by exch_ts_ns; ties broken per MergeOrder:
//   kTimeThenInput — by input index (a stable merge: inputs listed first win ties);
//   kTimeThenSeq   — non-snapshot events first, then by seq, then by input index (SSE: orders
//                    and trades share the exchange's BizIndex sequence, so equal-millisecond
//                    orders and trades interleave exactly as the matching engine did them;
//                    snapshots, which lag the order flow, come after the flow of their instant).
// Each input must itself be in time order (file sources drop out-of-order records).
// Threading: driven by one thread, like any Source.
#include <memory>
#include <string>
#include <vector>

#include "ingest/source.h"

namespace ts {

enum class MergeOrder { kTimeThenInput, kTimeThenSeq };

class MergeSource : public Source {
 public:
  MergeSource(std::vector<std::unique_ptr<Source>> inputs, MergeOrder order, std::string description);

  size_t next_batch(std::span<Event> out) override;
  bool done() const override { return done_; }
  std::string describe() const override { return description_; }
  void feed_counters(FeedCounters& out) const override {
    for (const Input& in : inputs_) in.source->feed_counters(out);
  }

 private:
  struct Input {
    std::unique_ptr<Source> source;
    std::vector<Event> buf;
    size_t pos = 0;
    size_t len = 0;
    bool exhausted = false;
  };
  static constexpr size_t kInputBatch = 256;

  // Makes sure input `i` has a buffered event unless it is exhausted; false if none now.
  bool prime(Input& in);
  bool before(const Event& a, size_t ia, const Event& b, size_t ib) const;

  std::vector<Input> inputs_;
  MergeOrder order_;
  std::string description_;
  bool done_ = false;
};

}  // namespace ts
