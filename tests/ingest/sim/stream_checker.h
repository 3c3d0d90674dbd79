#pragma once
// An independent consumer of simulator output for the tests: tracks every order by id and
// aggregates depth per price level, and records the first violation of the stream contract.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/event.h"
#include "core/symbol_table.h"

namespace ts::testing {

struct CheckedBook {
  std::map<Price, Qty, std::greater<>> bids;  // best first
  std::map<Price, Qty> asks;                  // best first
  Price last = 0;
  bool has_bbo() const { return !bids.empty() && !asks.empty(); }
  Price best_bid() const { return bids.empty() ? 0 : bids.begin()->first; }
  Price best_ask() const { return asks.empty() ? 0 : asks.begin()->first; }
  double mid() const { return 0.5 * double(best_bid() + best_ask()); }
  Price spread() const { return best_ask() - best_bid(); }
};

class StreamChecker {
 public:
  explicit StreamChecker(const SymbolTable& table) : table_(table) {}

  // Applies one event; returns false (and keeps the first message) on a contract violation.
  bool apply(const Event& e) {
    ++count_;
    if (e.exch_ts_ns < last_ts_) return fail(e, "timestamp went backwards");
    last_ts_ = e.exch_ts_ns;
    if (count_ > 1 && e.seq != last_seq_ + 1) return fail(e, "seq not consecutive");
    last_seq_ = e.seq;
    if (e.symbol >= table_.size()) return fail(e, "unknown symbol");
    const RefData& ref = table_.ref(e.symbol);
    CheckedBook& b = books_[e.symbol];
    auto in_band = [&](Price p) { return p >= ref.limit_down && p <= ref.limit_up; };
    switch (e.kind) {
      case EventKind::kStatus:
        ++statuses_;
        phase_[e.symbol] = e.status.phase;
        return true;
      case EventKind::kOrderAdd: {
        const OrderBody& o = e.order;
        if (o.price <= 0 || o.qty <= 0) return fail(e, "add with non-positive price/qty");
        if (!in_band(o.price)) return fail(e, "add outside the limit band");
        if (o.side != Side::kBuy && o.side != Side::kSell) return fail(e, "add without side");
        if (!orders_.emplace(o.order_id, Resting{e.symbol, o.price, o.qty, o.side}).second) {
          return fail(e, "duplicate order id");
        }
        if (o.side == Side::kBuy) {
          if (!b.asks.empty() && o.price >= b.best_ask()) return fail(e, "bid add crosses the book");
          b.bids[o.price] += o.qty;
        } else {
          if (!b.bids.empty() && o.price <= b.best_bid()) return fail(e, "ask add crosses the book");
          b.asks[o.price] += o.qty;
        }
        ++adds_;
        return true;
      }
      case EventKind::kOrderCancel:
      case EventKind::kOrderExecute: {
        const OrderBody& o = e.order;
        auto it = orders_.find(o.order_id);
        if (it == orders_.end()) return fail(e, "cancel/execute of an unknown order");
        Resting& r = it->second;
        if (r.symbol != e.symbol || r.price != o.price || r.side != o.side) {
          return fail(e, "cancel/execute price/side/symbol differs from the resting order");
        }
        if (o.qty <= 0 || o.qty > r.qty) return fail(e, "cancel/execute exceeds the resting qty");
        Qty& level = o.side == Side::kBuy ? b.bids[o.price] : b.asks[o.price];
        if (o.qty > level) return fail(e, "cancel/execute exceeds the level qty");
        level -= o.qty;
        if (level == 0) {
          if (o.side == Side::kBuy) b.bids.erase(o.price); else b.asks.erase(o.price);
        }
        r.qty -= o.qty;
        if (r.qty == 0) orders_.erase(it);
        if (e.kind == EventKind::kOrderExecute) {
          pending_exec_ = e;
          ++executes_;
        } else {
          ++cancels_;
        }
        return true;
      }
      case EventKind::kTrade: {
        const TradeBody& t = e.trade;
        if (t.price <= 0 || t.qty <= 0) return fail(e, "trade with non-positive price/qty");
        if (!in_band(t.price)) return fail(e, "trade outside the limit band");
        if (t.aggressor == Side::kNone) {
          // A call auction's match: right after the opening call (the 09:25 pause) or the
          // closing call (closed), no order ids, no execute before it.
          const Phase p = phase(e.symbol);
          if (p != Phase::kBreak && p != Phase::kClosed) return fail(e, "auction trade outside a match");
          if (t.buy_order_id != 0 || t.sell_order_id != 0) return fail(e, "auction trade names orders");
          if (pending_exec_.symbol == e.symbol) return fail(e, "auction trade after an execute");
          ++auction_trades_;
          return true;
        }
        if (phase(e.symbol) != Phase::kContinuous) return fail(e, "continuous trade outside continuous trading");
        if (t.aggressor != Side::kBuy && t.aggressor != Side::kSell) return fail(e, "trade without aggressor");
        if (pending_exec_.symbol != e.symbol || pending_exec_.order.price != t.price ||
            pending_exec_.order.qty != t.qty || pending_exec_.order.side == t.aggressor) {
          return fail(e, "trade does not match the preceding execute");
        }
        pending_exec_.symbol = kInvalidSymbol;
        b.last = t.price;
        ++trades_;
        return true;
      }
      case EventKind::kSnapshot: {
        // Only the call auctions' indicative price/volume: bid = ask, nothing traded.
        const SnapshotBody& s = e.snapshot;
        const Phase p = phase(e.symbol);
        if (p != Phase::kOpeningAuction && p != Phase::kClosingAuction) return fail(e, "snapshot outside a call auction");
        if (s.phase != p) return fail(e, "indicative snapshot's phase differs from the status");
        if (s.bids[0].price != s.asks[0].price || s.bids[0].qty != s.asks[0].qty || s.bids[0].qty <= 0) {
          return fail(e, "indicative snapshot is not one price and volume");
        }
        if (!in_band(s.bids[0].price)) return fail(e, "indicative price outside the limit band");
        if (s.last != 0 || s.cum_volume != 0 || s.resync != 0) return fail(e, "indicative snapshot reports a trade");
        ++indicatives_;
        return true;
      }
    }
    return fail(e, "unknown kind");
  }

