#pragma once
// BookSet: the order books of the symbols one shard owns, indexed by dense symbol id.
//
// Event semantics (per symbol):
// - kSnapshot (L2 feeds) replaces the price levels, last, prev_close, cum volume/turnover and
//   phase. A snapshot that is crossed (best bid >= best ask) outside a call auction is rejected
//   and counted (kCrossedBook); the book stays as it was.
//   Once the symbol has seen L3 order flow, ordinary snapshots (resync = 0) lag the flow: they
//   no longer touch the levels, only last (until a trade has been seen), prev_close, cum volume/turnover and phase.
//   A snapshot received BEFORE any L3 event seeds the L3 book: its levels become anonymous
//   resting depth at those prices (LOBSTER: the book before the first message) -- unless it was
//   taken in a call auction or pre-open: such snapshots show the indicative match (bid = ask =
//   the auction price), not resting orders, so the first L3 event clears them (SSE).
//   A snapshot with resync = 1 (the vendor's authoritative book, e.g. LOBSTER's orderbook row
//   where the messages do not explain it) replaces the levels even after L3 flow: on each side,
//   every level at or better than the snapshot's worst non-empty level becomes the snapshot's
//   (anonymous resting depth, re-seeded at those prices); levels strictly worse than it are
//   kept, because a snapshot of limited depth (LOBSTER files of 1 or 5 levels, 10 at most here)
//   says nothing about them and they are the best knowledge of the book below. A side the
//   snapshot shows empty is cleared (any depth shows the best level). Crossed outside a call
//   auction: rejected like any snapshot. The order map (SSE) is not touched: a resync fixes the
//   levels only. Before any L3 event a resync snapshot acts as an ordinary one.
// - kOrderAdd / kOrderCancel / kOrderExecute (L3) maintain full depth by price level.
//   Cancel/execute carry the resting order's price and side (LOBSTER, simulator); where they do
//   not (SSE deletes by number), the price comes from the order map (see OrderTracking). A
//   cancel whose order is unknown and that carries no price → kUnknownOrder, rejected. A
//   cancel/execute at a price with no level (depth beyond what the feed showed) changes nothing
//   and is not an error. An L3 update that leaves the book crossed outside a call auction is
//   counted (kCrossedBook) but KEPT: dropping one order would desynchronise every later message
//   about it. kOrderExecute is a print: it sets last and adds to cum volume/turnover (a source
//   emits either a kOrderExecute or a kTrade for one execution, never both).
// - kTrade sets last and adds to cum volume/turnover (snapshots, which lag, can only raise cum
//   volume/turnover: they take max(own sum, snapshot)). Where the trade names order numbers
//   (SSE TradeBuyNo/TradeSellNo) and orders are tracked, each named order found resting is
//   reduced by the traded qty; an order number not in the book is the incoming (aggressive)
//   order, published after matching with its remainder, and is not an error.
// - kStatus sets the phase.
// - The phase: BookTop::phase is the feed's latest phase (snapshot or status), refined by the
//   symbol's schedule when a PhaseResolver is attached (set_phase_resolver; book/phase_resolver.h).
// Rejected events are reported to `errors` with file "book" and line = event.seq.
//
// Threading: one shard thread owns a BookSet. Cost: ~50-100 ns per event; no allocation per
// event in steady state (vectors grow to their high-water mark and stay).
#include <cstdint>
#include <vector>

#include "book/book_top.h"
#include "book/order_map.h"
#include "book/phase_resolver.h"
#include "book/price_levels.h"
#include "core/event.h"
#include "core/input_errors.h"
#include "core/symbol_table.h"

namespace ts {

// Whether a symbol's book keeps an order-id map (needed where deletes/trades name orders by
// number only). kAuto: on for Chinese markets (SSE/SZSE/BSE order-by-order feeds), off elsewhere.
enum class OrderTracking : uint8_t { kAuto = 0, kOn, kOff };

class BookSet {
 public:
  explicit BookSet(const SymbolTable& symbols, OrderTracking tracking = OrderTracking::kAuto);

  // Applies one event to its symbol's book. Returns false when the event is rejected (counted in
  // `errors`); the book is then unchanged. Events for a symbol id not yet seen grow the set.
  bool apply(const Event& e, InputErrors& errors);

  // Resolves every event's phase with `resolver` (may be null: the feed's phase alone). Before
  // the first apply(); `resolver` must outlive the BookSet's use of it.
  void set_phase_resolver(PhaseResolver* resolver) { resolver_ = resolver; }

  // Forgets everything about the symbol's book (levels, orders, totals, phase), e.g. before
  // re-seeding it from a fresh snapshot after a feed gap. Keeps the memory for reuse.
  void reset(SymbolId id);

  // The symbol's top 10 levels and running totals; an empty book for a symbol never seen.
  // Valid until the next apply().
  const BookTop& top(SymbolId id) const;

  // Hint: starts loading the cache lines apply(e) and top() will touch for symbol `id` (book
  // header, the top's levels, the touch of both sides). Changes nothing; no-op for unseen ids.
  void prefetch(SymbolId id) const;

  // Full-depth views (tests, diagnostics): levels per side and resting orders tracked.
  size_t bid_depth(SymbolId id) const;
  size_t ask_depth(SymbolId id) const;
  size_t tracked_orders(SymbolId id) const;
  // Quantity resting at `price` on `side` (full depth, not only the top 10).
  Qty qty_at(SymbolId id, Side side, Price price) const;

 private:
  struct Book {
    PriceLevels bids{true};
    PriceLevels asks{false};
    OrderMap orders;
    BookTop top;
    bool track_orders = false;
    bool seen_l3 = false;
    bool seen_trade = false;
    bool seed_is_depth = true;  // the levels from the last pre-L3 snapshot are resting depth
    Phase feed_phase = Phase::kUnknown;  // the feed's latest phase (top.phase may be refined)
  };
  // Marks the book as driven by L3 order flow (first L3 event: drop an auction-time seed).
  static void begin_l3(Book& b);

  Book& book_for(SymbolId id);
  bool apply_snapshot(Book& b, const Event& e, Phase feed, Phase phase, InputErrors& errors);
  bool apply_add(Book& b, const Event& e, InputErrors& errors);
  bool apply_reduce(Book& b, const Event& e, InputErrors& errors);
  void apply_trade(Book& b, const Event& e);
  void record_print(Book& b, SymbolId id, Price price, Qty qty);
  // Removes qty at (side, price) and updates the top when the change is within 10 levels.
  void reduce_level(Book& b, Side side, Price price, Qty qty);
  // Updates the top after one level of a side changed at `depth` (npos or >= 10: nothing to do):
  // `structural` = the level was created (`created`) or erased (!`created`), else only its qty.
  static void update_top(Book& b, bool bid, size_t depth, bool structural, bool created);
  static void bump_version(BookTop& t) { t.levels_version = t.levels_version + 1 == 0 ? 1 : t.levels_version + 1; }
  // Reduces a tracked order by qty (removing it at 0) and its price level.
  void reduce_order(Book& b, uint64_t id, RestingOrder& o, Qty qty);
  static void refresh_side(Book& b, bool bid);
  static bool crossed(const BookTop& t) {
    return t.bid_levels > 0 && t.ask_levels > 0 && t.bids[0].price >= t.asks[0].price;
  }
  static bool in_auction(Phase p) {
    return p == Phase::kOpeningAuction || p == Phase::kClosingAuction;
  }

  const SymbolTable& symbols_;
  OrderTracking tracking_;
  std::vector<Book> books_;
  PhaseResolver* resolver_ = nullptr;
};

}  // namespace ts
