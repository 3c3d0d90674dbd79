// One step of one symbol's order flow.
//
// Each symbol has a latent fair price: a slow mean-reverting random walk (vol_bps per sqrt(s))
// plus the deterministic shift of an injected event. Every step first checks that the touch is
// consistent with the fair price (best bid not above the desired bid, best ask not below the
// desired ask, within one level when quiet); if not, it repairs it with an aggressive order or a
// cancel, which is how prices move. Otherwise it draws a quiet action (add near the touch,
// cancel, or a small marketable order) or, for an injected event's extra steps, that event's
// action (pressure on one side, churn, withdrawal, spoofing).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "ingest/sim/simulator.h"

namespace ts {

using namespace sim;

namespace {

constexpr double kReversionS = 1800;  // fair price mean-reversion time constant, seconds
constexpr int kTargetOrders = 40;     // quiet resting orders a side the add/cancel mix aims at

// Level offset from the desired touch for a new order: P(k) ∝ 0.72^k, k < 16.
const std::array<uint8_t, 256>& level_offset_table() {
  static const std::array<uint8_t, 256> table = [] {
    std::array<uint8_t, 256> t{};
    double w[16], total = 0;
    for (int k = 0; k < 16; ++k) total += (w[k] = std::pow(0.72, k));
    int pos = 0;
    double cum = 0;
    for (int k = 0; k < 16; ++k) {
      cum += w[k] / total;
      const int end = k == 15 ? 256 : int(std::lround(cum * 256));
      while (pos < end) t[size_t(pos++)] = uint8_t(k);
    }
    return t;
  }();
  return table;
}

// Order size in lots: mostly 1-10 lots, occasionally 20-100.
constexpr std::array<uint8_t, 32> kLots = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 4, 5,
                                           5, 5, 6, 8, 10, 10, 10, 12, 15, 20, 20, 30, 40, 50, 80, 100};

struct Flow {
  SymbolState& st;
  SimBook& book;
  Rng& rng;
  EventWriter& w;
  double fair;    // ticks
  Price dbid;     // desired best bid (may lie outside the band)
  Price dask;     // desired best ask
  uint64_t protected_id;  // a live spoof order: only its owner cancels it

  Qty draw_qty(int scale = 1) { return Qty(kLots[rng.below(32)]) * st.size_mult * scale * 100; }
  Price offset() { return Price(level_offset_table()[rng.below(256)]) * st.step; }

  // Rests an order at (about) `price`, kept inside the band and off the other side. When the
  // fair price is beyond a limit, orders that cannot rest on their side join the sealed queue
  // at the limit on the other side instead.
  bool place(Side side, Price price, Qty qty) {
    const SimSide& bids = book.bids();
    const SimSide& asks = book.asks();
    if (side == Side::kBuy) {
      price = std::min(price, st.limit_up);
      if (!asks.empty()) price = std::min(price, asks.best() - 1);
      if (price < st.limit_down) {
        return fair <= double(st.limit_down) && place(Side::kSell, st.limit_down, qty);
      }
      return book.add(Side::kBuy, price, qty, w) != 0 ||
             (price - st.step >= st.limit_down && book.add(Side::kBuy, price - st.step, qty, w) != 0);
    }
    price = std::max(price, st.limit_down);
    if (!bids.empty()) price = std::max(price, bids.best() + 1);
    if (price > st.limit_up) {
      return fair >= double(st.limit_up) && place(Side::kBuy, st.limit_up, qty);
    }
    return book.add(Side::kSell, price, qty, w) != 0 ||
           (price + st.step <= st.limit_up && book.add(Side::kSell, price + st.step, qty, w) != 0);
  }

  void place_near(Side side, Qty qty) {
    place(side, side == Side::kBuy ? dbid - offset() : dask + offset(), qty);
  }

  // Cancels one order (whole, or part of it) at a random level of `side`, or at its best level.
  void cancel(Side side, bool at_best) {
    const SimSide& s = book.side(side);
    if (s.empty()) return;
    const int level = at_best ? 0 : int(rng.below(uint32_t(s.levels)));
    const SimLevel& lv = s.level(level);
    int order = int(rng.below(uint32_t(lv.count)));
    if (book.order_id(lv.orders[order]) == protected_id) {
      if (lv.count == 1) return;
      order = (order + 1) % lv.count;
    }
    Qty qty = lv.orders[order].qty;
    const Qty lots = qty / 100;
    if (lots > 1 && rng.below(5) == 0) qty = Qty(1 + rng.below(uint32_t(lots - 1))) * 100;
    book.cancel(side, level, order, qty, w);
  }

