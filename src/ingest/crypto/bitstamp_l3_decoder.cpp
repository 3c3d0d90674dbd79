// Bitstamp's order-level feed as logged in 2015 (one message per line: "<ms> <event> <json>"):
//   order_created {"price": "236.47", "amount": "2.00000000", "datetime", "id", "order_type" 0 bid / 1 ask}
//   order_changed  the same fields, "amount" the order's new remaining size
//   order_deleted  the same fields (amount: what was left; 0 when the order was filled)
//   trade          {"price": 236.47, "amount": 0.21144331, "id"} (JSON numbers with float noise:
//                  rounded to the nearest unit)
//   order_book     {"bids": [[p, s]] , "asks": ...} the top 20 levels (the venue's view)
// Events: created → kOrderAdd; changed → kOrderCancel of the size removed (kOrderAdd of the size
// added); deleted → kOrderCancel of the size left; trade → kTrade, its aggressor the side opposite
// to the resting order reduced just before it (Bitstamp reports the maker's change, then the
// print); order_book → kSnapshot with resync = 1 (the view replaces the levels it covers: orders
// resting before the log began are known only through it). The exchange time is the log's
// receive time. A change or delete of an order the log never created (it rested before the log
// began) counts as unknown_orders; a delete still removes what it says was left at its price.
// Aggressive orders: Bitstamp announces an incoming limit order with order_created at its limit
// price BEFORE the fills it causes (then the resting orders' changes/deletes, then its own change
// or delete, then the trades). Added as it comes, it would cross the book for ~100 ms. An
// order_created that crosses the opposite best is therefore HELD: not in the book, no event; its
// own changes update it; a delete (filled or cancelled) drops it; once it no longer crosses, its
// remaining size is added (kOrderAdd) and it rests like any other.
// The aggressor of a trade is the side of the incoming order (the taker: the last order held as
// crossing), not of whichever order changed last: a taker is released into the book as soon as
// the maker's delete uncrosses it, and its own change then follows (2015-05-01 01:58:18: a sell
// walking the bids down printed 0.95, 0.10 and 3.70 BTC as "buys"). Without a taker (an order
// the log never announced) it is the side opposite to the resting order reduced just before.
// The symbol is BITSTAMP:BTCUSD (the only pair this feed carried).
#include <algorithm>
#include <string>
#include <unordered_map>

#include "ingest/crypto/decimal_units.h"
#include "ingest/crypto/decoder_base.h"
#include "ingest/crypto/decoders.h"

namespace ts::crypto {

namespace {

namespace dom = simdjson::dom;

class BitstampL3Decoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;
  Venue venue() const override { return Venue::kBitstampL3; }

  bool decode(std::string_view json, const MessageContext& where, std::vector<Event>& out) override {
    ++counters_.messages;
    dom::element root;
    if (!parse(json, where, root)) return false;
    const std::string_view ev = where.event_name;
    SymbolBook* b = book_for("btcusd", where);
    if (!b) return false;
    book_ = b;
    if (ev == "order_created" || ev == "order_changed" || ev == "order_deleted") {
      const bool ok = order(*b, ev, root, where, out);
      if (!held_.empty()) release_held(where, out);
      return ok;
    }
    if (ev == "trade") return trade(*b, root, where, out);
    if (ev == "order_book") return view(*b, root, where, out);
    return ignore();
  }

 private:
  struct Resting {
    Side side;
    Price price;
    Qty qty;
    bool held = false;  // an incoming order that would cross: not in the book yet
  };

  bool crosses(Side side, Price price) const {
    const LevelBook& k = book_->book;
    if (side == Side::kBuy) return k.depth(false) > 0 && price >= k.level(false, 0).price;
    return k.depth(true) > 0 && price <= k.level(true, 0).price;
  }

  // Adds every held order that no longer crosses the book.
  void release_held(const MessageContext& where, std::vector<Event>& out) {
    for (size_t i = 0; i < held_.size();) {
      auto it = orders_.find(held_[i]);
      if (it == orders_.end() || !it->second.held) {
        held_.erase(held_.begin() + std::ptrdiff_t(i));
        continue;
      }
      Resting& r = it->second;
      if (crosses(r.side, r.price)) {
        ++i;
        continue;
      }
      r.held = false;
      push_order(*book_, EventKind::kOrderAdd, it->first, r.side, r.price, r.qty, where, out);
      held_.erase(held_.begin() + std::ptrdiff_t(i));
    }
  }

