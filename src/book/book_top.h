#pragma once
// What every stage after the book sees of a symbol's book: the top 10 levels a side and the
// day's running totals. Written by the shard that owns the symbol; read on that shard only.
#include <cstdint>

#include "core/event.h"

namespace ts {

struct BookTop {
  Level bids[kBookLevels];  // best first; unused levels are {0, 0}
  Level asks[kBookLevels];  // best first; unused levels are {0, 0}
  int bid_levels = 0;       // levels in use
  int ask_levels = 0;
  Price last = 0;           // last trade price, ticks; 0 before the first trade
  Qty cum_volume = 0;       // shares traded today (from snapshots, or summed from trades)
  double cum_turnover = 0;  // currency traded today
  // The phase of the last event: the feed's, refined by the instrument's schedule where BookSet
  // has a PhaseResolver (book/phase_resolver.h); the feed's alone otherwise.
  Phase phase = Phase::kUnknown;
  // From the schedule (0 without one): exchange-local time = UTC + local_offset_s, and the
  // schedule's market (MarketKind as an integer: 1 cn-a, 2 us, 3 crypto).
  int32_t local_offset_s = 0;
  uint8_t schedule_market = 0;
  int64_t update_ts_ns = 0; // exchange time of the last change
  Price prev_close = 0;     // previous close, ticks, from snapshots; 0 = not seen (see RefData)
  // Changes (BookSet increments it) whenever bids/asks/bid_levels/ask_levels change, so a
  // consumer may cache what it derives from the levels per (book, version). 0 = unknown (a book
  // made by hand): never cache. BookSet's books start at 1 and
  // skip 0 when the counter wraps.
  uint32_t levels_version = 0;

  bool has_bbo() const { return bid_levels > 0 && ask_levels > 0; }
  Price best_bid() const { return bid_levels ? bids[0].price : 0; }
  Price best_ask() const { return ask_levels ? asks[0].price : 0; }
  // Mid in ticks (may be x.5); falls back to the one side present, then to last.
  double mid() const {
    if (has_bbo()) return 0.5 * double(bids[0].price + asks[0].price);
    if (bid_levels) return double(bids[0].price);
    if (ask_levels) return double(asks[0].price);
    return double(last);
  }
};

}  // namespace ts
