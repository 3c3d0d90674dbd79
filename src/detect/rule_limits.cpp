// Limit rules: 触及涨停/跌停 (touched), 封涨停/跌停 (sealed), 打开 (opened), 封单量骤减 (the
// sealed queue shrinking). Part of RuleEngine (rule_engine.h); only where RefData has limits.
#include <algorithm>

#include "core/clock.h"
#include "detect/rule_engine.h"
#include "detect/rule_engine_ctx.h"

namespace ts {

using rule_detail::print_of;
using rule_detail::sev_at;

void RuleEngine::check_limit_up(Ctx& c) {
  const Price limit = c.ref.limit_up;
  const BookTop& b = c.book;
  SymbolRuleState& s = c.s;
  const Qty min_qty = opts_.limit.min_seal_lots * c.ref.lot_size;
  const bool bid_at_limit = b.bid_levels > 0 && b.bids[0].price == limit;
  const bool ask_at_or_below = b.ask_levels > 0 && b.asks[0].price <= limit;

  if (s.up_sealed) {
    Price tp;
    Qty tq;
    Side ta;
    const bool print_below = print_of(c.e, tp, tq, ta) && tp > 0 && tp < limit;
    if (print_below || ask_at_or_below || !bid_at_limit) {
      s.up_sealed = false;
      constexpr auto kType = AlertType::kLimitUpOpened;
      c.s.gates[int(kType)].observe_false(0, 1);
      if (opts_.enabled[int(kType)]) {
        if (Alert* a = gate_fire(c, kType, Severity::kCritical, print_below ? tp : b.last)) {
          a->add_value("limit_up_ticks", double(limit), 0, Cmp::kInfo);
          a->add_value("best_bid_ticks", double(b.best_bid()), double(limit), Cmp::kLt);
          a->add_value("bid_qty_at_limit", bid_at_limit ? double(b.bids[0].qty) : 0.0, 0, Cmp::kInfo);
          if (print_below) a->add_value("trade_price_ticks", double(tp), double(limit), Cmp::kLt);
        }
      }
      return;
    }
    check_queue_shrink(c, AlertType::kLimitUpQueueShrink, opts_.queue_shrink, limit, b.bids[0].qty);
    return;
  }

  if (bid_at_limit && !ask_at_or_below && b.bids[0].qty >= min_qty) {
    s.up_sealed = true;
    s.seal_peak.reset(opts_.queue_shrink.window_ms * kNsPerMs);
    s.seal_peak.update(c.e.exch_ts_ns, b.bids[0].qty);
    s.gates[int(AlertType::kLimitUpQueueShrink)] = RuleGate{};
    constexpr auto kType = AlertType::kLimitUpSealed;
    c.s.gates[int(kType)].observe_false(0, 1);
    if (opts_.enabled[int(kType)]) {
      if (Alert* a = gate_fire(c, kType, Severity::kCritical, limit)) {
        a->add_value("bid_qty_at_limit", double(b.bids[0].qty), double(min_qty), Cmp::kGe);
        a->add_value("limit_up_ticks", double(limit), 0, Cmp::kInfo);
      }
    }
  }
}

void RuleEngine::check_limit_down(Ctx& c) {
  const Price limit = c.ref.limit_down;
  const BookTop& b = c.book;
  SymbolRuleState& s = c.s;
  const Qty min_qty = opts_.limit.min_seal_lots * c.ref.lot_size;
  const bool ask_at_limit = b.ask_levels > 0 && b.asks[0].price == limit;
  const bool bid_at_or_above = b.bid_levels > 0 && b.bids[0].price >= limit;

  if (s.down_sealed) {
    Price tp;
    Qty tq;
    Side ta;
    const bool print_above = print_of(c.e, tp, tq, ta) && tp > limit;
    if (print_above || bid_at_or_above || !ask_at_limit) {
      s.down_sealed = false;
      constexpr auto kType = AlertType::kLimitDownOpened;
      c.s.gates[int(kType)].observe_false(0, 1);
      if (opts_.enabled[int(kType)]) {
        if (Alert* a = gate_fire(c, kType, Severity::kCritical, print_above ? tp : b.last)) {
          a->add_value("limit_down_ticks", double(limit), 0, Cmp::kInfo);
          a->add_value("best_ask_ticks", double(b.best_ask()), double(limit), Cmp::kGt);
          a->add_value("ask_qty_at_limit", ask_at_limit ? double(b.asks[0].qty) : 0.0, 0, Cmp::kInfo);
          if (print_above) a->add_value("trade_price_ticks", double(tp), double(limit), Cmp::kGt);
        }
      }
      return;
    }
    check_queue_shrink(c, AlertType::kLimitDownQueueShrink, opts_.queue_shrink_down, limit, b.asks[0].qty);
    return;
  }

  if (ask_at_limit && !bid_at_or_above && b.asks[0].qty >= min_qty) {
    s.down_sealed = true;
    s.seal_peak.reset(opts_.queue_shrink_down.window_ms * kNsPerMs);
    s.seal_peak.update(c.e.exch_ts_ns, b.asks[0].qty);
    s.gates[int(AlertType::kLimitDownQueueShrink)] = RuleGate{};
    constexpr auto kType = AlertType::kLimitDownSealed;
    c.s.gates[int(kType)].observe_false(0, 1);
    if (opts_.enabled[int(kType)]) {
      if (Alert* a = gate_fire(c, kType, Severity::kCritical, limit)) {
        a->add_value("ask_qty_at_limit", double(b.asks[0].qty), double(min_qty), Cmp::kGe);
        a->add_value("limit_down_ticks", double(limit), 0, Cmp::kInfo);
      }
    }
  }
}

// 封单量骤减 while sealed (either side; one symbol is sealed on one side at most, so both use
// seal_peak): the queue at the limit vs its peak over the last window_ms.
void RuleEngine::check_queue_shrink(Ctx& c, AlertType type, const QueueShrinkOptions& o, Price limit, Qty q) {
  SymbolRuleState& s = c.s;
  s.seal_peak.update(c.e.exch_ts_ns, q);
  const int64_t peak = s.seal_peak.max(c.e.exch_ts_ns);
  const double drop_pct = peak > 0 ? 100.0 * double(peak - q) / double(peak) : 0.0;
  RuleGate& g = s.gates[int(type)];
  if (opts_.enabled[int(type)] && drop_pct >= o.min_drop_pct) {
    if (Alert* a = gate_fire(c, type, sev_at(drop_pct, o.critical_drop_pct), limit)) {
      a->add_value("queue_drop_pct", drop_pct, o.min_drop_pct, Cmp::kGe);
      a->add_value(type == AlertType::kLimitUpQueueShrink ? "bid_qty_at_limit" : "ask_qty_at_limit", double(q), 0,
                   Cmp::kInfo);
      a->add_value("peak_qty", double(peak), 0, Cmp::kInfo);
    }
  } else {
    g.observe_false(drop_pct / o.min_drop_pct, opts_.rearm_fraction);
  }
}

// 触及涨停 / 触及跌停: the price reached the limit — a trade at it, or the best ask at limit-up
// (best bid at limit-down) — without being sealed there (a seal raises limit_*_sealed instead).
// One alert per touch: it re-arms once the price (last, else mid) has gone touch_rearm_bps back
// from the limit; the cooldown stops a flicker right at the re-arm line.
void RuleEngine::check_limit_touch(Ctx& c, Price p, bool up) {
  const AlertType type = up ? AlertType::kLimitUpTouched : AlertType::kLimitDownTouched;
  const Price limit = up ? c.ref.limit_up : c.ref.limit_down;
  const BookTop& b = c.book;
  bool& armed = up ? c.s.up_touch_armed : c.s.down_touch_armed;
  Price tp = 0;
  Qty tq = 0;
  Side ta = Side::kNone;
  const bool print_at = print_of(c.e, tp, tq, ta) && tp > 0 && (up ? tp >= limit : tp <= limit);
  const bool quote_at = up ? b.ask_levels > 0 && b.asks[0].price >= limit
                           : b.bid_levels > 0 && b.bids[0].price > 0 && b.bids[0].price <= limit;
  const bool sealed = up ? c.s.up_sealed : c.s.down_sealed;
  if (sealed) {
    armed = false;  // the seal was the news; a touch again needs the price to leave first
    return;
  }
  if (!print_at && !quote_at) {
    const double away = opts_.limit.touch_rearm_bps * 1e-4 * double(limit);
    if (p > 0 && (up ? double(p) <= double(limit) - away : double(p) >= double(limit) + away)) armed = true;
    return;
  }
  if (!armed || !opts_.enabled[int(type)]) return;
  RuleGate& g = c.s.gates[int(type)];
  g.observe_false(0, opts_.rearm_fraction);  // the touch's own re-arm is the hysteresis
  if (Alert* a = gate_fire(c, type, Severity::kWarning, print_at ? tp : limit)) {
    armed = false;
    a->add_value(up ? "limit_up_ticks" : "limit_down_ticks", double(limit), 0, Cmp::kInfo);
    if (print_at) a->add_value("trade_price_ticks", double(tp), double(limit), up ? Cmp::kGe : Cmp::kLe);
    if (up) a->add_value("best_ask_ticks", double(b.best_ask()), double(limit), Cmp::kInfo);
    else a->add_value("best_bid_ticks", double(b.best_bid()), double(limit), Cmp::kInfo);
    a->add_value(up ? "bid_qty_at_limit" : "ask_qty_at_limit",
                 up ? (b.bid_levels > 0 && b.bids[0].price == limit ? double(b.bids[0].qty) : 0.0)
                    : (b.ask_levels > 0 && b.asks[0].price == limit ? double(b.asks[0].qty) : 0.0),
                 0, Cmp::kInfo);
  }
}

}  // namespace ts