  void set_taker(uint64_t id, Side side) {
    taker_id_ = id;
    taker_side_ = side;
  }

  bool fail(const MessageContext& w, const char* what) { return reject(w, InputError::kMalformedLine, what); }

  void push_order(SymbolBook& b, EventKind kind, uint64_t id, Side side, Price price, Qty qty,
                  const MessageContext& where, std::vector<Event>& out) {
    if (qty <= 0) return;
    Event e = Event::make(kind);
    e.symbol = b.id;
    e.seq = where.line;
    e.exch_ts_ns = where.recv_ns;
    e.order.order_id = id;
    e.order.price = price;
    e.order.qty = qty;
    e.order.side = side;
    push_event(e, out);
    b.book.add(side == Side::kBuy, price, kind == EventKind::kOrderAdd ? qty : -qty);
    if (b.book.crossed()) ++counters_.crossed_books;
  }

  bool order(SymbolBook& b, std::string_view ev, dom::element root, const MessageContext& where,
             std::vector<Event>& out) {
    std::string_view p, q;
    uint64_t id = 0, type = 0;
    dom::element el;
    if (root["price"].get_string().get(p) || root["amount"].get_string().get(q) || root["id"].get(el) ||
        !json_u64(el, id) || root["order_type"].get(el) || !json_u64(el, type) || type > 1) {
      return fail(where, "bitstamp-l3: order without price/amount/id/order_type");
    }
    Level l;
    if (!convert_one(b, {p, q}, l, where)) return false;
    const Side side = type == 0 ? Side::kBuy : Side::kSell;
    auto it = orders_.find(id);
    if (ev == "order_created") {
      if (l.qty <= 0) return reject(where, InputError::kBadSize, "bitstamp-l3: order_created with amount 0");
      if (it != orders_.end() && !it->second.held) {
        push_order(b, EventKind::kOrderCancel, id, it->second.side, it->second.price, it->second.qty, where, out);
      }
      if (crosses(side, l.price)) {
        orders_[id] = {side, l.price, l.qty, true};
        held_.push_back(id);
        set_taker(id, side);
        return true;
      }
      orders_[id] = {side, l.price, l.qty};
      push_order(b, EventKind::kOrderAdd, id, side, l.price, l.qty, where, out);
      return true;
    }
    if (it == orders_.end()) {
      ++counters_.unknown_orders;
      if (ev == "order_changed") {
        orders_[id] = {side, l.price, l.qty};  // known from now on; its level came from a view
      } else {
        push_order(b, EventKind::kOrderCancel, id, side, l.price, l.qty, where, out);
        if (id != taker_id_) last_reduced_ = side;
      }
      return true;
    }
    Resting& r = it->second;
    if (r.held) {  // the incoming order's own progress: nothing rests yet
      if (ev == "order_deleted" || l.qty <= 0) {
        orders_.erase(it);
      } else {
        r = {side, l.price, l.qty, true};
      }
      return true;
    }
    if (id != taker_id_) last_reduced_ = r.side;
    if (ev == "order_deleted") {
      push_order(b, EventKind::kOrderCancel, id, r.side, r.price, r.qty, where, out);
      orders_.erase(it);
      return true;
    }
    if (l.price != r.price || side != r.side) {  // moved: out at the old price, in at the new
      push_order(b, EventKind::kOrderCancel, id, r.side, r.price, r.qty, where, out);
      if (l.qty > 0 && crosses(side, l.price)) {  // moved onto the other side's best: incoming
        r = {side, l.price, l.qty, true};
        held_.push_back(id);
        set_taker(id, side);
        return true;
      }
      push_order(b, EventKind::kOrderAdd, id, side, l.price, l.qty, where, out);
    } else if (l.qty < r.qty) {
      push_order(b, EventKind::kOrderCancel, id, side, l.price, r.qty - l.qty, where, out);
    } else {
      push_order(b, EventKind::kOrderAdd, id, side, l.price, l.qty - r.qty, where, out);
    }
    r = {side, l.price, l.qty};
    if (r.qty <= 0) orders_.erase(it);
    return true;
  }