  const CheckedBook& book(SymbolId id) { return books_[id]; }
  const std::string& error() const { return error_; }
  uint64_t count() const { return count_; }
  uint64_t adds() const { return adds_; }
  uint64_t cancels() const { return cancels_; }
  uint64_t executes() const { return executes_; }
  uint64_t trades() const { return trades_; }
  uint64_t statuses() const { return statuses_; }
  uint64_t indicatives() const { return indicatives_; }
  uint64_t auction_trades() const { return auction_trades_; }
  // The symbol's phase by its last status (kContinuous before any: a stream started mid-day).
  Phase phase(SymbolId id) const {
    auto it = phase_.find(id);
    return it == phase_.end() ? Phase::kContinuous : it->second;
  }

 private:
  struct Resting {
    SymbolId symbol;
    Price price;
    Qty qty;
    Side side;
  };
  bool fail(const Event& e, const char* what) {
    if (error_.empty()) {
      error_ = std::string(what) + " at event seq " + std::to_string(e.seq) + " (" + event_kind_name(e.kind) +
               ", symbol " + (e.symbol < table_.size() ? table_.name(e.symbol) : std::string("?")) + ")";
    }
    return false;
  }
  const SymbolTable& table_;
  std::unordered_map<SymbolId, CheckedBook> books_;
  std::unordered_map<uint64_t, Resting> orders_;
  Event pending_exec_;
  std::string error_;
  int64_t last_ts_ = INT64_MIN;
  uint64_t last_seq_ = 0;
  std::unordered_map<SymbolId, Phase> phase_;
  uint64_t count_ = 0, adds_ = 0, cancels_ = 0, executes_ = 0, trades_ = 0, statuses_ = 0;
  uint64_t indicatives_ = 0, auction_trades_ = 0;
};

}  // namespace ts::testing
