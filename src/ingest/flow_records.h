#pragma once
// Tick-by-tick records held in memory and put into replay order, for vendor files that are
// grouped by security (each security's rows in order, one security after another: sse-l3,
// szse-trades) rather than in exchange order.
//
// - FlowRecord: an order add/cancel or a trade, 64 bytes (an Event is ~390): a 5-stock day of
//   259,000 records is 17 MB.
// - order_flow(): sorts by (channel, channel sequence) — the exchange's own order, in which
//   orders and trades of a channel interleave — drops a repeated (channel, sequence) and a record
//   whose time goes backwards along its security's sequence (both counted as kOutOfOrder with
//   file and line), then puts everything in time order (stable: records of one time keep their
//   sequence order). Time, not the sequence, orders different securities: in the vendor's SSE
//   file a channel numbers one security's auction trades before another's earlier orders.
// - RecordSource: hands records (or already-built Events) out as a Source.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/input_errors.h"
#include "ingest/source.h"

namespace ts::ingest {

struct FlowRecord {
  int64_t exch_ts_ns = 0;
  uint64_t seq = 0;       // the channel's sequence number (ApplSeqNum)
  uint64_t id_a = 0;      // order: its number; trade: the buy order's number
  uint64_t id_b = 0;      // trade: the sell order's number
  Price price = 0;        // ticks
  Qty qty = 0;
  SymbolId symbol = kInvalidSymbol;
  uint32_t line = 0;      // line in its file, for reports
  uint16_t channel = 0;
  EventKind kind = EventKind::kTrade;  // kOrderAdd, kOrderCancel or kTrade
  Side side = Side::kNone;             // order: its side; trade: the aggressor
  uint8_t file = 0;                    // index into the file names given to order_flow()
};

inline Event to_event(const Event& e) { return e; }
Event to_event(const FlowRecord& r);

// See the header comment. `files[r.file]` names each record's file in reports.
void order_flow(std::vector<FlowRecord>& records, std::span<const std::string> files, InputErrors& errors);

template <typename Record>
class RecordSource final : public Source {
 public:
  RecordSource(std::vector<Record> records, std::string description)
      : records_(std::move(records)), description_(std::move(description)) {}
  size_t next_batch(std::span<Event> out) override {
    size_t n = 0;
    while (n < out.size() && next_ < records_.size()) out[n++] = to_event(records_[next_++]);
    if (next_ == records_.size() && !records_.empty()) {  // replayed: give the memory back
      std::vector<Record>().swap(records_);
      next_ = 0;
    }
    return n;
  }
  bool done() const override { return next_ >= records_.size(); }
  std::string describe() const override { return description_; }

 private:
  std::vector<Record> records_;
  size_t next_ = 0;
  std::string description_;
};

}  // namespace ts::ingest
