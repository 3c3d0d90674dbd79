#include "ingest/flow_records.h"

#include <algorithm>
#include <cstdint>

#include "ingest/field_parse.h"

namespace ts::ingest {

static_assert(sizeof(FlowRecord) == 64, "FlowRecord stays one cache line");

Event to_event(const FlowRecord& r) {
  Event e = Event::make(r.kind);
  e.symbol = r.symbol;
  e.seq = r.seq;
  e.exch_ts_ns = r.exch_ts_ns;
  if (r.kind == EventKind::kTrade) {
    e.trade = TradeBody{r.price, r.qty, r.side, r.id_a, r.id_b};
  } else {
    e.order = OrderBody{r.id_a, r.price, r.qty, r.side};
  }
  return e;
}

void order_flow(std::vector<FlowRecord>& records, std::span<const std::string> files, InputErrors& errors) {
  std::sort(records.begin(), records.end(), [](const FlowRecord& a, const FlowRecord& b) {
    return a.channel != b.channel ? a.channel < b.channel : a.seq < b.seq;
  });
  auto name = [&](const FlowRecord& r) -> std::string_view {
    return r.file < files.size() ? base_name(files[r.file]) : std::string_view("?");
  };
  // A security's records follow its channel's sequence in time. (Across the securities of a
  // channel they need not: SSE 2023-07-11 numbers 600761's 09:25 auction trades 250-294, before
  // 600961's 09:15 orders from 295 on.)
  std::vector<int64_t> last_ts;
  size_t kept = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const FlowRecord& r = records[i];
    if (kept > 0 && records[kept - 1].channel == r.channel && records[kept - 1].seq == r.seq) {
      errors.report(InputError::kOutOfOrder, name(r), r.line, "repeated ApplSeqNum in its channel");
      continue;
    }
    if (r.symbol >= last_ts.size()) last_ts.resize(size_t(r.symbol) + 1, INT64_MIN);
    if (r.exch_ts_ns < last_ts[r.symbol]) {
      errors.report(InputError::kOutOfOrder, name(r), r.line, "time goes backwards along the security's ApplSeqNum");
      continue;
    }
    last_ts[r.symbol] = r.exch_ts_ns;
    records[kept++] = r;
  }
  records.resize(kept);
  std::stable_sort(records.begin(), records.end(),
                   [](const FlowRecord& a, const FlowRecord& b) { return a.exch_ts_ns < b.exch_ts_ns; });
}

}  // namespace ts::ingest
