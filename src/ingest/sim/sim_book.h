#pragma once
// The simulator's own per-symbol L3 book. It exists so that every event the simulator emits is
// consistent: a cancel or execute always names an order that rests, at that order's price and
// side, for no more than its remaining size; adds never cross; executions never reach an empty
// side. Fixed-size storage (kSimMaxLevels levels a side, kSimMaxOrders orders a level, FIFO):
// no allocation after construction.
#include <cstdint>

#include "core/event.h"

namespace ts::sim {

constexpr int kSimMaxLevels = 16;   // price levels kept per side
constexpr int kSimMaxOrders = 12;   // resting orders kept per level
// Largest number of events one SimBook call can emit (a full level evicted plus the add, or a
// sweep of kMaxSweepOrders orders as execute + trade pairs).
constexpr int kMaxSweepOrders = 24;
constexpr int kMaxEventsPerBookCall = 2 * kMaxSweepOrders;

// Where a simulator step writes its events; stamps symbol, seq and exchange time.
struct EventWriter {
  Event* out = nullptr;
  size_t n = 0;
  uint64_t* seq = nullptr;
  int64_t exch_ts_ns = 0;
  SymbolId symbol = kInvalidSymbol;

  Event& push(EventKind kind) {
    Event& e = out[n++];
    e.kind = kind;
    e.symbol = symbol;
    e.seq = (*seq)++;
    e.exch_ts_ns = exch_ts_ns;
    e.recv_ts_ns = 0;
    return e;
  }
  void order(EventKind kind, uint64_t id, Price price, Qty qty, Side side) {
    push(kind).order = OrderBody{id, price, qty, side};
  }
  void trade(Price price, Qty qty, Side aggressor, uint64_t buy_id, uint64_t sell_id) {
    push(EventKind::kTrade).trade = TradeBody{price, qty, aggressor, buy_id, sell_id};
  }
  void status(Phase phase) { push(EventKind::kStatus).status = StatusBody{phase}; }
};

struct SimOrder {
  uint32_t local_id = 0;  // global id = id_base | local_id
  int32_t qty = 0;        // shares remaining
};

struct SimLevel {
  Price price = 0;
  Qty qty = 0;  // sum of the orders' qty
  int32_t count = 0;
  SimOrder orders[kSimMaxOrders];  // FIFO: [0] is first in time priority
};

// One side, best level first (bids: highest price first; asks: lowest first). Levels live in
// fixed slots; `rank` orders them, so inserting or removing a level moves a few bytes, not levels.
struct SimSide {
  int levels = 0;
  int orders = 0;  // resting orders on this side
  uint8_t rank[kSimMaxLevels] = {};  // rank[i] = slot of the i-th best level
  uint32_t free_slots = (1u << kSimMaxLevels) - 1;  // bit per unused slot
  SimLevel slot[kSimMaxLevels];

  bool empty() const { return levels == 0; }
  const SimLevel& level(int i) const { return slot[rank[i]]; }
  SimLevel& level(int i) { return slot[rank[i]]; }
  Price best() const { return level(0).price; }
};

class SimBook {
 public:
  // `symbol_index` makes order ids unique across symbols: id = (symbol_index + 1) << 32 | n.
  void init(uint32_t symbol_index) { id_base_ = uint64_t(symbol_index + 1) << 32; }

  const SimSide& side(Side s) const { return s == Side::kBuy ? bids_ : asks_; }
  const SimSide& bids() const { return bids_; }
  const SimSide& asks() const { return asks_; }
  bool has_bbo() const { return !bids_.empty() && !asks_.empty(); }
  // Mid in ticks; one side's best when the other is empty; 0 when both are.
  double mid() const;
  int total_orders() const { return bids_.orders + asks_.orders; }

  uint64_t new_order_id() { return id_base_ | ++next_local_; }
  uint64_t order_id(const SimOrder& o) const { return id_base_ | o.local_id; }

  // Rests a new order of `qty` shares at `price` and emits kOrderAdd. When the side already
  // holds kSimMaxLevels levels and `price` is a new level better than the worst, the worst
  // level's orders are cancelled first (emitted). Returns false, emitting nothing, when the
  // order cannot rest: it would cross the other side, its level is full, or it is worse than a
  // full side's worst level. Returns the new order's id, or 0 if it did not rest. Callers keep
  // `price` inside the limit band.
  uint64_t add(Side side, Price price, Qty qty, EventWriter& w);
  // Cancels `qty` shares (<= remaining) of order `order` at level `level` of `side`; emits
  // kOrderCancel with the order's id, price and side.
  void cancel(Side side, int level, int order, Qty qty, EventWriter& w);
  // Finds a resting order by global id; false if it is no longer in the book.
  bool find(Side side, uint64_t id, int* level, int* order) const;
  // An incoming marketable order of side `aggressor` takes liquidity from the other side in
  // price-time priority at prices no worse than `limit`, for at most `qty` shares and
  // `max_orders` resting orders (<= kMaxSweepOrders). Each fill emits kOrderExecute (side = the
  // resting order's side) then kTrade (aggressor set, both order ids). The unfilled remainder
  // is dropped (immediate-or-cancel). Returns the shares filled.
  Qty take(Side aggressor, Price limit, Qty qty, int max_orders, EventWriter& w);

 private:
  SimSide& side_mut(Side s) { return s == Side::kBuy ? bids_ : asks_; }
  void remove_level(SimSide& s, int i);

  SimSide bids_;
  SimSide asks_;
  uint64_t id_base_ = 0;
  uint32_t next_local_ = 0;
};

}  // namespace ts::sim
