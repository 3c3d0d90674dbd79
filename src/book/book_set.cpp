#include "book/book_set.h"

#include <algorithm>

namespace ts {

namespace {
constexpr const char* kFile = "book";
const BookTop kEmptyTop{};
}  // namespace

BookSet::BookSet(const SymbolTable& symbols, OrderTracking tracking)
    : symbols_(symbols), tracking_(tracking) {}

BookSet::Book& BookSet::book_for(SymbolId id) {
  if (id >= books_.size()) {
    const size_t old = books_.size();
    books_.resize(static_cast<size_t>(id) + 1);
    for (size_t i = old; i < books_.size(); ++i) {
      bool track = tracking_ == OrderTracking::kOn;
      if (tracking_ == OrderTracking::kAuto && i < symbols_.size()) {
        const Market m = symbols_.ref(static_cast<SymbolId>(i)).market;
        track = m == Market::kShanghai || m == Market::kShenzhen || m == Market::kBeijing;
      }
      books_[i].track_orders = track;
      books_[i].top.levels_version = 1;
    }
  }
  return books_[id];
}

void BookSet::reset(SymbolId id) {
  Book& b = book_for(id);
  b.bids.clear();
  b.asks.clear();
  b.orders.clear();
  const uint32_t version = b.top.levels_version;
  b.top = BookTop{};
  b.top.levels_version = version;
  bump_version(b.top);
  b.seen_l3 = false;
  b.seed_is_depth = true;
  b.seen_trade = false;
  b.feed_phase = Phase::kUnknown;
}

const BookTop& BookSet::top(SymbolId id) const {
  return id < books_.size() ? books_[id].top : kEmptyTop;
}

void BookSet::prefetch(SymbolId id) const {
  if (id >= books_.size()) return;
  const Book& b = books_[id];
  const char* p = reinterpret_cast<const char*>(&b);
  for (size_t off = 0; off < sizeof(Book); off += 64) __builtin_prefetch(p + off);
  b.bids.prefetch_touch();
  b.asks.prefetch_touch();
  if (resolver_) resolver_->prefetch(id);
}

size_t BookSet::bid_depth(SymbolId id) const { return id < books_.size() ? books_[id].bids.size() : 0; }
size_t BookSet::ask_depth(SymbolId id) const { return id < books_.size() ? books_[id].asks.size() : 0; }
size_t BookSet::tracked_orders(SymbolId id) const {
  return id < books_.size() ? books_[id].orders.size() : 0;
}
Qty BookSet::qty_at(SymbolId id, Side side, Price price) const {
  if (id >= books_.size()) return 0;
  const Book& b = books_[id];
  return side == Side::kBuy ? b.bids.qty_at(price) : side == Side::kSell ? b.asks.qty_at(price) : 0;
}

void BookSet::refresh_side(Book& b, bool bid) {
  if (bid) {
    b.top.bid_levels = b.bids.copy_top(b.top.bids, kBookLevels);
  } else {
    b.top.ask_levels = b.asks.copy_top(b.top.asks, kBookLevels);
  }
  bump_version(b.top);
}

// PERF NOTE: re-copying the 10 top levels (copy_top) after every L3 change within them was 2.0%
// of the pipeline_bench throughput profile; most changes only move one level's qty, and an
// insert/erase only shifts the array by one slot. After: update_top 0.7-0.9%. The events/s gain
// is within the noise of the shared machines (the pipeline is bound by cache misses, see
// BookSet::prefetch); kept because it is cheaper and lets features skip unchanged tops.
void BookSet::update_top(Book& b, bool bid, size_t depth, bool structural, bool created) {
  if (depth >= static_cast<size_t>(kBookLevels)) return;  // also npos: nothing changed
  Level* lv = bid ? b.top.bids : b.top.asks;
  const PriceLevels& side = bid ? b.bids : b.asks;
  const int d = static_cast<int>(depth);
  if (!structural) {
    lv[d].qty = side.at_depth(depth).qty;
  } else if (created) {
    for (int k = kBookLevels - 1; k > d; --k) lv[k] = lv[k - 1];
    lv[d] = side.at_depth(depth);
  } else {
    for (int k = d; k < kBookLevels - 1; ++k) lv[k] = lv[k + 1];
    constexpr size_t kLast = kBookLevels - 1;
    lv[kLast] = side.size() > kLast ? side.at_depth(kLast) : Level{};
  }
  const int n = static_cast<int>(std::min<size_t>(side.size(), kBookLevels));
  if (bid) {
    b.top.bid_levels = n;
  } else {
    b.top.ask_levels = n;
  }
  bump_version(b.top);
}

bool BookSet::apply(const Event& e, InputErrors& errors) {
  if (e.symbol == kInvalidSymbol) {
    errors.report(InputError::kUnknownSymbol, kFile, e.seq, "event without a symbol");
    return false;
  }
  Book& b = book_for(e.symbol);
  Phase feed = b.feed_phase;
  if (e.kind == EventKind::kSnapshot && e.snapshot.phase != Phase::kUnknown) feed = e.snapshot.phase;
  if (e.kind == EventKind::kStatus) feed = e.status.phase;
  Phase phase = feed;
  if (resolver_) {
    phase = resolver_->resolve(e.symbol, e.exch_ts_ns, feed);
    MarketKind market = MarketKind::kUnknown;
    if (resolver_->local_offset(e.symbol, b.top.local_offset_s, market)) b.top.schedule_market = uint8_t(market);
    if (e.kind != EventKind::kSnapshot) b.top.phase = phase;
  }
  switch (e.kind) {
    case EventKind::kSnapshot: return apply_snapshot(b, e, feed, phase, errors);
    case EventKind::kOrderAdd: return apply_add(b, e, errors);
    case EventKind::kOrderCancel:
    case EventKind::kOrderExecute: return apply_reduce(b, e, errors);
    case EventKind::kTrade: apply_trade(b, e); return true;
    case EventKind::kStatus:
      b.feed_phase = feed;
      b.top.phase = phase;
      b.top.update_ts_ns = e.exch_ts_ns;
      return true;
  }
  return true;
}

bool BookSet::apply_snapshot(Book& b, const Event& e, Phase feed, Phase phase, InputErrors& errors) {
  const SnapshotBody& s = e.snapshot;
  if (s.resync && b.seen_l3) {
    // The vendor's authoritative book: replaces the levels it shows, even after L3 flow.
    const bool has_both = s.bids[0].qty > 0 && s.asks[0].qty > 0;
    if (has_both && s.bids[0].price >= s.asks[0].price && !in_auction(phase)) {
      errors.report(InputError::kCrossedBook, kFile, e.seq, "resync snapshot best bid >= best ask");
      return false;
    }
    b.bids.replace_top(s.bids, kBookLevels);
    b.asks.replace_top(s.asks, kBookLevels);
    refresh_side(b, true);
    refresh_side(b, false);
  } else if (!b.seen_l3) {
    const bool has_both = s.bids[0].qty > 0 && s.asks[0].qty > 0;
    if (has_both && s.bids[0].price >= s.asks[0].price && !in_auction(phase)) {
      errors.report(InputError::kCrossedBook, kFile, e.seq, "snapshot best bid >= best ask");
      return false;
    }
    b.seed_is_depth = !in_auction(phase) && phase != Phase::kPreOpen;
    b.bids.assign(s.bids, kBookLevels);
    b.asks.assign(s.asks, kBookLevels);
    refresh_side(b, true);
    refresh_side(b, false);
  }
  if (!b.seen_trade && s.last > 0) b.top.last = s.last;
  if (s.prev_close > 0) b.top.prev_close = s.prev_close;
  // Snapshots lag the prints: they may only raise the running totals (catch up on prints
  // this process never saw, e.g. when it starts mid-day).
  b.top.cum_volume = std::max(b.top.cum_volume, s.cum_volume);
  b.top.cum_turnover = std::max(b.top.cum_turnover, s.cum_turnover);
  b.feed_phase = feed;
  b.top.phase = phase;
  b.top.update_ts_ns = e.exch_ts_ns;
  return true;
}

void BookSet::begin_l3(Book& b) {
  if (b.seen_l3) return;
  b.seen_l3 = true;
  if (!b.seed_is_depth) {
    b.bids.clear();
    b.asks.clear();
    refresh_side(b, true);
    refresh_side(b, false);
  }
}

bool BookSet::apply_add(Book& b, const Event& e, InputErrors& errors) {
  const OrderBody& o = e.order;
  if (o.price <= 0) {
    errors.report(InputError::kBadPrice, kFile, e.seq, "order add with price <= 0");
    return false;
  }
  if (o.qty <= 0) {
    errors.report(InputError::kBadSize, kFile, e.seq, "order add with size <= 0");
    return false;
  }
  if (o.side != Side::kBuy && o.side != Side::kSell) {
    errors.report(InputError::kMalformedLine, kFile, e.seq, "order add without a side");
    return false;
  }
  begin_l3(b);
  const bool bid = o.side == Side::kBuy;
  bool created = false;
  const size_t depth = bid ? b.bids.add(o.price, o.qty, &created) : b.asks.add(o.price, o.qty, &created);
  update_top(b, bid, depth, created, created);
  if (b.track_orders && o.order_id != 0) b.orders.put(o.order_id, RestingOrder{o.price, o.qty, o.side});
  b.top.update_ts_ns = e.exch_ts_ns;
  if (depth == 0 && crossed(b.top) && !in_auction(b.top.phase)) {
    errors.report(InputError::kCrossedBook, kFile, e.seq, "order add crosses the book (kept)");
  }
  return true;
}

void BookSet::reduce_level(Book& b, Side side, Price price, Qty qty) {
  const bool bid = side == Side::kBuy;
  bool erased = false;
  const size_t depth = bid ? b.bids.remove(price, qty, &erased) : b.asks.remove(price, qty, &erased);
  update_top(b, bid, depth, erased, false);
}

void BookSet::reduce_order(Book& b, uint64_t id, RestingOrder& o, Qty qty) {
  const Qty take = (qty <= 0 || qty > o.qty) ? o.qty : qty;
  const Side side = o.side;
  const Price price = o.price;
  o.qty -= take;
  if (o.qty <= 0) b.orders.erase(id);  // invalidates `o`
  reduce_level(b, side, price, take);
}

void BookSet::record_print(Book& b, SymbolId id, Price price, Qty qty) {
  if (price <= 0 || qty <= 0) return;
  b.seen_trade = true;
  b.top.last = price;
  b.top.cum_volume += qty;
  const double tick = id < symbols_.size() ? symbols_.ref(id).tick_size : 0.01;
  b.top.cum_turnover += double(price) * tick * double(qty);
}

bool BookSet::apply_reduce(Book& b, const Event& e, InputErrors& errors) {
  const OrderBody& o = e.order;
  const bool execute = e.kind == EventKind::kOrderExecute;
  Price print_price = o.price;
  Qty print_qty = o.qty;
  RestingOrder* known = b.track_orders ? b.orders.find(o.order_id) : nullptr;
  const bool has_price = o.price > 0 && (o.side == Side::kBuy || o.side == Side::kSell);
  if (!known && !has_price) {
    errors.report(InputError::kUnknownOrder, kFile, e.seq,
                  execute ? "execute for an unknown order without a price"
                          : "cancel for an unknown order without a price");
    return false;
  }
  begin_l3(b);  // does not touch the order map: `known` stays valid
  if (known) {
    if (print_price <= 0) print_price = known->price;
    if (print_qty <= 0) print_qty = known->qty;
    reduce_order(b, o.order_id, *known, o.qty);
  } else if (o.qty > 0) {
    // Qty <= 0 with a price cannot be applied to an anonymous level: nothing to remove.
    reduce_level(b, o.side, o.price, o.qty);
  }
  if (execute) record_print(b, e.symbol, print_price, print_qty);
  b.top.update_ts_ns = e.exch_ts_ns;
  return true;
}

void BookSet::apply_trade(Book& b, const Event& e) {
  const TradeBody& t = e.trade;
  if (b.track_orders && t.qty > 0) {
    // Reduce whichever named orders rest in the book (both in a call auction, the passive one
    // in continuous trading; the aggressive one is published later with its remainder).
    if (RestingOrder* o = b.orders.find(t.buy_order_id)) reduce_order(b, t.buy_order_id, *o, t.qty);
    if (RestingOrder* o = b.orders.find(t.sell_order_id)) reduce_order(b, t.sell_order_id, *o, t.qty);
  }
  record_print(b, e.symbol, t.price, t.qty);
  b.top.update_ts_ns = e.exch_ts_ns;
}

}  // namespace ts
