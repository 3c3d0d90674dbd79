#pragma once
// same_event(): whether two events carry the same fields, as the file and wire formats write
// them (recv_ts_ns and the symbol id are not compared; a union's unused bytes are not looked at).
// For the round-trip checks of the fuzz targets (csv_fuzz, wire_fuzz).
#include "core/event.h"

namespace ts::fuzz {

inline bool same_event(const Event& a, const Event& b) {
  if (a.kind != b.kind || a.seq != b.seq || a.exch_ts_ns != b.exch_ts_ns) return false;
  switch (a.kind) {
    case EventKind::kSnapshot: {
      const auto &x = a.snapshot, &y = b.snapshot;
      for (int i = 0; i < kBookLevels; ++i) {
        if (x.bids[i].price != y.bids[i].price || x.bids[i].qty != y.bids[i].qty) return false;
        if (x.asks[i].price != y.asks[i].price || x.asks[i].qty != y.asks[i].qty) return false;
      }
      return x.last == y.last && x.prev_close == y.prev_close && x.cum_volume == y.cum_volume &&
             x.cum_turnover == y.cum_turnover && x.phase == y.phase && x.resync == y.resync;
    }
    case EventKind::kTrade:
      return a.trade.price == b.trade.price && a.trade.qty == b.trade.qty && a.trade.aggressor == b.trade.aggressor &&
             a.trade.buy_order_id == b.trade.buy_order_id && a.trade.sell_order_id == b.trade.sell_order_id;
    case EventKind::kStatus:
      return a.status.phase == b.status.phase;
    default:
      return a.order.order_id == b.order.order_id && a.order.price == b.order.price && a.order.qty == b.order.qty &&
             a.order.side == b.order.side;
  }
}

}  // namespace ts::fuzz
