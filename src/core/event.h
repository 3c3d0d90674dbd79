#pragma once
// Normalized market-data events. Everything downstream of a source works on `Event`.
// Prices are integer ticks of the symbol's tick size (RefData::tick_size); sizes are shares;
// times are int64 nanoseconds: exchange time since the Unix epoch, receive time on the
// process's monotonic clock (core/clock.h), so receive→alert latencies subtract cleanly.
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ts {

using SymbolId = uint32_t;
using Price = int64_t;   // ticks
using Qty = int64_t;     // shares (or contracts)
constexpr SymbolId kInvalidSymbol = UINT32_MAX;
constexpr int kBookLevels = 10;

enum class EventKind : uint8_t {
  kSnapshot = 0,   // L2 snapshot: 10 levels a side, last, cumulative volume/turnover
  kTrade,          // a print: price, size, aggressor
  kOrderAdd,       // L3: new limit order
  kOrderCancel,    // L3: partial or full cancel of a resting order
  kOrderExecute,   // L3: execution against a resting order (side = resting order's side)
  kStatus,         // trading status change: halt, resume, auction
};
constexpr int kEventKindCount = 6;
const char* event_kind_name(EventKind kind);

enum class Side : int8_t { kNone = 0, kBuy = 1, kSell = -1 };

enum class Phase : uint8_t {
  kUnknown = 0,
  kPreOpen,          // before the opening auction
  kOpeningAuction,   // A-share 09:15-09:25 call auction
  kContinuous,
  kBreak,            // lunch break
  kClosingAuction,   // A-share 14:57-15:00
  kClosed,
  kHalted,
};
const char* phase_name(Phase phase);

struct Level {
  Price price = 0;  // 0 with qty 0: empty level
  Qty qty = 0;
};

struct SnapshotBody {
  Level bids[kBookLevels];  // best first
  Level asks[kBookLevels];  // best first
  Price last = 0;
  Price prev_close = 0;
  Qty cum_volume = 0;        // shares traded so far today
  double cum_turnover = 0;   // currency traded so far today
  Phase phase = Phase::kUnknown;
  // 1 = the snapshot is the vendor's authoritative book state: its levels replace the rebuilt
  // book even for symbols with L3 flow (within the snapshot's depth, see book/book_set.h);
  // 0 = an ordinary L2 snapshot (lags L3 flow; seeds the book only before any L3 event).
  uint8_t resync = 0;
};

struct TradeBody {
  Price price = 0;
  Qty qty = 0;
  Side aggressor = Side::kNone;  // kNone in auctions or where the feed does not say
  uint64_t buy_order_id = 0;
  uint64_t sell_order_id = 0;
};

struct OrderBody {
  uint64_t order_id = 0;
  Price price = 0;
  Qty qty = 0;        // add: size; cancel: size removed; execute: size filled
  Side side = Side::kNone;
};

struct StatusBody {
  Phase phase = Phase::kUnknown;
};

struct Event {
  EventKind kind = EventKind::kTrade;
  SymbolId symbol = kInvalidSymbol;
  uint64_t seq = 0;          // source sequence number (line number for files)
  int64_t exch_ts_ns = 0;    // exchange time, ns since Unix epoch
  int64_t recv_ts_ns = 0;    // receive time, monotonic ns (stamped by the source/replayer)
  union {
    SnapshotBody snapshot;
    TradeBody trade;
    OrderBody order;
    StatusBody status;
  };

  Event() : trade() {}
  static Event make(EventKind kind) {
    Event e;
    e.kind = kind;
    switch (kind) {
      case EventKind::kSnapshot: e.snapshot = SnapshotBody{}; break;
      case EventKind::kTrade: e.trade = TradeBody{}; break;
      case EventKind::kStatus: e.status = StatusBody{}; break;
      default: e.order = OrderBody{}; break;
    }
    return e;
  }
};
static_assert(std::is_trivially_copyable_v<Event>, "events travel through rings by memcpy");

}  // namespace ts