  bool trade(SymbolBook& b, dom::element root, const MessageContext& where, std::vector<Event>& out) {
    double price = 0, amount = 0;
    if (root["price"].get_double().get(price) || root["amount"].get_double().get(amount)) {
      return fail(where, "bitstamp-l3: trade without numeric price/amount");
    }
    if (!b.units_fixed) {
      // A trade before any order: the instrument's tick, sizes in satoshis (the feed's 8 digits).
      const RawLevel first[1] = {{"0.01", "0.00000001"}};
      fit_units(b, first);
    }
    Level print;
    if (!round_units(price, b.tick, print.price) || !round_units(amount, b.size, print.qty) || print.price <= 0 ||
        print.qty <= 0) {
      return reject(where, InputError::kBadPrice, "bitstamp-l3: trade price/amount out of range");
    }
    Side aggressor = last_reduced_ == Side::kBuy ? Side::kSell : last_reduced_ == Side::kSell ? Side::kBuy
                                                                                              : Side::kNone;
    if (taker_id_ != 0) {
      aggressor = taker_side_;
      // A taker still held crosses on: its next fills print as its own. One released into the
      // book (or gone) has printed its last fill: later prints are someone else's.
      auto it = orders_.find(taker_id_);
      if (it == orders_.end() || !it->second.held) taker_id_ = 0;
    }
    push_trade(b, where, where.recv_ns, print, aggressor, out);
    return true;
  }

  bool view(SymbolBook& b, dom::element root, const MessageContext& where, std::vector<Event>& out) {
    size_t nbids;
    raw_.clear();
    dom::element bids, asks;
    if (root["bids"].get(bids) || root["asks"].get(asks) || !raw_levels(bids, raw_)) {
      return fail(where, "bitstamp-l3: order_book bids/asks malformed");
    }
    nbids = raw_.size();
    if (!raw_levels(asks, raw_) || !convert(b, raw_, levels_, where)) {
      return raw_.size() == nbids ? fail(where, "bitstamp-l3: order_book asks malformed") : false;
    }
    // The view's top 10 a side (what the event carries, and so what the books downstream apply).
    const size_t nb = std::min<size_t>(nbids, kBookLevels);
    const size_t na = std::min<size_t>(levels_.size() - nbids, kBookLevels);
    // A view races the order events (it can show a level an order event already removed): one
    // that would cross the book the events built is stale and skipped (stale_views).
    LevelBook trial = b.book;
    trial.replace_top(true, levels_.data(), nb);
    trial.replace_top(false, levels_.data() + nbids, na);
    if (trial.crossed()) {
      ++stale_views_;
      ++counters_.ignored;
      return true;
    }
    b.book = std::move(trial);
    ++counters_.snapshots;
    Event e = Event::make(EventKind::kSnapshot);
    for (size_t i = 0; i < size_t(kBookLevels); ++i) {
      if (i < nb) e.snapshot.bids[i] = levels_[i];
      if (i < na) e.snapshot.asks[i] = levels_[nbids + i];
    }
    e.snapshot.resync = 1;
    e.snapshot.phase = Phase::kContinuous;
    e.symbol = b.id;
    e.seq = where.line;
    e.exch_ts_ns = where.recv_ns;
    push_event(e, out);
    return true;
  }

  std::unordered_map<uint64_t, Resting> orders_;
  std::vector<uint64_t> held_;  // ids of held incoming orders
  uint64_t stale_views_ = 0;    // order_book views skipped (they would cross the book)
  SymbolBook* book_ = nullptr;
  Side last_reduced_ = Side::kNone;
  uint64_t taker_id_ = 0;  // the incoming order whose fills are printing (0: none known)
  Side taker_side_ = Side::kNone;
};

}  // namespace

std::unique_ptr<VenueDecoder> make_bitstamp_l3_decoder(SymbolTable& symbols, InputErrors& errors) {
  return std::make_unique<BitstampL3Decoder>(symbols, errors);
}

}  // namespace ts::crypto