  // A marketable order at the touch; where the other side is empty it rests instead.
  void aggress(Side side, Qty qty, int max_orders) {
    const SimSide& other = book.side(side == Side::kBuy ? Side::kSell : Side::kBuy);
    if (other.empty()) {
      place(side, side == Side::kBuy ? dbid : dask, qty);
      return;
    }
    book.take(side, other.best(), qty, max_orders, w);
  }
};

}  // namespace

void Simulator::step_symbol(uint32_t s, int64_t t, ActiveEvent* extra, EventWriter& w) {
  SymbolState& st = sym_[s];
  SimBook& book = books_[s];
  if (t > st.fair_ns) {
    const double dt = double(t - st.fair_ns) * 1e-9;
    st.base += (st.anchor - st.base) * std::min(dt / kReversionS, 1.0) + st.sigma * std::sqrt(dt) * rng_.normal();
    st.fair_ns = t;
  }
  ActiveEvent* a = st.anomaly >= 0 ? &active_[size_t(st.anomaly)] : nullptr;
  double fair = st.base;
  double half = st.half_spread;
  bool withdrawn = false;
  if (a) {
    fair += shift_at(*a, t);
    if (a->type == SimEventType::kLiquidityWithdrawal && t < a->t2) {
      half = a->wide_half_spread;
      withdrawn = true;
    }
  }
  const double step = double(st.step);
  Flow f{st, book, rng_, w, fair, Price(std::floor((fair - half) / step)) * st.step,
         Price(std::ceil((fair + half) / step)) * st.step,
         a && a->type == SimEventType::kSpoofing ? a->spoof_id : 0};

  // Spoofing runs on its own schedule (spoof_times): place, hold, cancel, repeat.
  if (extra && extra->type == SimEventType::kSpoofing) {
    ActiveEvent& e = *extra;
    const int cycle = e.spoof_cycle++;
    e.next_ns = cycle + 1 < 2 * e.spoof_cycles ? e.spoof_times[cycle + 1] : e.t3;
    if (cycle % 2 == 0) {
      const SimSide& own = book.side(e.spoof_side);
      const Price touch = own.empty() ? (e.spoof_side == Side::kBuy ? f.dbid : f.dask) : own.best();
      const Price dir = e.spoof_side == Side::kBuy ? -1 : 1;
      const Price away = Price(rng_.below(3));
      Price p = 0;
      for (Price k = 0; k < 3 && e.spoof_id == 0; ++k) {
        const Price levels = 1 + (away + k) % 3;
        p = std::clamp(touch + dir * levels * st.step, st.limit_down, st.limit_up);
        e.spoof_id = book.add(e.spoof_side, p, e.spoof_qty, w);
      }
      if (e.spoof_id == 0) {
        // All three levels hold kSimMaxOrders orders: one of them leaves (cancelled) first.
        const SimSide& sd = book.side(e.spoof_side);
        for (int i = 0; i < sd.levels; ++i) {
          if (sd.level(i).price == p) {
            book.cancel(e.spoof_side, i, 0, sd.level(i).orders[0].qty, w);
            e.spoof_id = book.add(e.spoof_side, p, e.spoof_qty, w);
            break;
          }
        }
      }
    } else if (e.spoof_id != 0) {
      int level = 0, order = 0;
      if (book.find(e.spoof_side, e.spoof_id, &level, &order)) {
        book.cancel(e.spoof_side, level, order, book.side(e.spoof_side).level(level).orders[order].qty, w);
      }
      e.spoof_id = 0;
    }
    return;
  }

  // A spoofer pulls the order as soon as it becomes the touch (it is not meant to trade).
  if (a && a->type == SimEventType::kSpoofing && a->spoof_id != 0) {
    int level = 0, order = 0;
    if (book.find(a->spoof_side, a->spoof_id, &level, &order) && level == 0) {
      book.cancel(a->spoof_side, 0, order, book.side(a->spoof_side).level(0).orders[order].qty, w);
      a->spoof_id = 0;
      return;
    }
  }

  // 1. Bring the touch back to the fair price. Quiet: one level of slack, small orders.
  //    During an injected event: no slack, and whole levels are swept (heavy one-sided flow).
  const bool moving = a && a->type != SimEventType::kSpoofing && a->type != SimEventType::kVolumeBurst;
  const Price slack = moving ? 0 : st.step;
  const double p_fix = withdrawn ? 1.0 : moving ? 0.9 : 0.5;
  const bool bid_high = !book.bids().empty() && book.bids().best() > f.dbid + slack;
  const bool ask_low = !book.asks().empty() && book.asks().best() < f.dask - slack;
  if ((bid_high || ask_low) && rng_.chance(p_fix)) {
    const Side resting = bid_high ? Side::kBuy : Side::kSell;
    const Side aggressor = bid_high ? Side::kSell : Side::kBuy;
    const Price limit = bid_high ? f.dbid + 1 : f.dask - 1;
    if (withdrawn || rng_.below(10) < 4) {
      f.cancel(resting, true);
    } else if (moving) {
      book.take(aggressor, limit, INT32_MAX, kMaxSweepOrders, w);
    } else {
      book.take(aggressor, limit, f.draw_qty(2), 4, w);
    }
    return;
  }

  if (extra) {
    ActiveEvent& e = *extra;
    switch (e.type) {
      case SimEventType::kFlashCrash:
      case SimEventType::kLimitDownRun:
      case SimEventType::kPump:
      case SimEventType::kLimitUpRun: {
        const bool down = e.type == SimEventType::kFlashCrash || e.type == SimEventType::kLimitDownRun;
        // Pressure in the event's direction until the hold ends, then the other way (recovery).
        const Side push = (t < e.t2) == down ? Side::kSell : Side::kBuy;
        const Side other = push == Side::kBuy ? Side::kSell : Side::kBuy;
        const uint32_t r = rng_.below(100);
        if (r < 55) f.aggress(push, f.draw_qty(3), 4);
        else if (r < 85) f.place_near(push, f.draw_qty(2));  // passive orders chase the move
        else f.cancel(other, true);
        return;
      }
      case SimEventType::kVolumeBurst: {
        const Side side = rng_.chance(0.5) ? Side::kBuy : Side::kSell;
        if (rng_.chance(0.5)) {
          f.aggress(side, f.draw_qty(), 1);
        } else {
          f.place(side, side == Side::kBuy ? f.dbid : f.dask, f.draw_qty());
        }
        return;
      }
      case SimEventType::kLiquidityWithdrawal: {
        const Side side = rng_.chance(0.5) ? Side::kBuy : Side::kSell;
        if (t < e.t2) {
          if (book.total_orders() > e.target_orders) {
            f.cancel(book.side(side).empty() ? (side == Side::kBuy ? Side::kSell : Side::kBuy) : side, false);
          }
        } else {
          f.place(side, side == Side::kBuy ? f.dbid - Price(rng_.below(3)) * st.step
                                           : f.dask + Price(rng_.below(3)) * st.step, f.draw_qty());
        }
        return;
      }
      case SimEventType::kSpoofing:
        return;  // handled before the touch repair
    }
  }

  // 2. Quiet flow: small marketable orders, and adds/cancels that keep each side near
  //    kTargetOrders resting orders.
  const uint32_t r = rng_.below(1000);
  if (r < 150 && !withdrawn) {
    f.aggress(r < 75 ? Side::kBuy : Side::kSell, f.draw_qty(), 2);
    return;
  }
  const Side side = rng_.chance(0.5) ? Side::kBuy : Side::kSell;
  const int orders = book.side(side).orders;
  bool add = orders == 0 || rng_.below(uint32_t(orders + kTargetOrders)) < uint32_t(kTargetOrders);
  if (withdrawn && orders > 0 && rng_.chance(0.7)) add = false;
  if (add) {
    f.place_near(side, f.draw_qty());
  } else {
    f.cancel(side, false);
  }
}

}  // namespace ts
