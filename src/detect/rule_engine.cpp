#include "detect/rule_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/clock.h"

namespace ts {

// PERF NOTE: evaluate() runs on every event. Each rule starts with a float compare against its
// threshold (or an event-kind test) and leaves at once when that fails; the per-symbol work on
// the quiet path is one WindowMax update, one EWMA and a handful of compares. Measured in
// tests/detect/rule_engine_bench_test.cpp (see docs/rules.md for the number).

struct RuleEngine::Ctx {
  const Event& e;
  const BookTop& book;
  const float* row;
  const RefData& ref;
  SymbolRuleState& s;
  StageTimes t;
  Alert* out;
  int max_out;
  int count = 0;
  bool stamped = false;
};

namespace {

const float kZeroRow[kFeatureCount] = {};

constexpr int64_t kNsPerDay = 86400 * kNsPerSec;

bool tradable_phase(Phase p, bool unknown_is_continuous) {
  return p == Phase::kContinuous || (p == Phase::kUnknown && unknown_is_continuous);
}

int64_t day_of(int64_t exch_ts_ns) {
  return exch_ts_ns >= 0 ? exch_ts_ns / kNsPerDay : (exch_ts_ns - kNsPerDay + 1) / kNsPerDay;
}

Severity sev_at(double value, double critical) {
  return value >= critical ? Severity::kCritical : Severity::kWarning;
}

// Trade price and aggressor of a print, if the event is one. kOrderExecute's side is the
// resting order's: the aggressor is the other side.
bool print_of(const Event& e, Price& price, Qty& qty, Side& aggressor) {
  if (e.kind == EventKind::kTrade) {
    price = e.trade.price;
    qty = e.trade.qty;
    aggressor = e.trade.aggressor;
    return true;
  }
  if (e.kind == EventKind::kOrderExecute) {
    price = e.order.price;
    qty = e.order.qty;
    aggressor = e.order.side == Side::kBuy ? Side::kSell : e.order.side == Side::kSell ? Side::kBuy : Side::kNone;
    return true;
  }
  return false;
}

}  // namespace

RuleEngine::RuleEngine(const SymbolTable& symbols, RuleOptions opts, uint32_t shard)
    : symbols_(symbols), opts_(opts), id_base_(uint64_t(shard & 0xffff) << 48) {
  for (int i = 0; i < kRuleTypeCount; ++i) {
    cooldown_ns_[i] = opts_.cooldown_ms[i] * kNsPerMs;
    hold_ns_[i] = opts_.hold_ms[i] * kNsPerMs;
  }
}

void RuleEngine::reserve(size_t symbol_count) {
  if (states_.size() < symbol_count) states_.resize(symbol_count);
}

SymbolRuleState& RuleEngine::state_for(SymbolId id) {
  if (id >= states_.size()) states_.resize(size_t(id) + 1);
  SymbolRuleState& s = states_[id];
  if (!s.initialized) {
    s.initialized = true;
    s.recent_high.reset(opts_.high_dive.lookback_s * kNsPerSec);
    s.seal_peak.reset(opts_.queue_shrink.window_ms * kNsPerMs);
  }
  return s;
}

void RuleEngine::new_day(SymbolRuleState& s, int64_t day) {
  s.day = day;
  s.day_open = 0;
  s.recent_high.reset(opts_.high_dive.lookback_s * kNsPerSec);
  s.seal_peak.reset(opts_.queue_shrink.window_ms * kNsPerMs);
  s.up_sealed = false;
  s.down_sealed = false;
  for (auto& g : s.gates) g = RuleGate{};
}

Alert* RuleEngine::emit(Ctx& c, AlertType type, Severity sev, Price price) {
  if (c.count >= c.max_out) {
    ++overflow_;
    return nullptr;
  }
  if (!c.stamped) {
    c.t.detect_ns = mono_ns();
    c.stamped = true;
  }
  Alert& a = c.out[c.count++];
  ++next_id_;
  a.id = alert_id(symbols_.name(c.e.symbol), type, c.e.exch_ts_ns, c.e.seq);
  a.type = type;
  a.severity = sev;
  a.symbol = c.e.symbol;
  a.exch_ts_ns = c.e.exch_ts_ns;
  a.event_seq = c.e.seq;
  a.price = price;
  a.value_count = 0;
  a.t = c.t;
  std::memcpy(a.features, c.row, sizeof(a.features));
  return &a;
}

Alert* RuleEngine::gate_fire(Ctx& c, AlertType type, Severity sev, Price price) {
  const int i = static_cast<int>(type);
  if (!c.s.gates[i].observe_true(c.e.exch_ts_ns, cooldown_ns_[i], hold_ns_[i])) return nullptr;
  return emit(c, type, sev, price);
}

int RuleEngine::evaluate(const Event& e, const BookTop& book, const float* features, StageTimes t,
                         Alert* out, int max_out) {
  if (e.symbol == kInvalidSymbol || e.kind == EventKind::kStatus) return 0;
  if (!tradable_phase(book.phase, opts_.unknown_phase_is_continuous)) return 0;
  SymbolRuleState& s = state_for(e.symbol);
  const int64_t day = day_of(e.exch_ts_ns);
  if (day != s.day) new_day(s, day);

  Ctx c{e, book, features ? features : kZeroRow, symbols_.ref(e.symbol), s, t, out, max_out};
  const Price p = book.last > 0 ? book.last : static_cast<Price>(std::llround(book.mid()));
  if (p > 0) {
    if (s.day_open == 0) s.day_open = p;
    s.recent_high.update(e.exch_ts_ns, p);
  }

  check_large_trade(c);
  if (e.kind == EventKind::kOrderAdd) check_large_order(c);
  if (c.ref.limit_up > 0) check_limit_up(c);
  if (c.ref.limit_down > 0) check_limit_down(c);
  if (p > 0) {
    check_trend(c, p);
    check_high_dive(c, p);
  }
  check_book(c, p);
  return c.count;
}

void RuleEngine::check_trend(Ctx& c, Price p) {
  const float r60 = c.row[kRet60s];
  const float r10 = c.row[kRet10s];

  // 快速拉升: up >= X bps over 60 s and still rising over 10 s.
  {
    constexpr auto kType = AlertType::kRapidRise;
    const auto& o = opts_.rapid_rise;
    const double ratio = r60 / o.min_ret_60s_bps;
    RuleGate& g = c.s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && r60 >= o.min_ret_60s_bps && r10 > o.min_ret_10s_bps) {
      if (Alert* a = gate_fire(c, kType, sev_at(r60, o.critical_ret_60s_bps), p)) {
        a->add_value("ret_60s_bps", r60, o.min_ret_60s_bps, Cmp::kGe);
        a->add_value("ret_10s_bps", r10, o.min_ret_10s_bps, Cmp::kGt);
      }
    } else {
      g.observe_false(ratio, opts_.rearm_fraction);
    }
  }

  // 加速下跌: down >= X bps over 60 s and falling faster (per second) over the last 10 s.
  {
    constexpr auto kType = AlertType::kAcceleratingDrop;
    const auto& o = opts_.accelerating_drop;
    const double ratio = r60 / o.max_ret_60s_bps;
    const double speed_10 = r10 / 10.0;
    const double speed_limit = o.accel_ratio * r60 / 60.0;
    RuleGate& g = c.s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && r60 <= o.max_ret_60s_bps && speed_10 <= speed_limit) {
      const Severity sev = r60 <= o.critical_ret_60s_bps ? Severity::kCritical : Severity::kWarning;
      if (Alert* a = gate_fire(c, kType, sev, p)) {
        a->add_value("ret_60s_bps", r60, o.max_ret_60s_bps, Cmp::kLe);
        a->add_value("ret_10s_bps_per_s", speed_10, speed_limit, Cmp::kLe);
      }
    } else {
      g.observe_false(ratio, opts_.rearm_fraction);
    }
  }
}

void RuleEngine::check_high_dive(Ctx& c, Price p) {
  constexpr auto kType = AlertType::kHighDive;
  if (!opts_.enabled[int(kType)]) return;
  const auto& o = opts_.high_dive;
  RuleGate& g = c.s.gates[int(kType)];
  const int64_t high = c.s.recent_high.max(c.e.exch_ts_ns);
  const double drop_bps = high > 0 ? (1.0 - double(p) / double(high)) * 1e4 : 0.0;
  if (drop_bps < o.min_drop_bps) {
    g.observe_false(drop_bps / o.min_drop_bps, opts_.rearm_fraction);
    return;
  }
  const Price ref = c.ref.prev_close > 0 ? c.ref.prev_close : c.s.day_open;
  const double gain_bps = ref > 0 ? (double(high) / double(ref) - 1.0) * 1e4 : 0.0;
  if (gain_bps < o.min_high_gain_bps) {
    g.observe_false(drop_bps / o.min_drop_bps, opts_.rearm_fraction);
    return;
  }
  if (Alert* a = gate_fire(c, kType, sev_at(drop_bps, o.critical_drop_bps), p)) {
    a->add_value("drop_from_high_bps", drop_bps, o.min_drop_bps, Cmp::kGe);
    a->add_value("high_gain_bps", gain_bps, o.min_high_gain_bps, Cmp::kGe);
    a->add_value("recent_high_ticks", double(high), 0, Cmp::kInfo);
  }
}

void RuleEngine::check_large_trade(Ctx& c) {
  Price price;
  Qty qty;
  Side aggressor;
  if (!print_of(c.e, price, qty, aggressor) || aggressor == Side::kNone || qty <= 0) return;
  const auto& o = opts_.large_trade;
  const double notional = double(price) * c.ref.tick_size * double(qty);
  if (notional < o.min_notional) return;
  const AlertType type = aggressor == Side::kBuy ? AlertType::kLargeBuy : AlertType::kLargeSell;
  if (!opts_.enabled[int(type)]) return;
  // Discrete events: always armed (no hysteresis), only the cooldown applies.
  c.s.gates[int(type)].observe_false(0, opts_.rearm_fraction);
  if (Alert* a = gate_fire(c, type, sev_at(notional, o.critical_notional), price)) {
    a->add_value("notional", notional, o.min_notional, Cmp::kGe);
    a->add_value("qty", double(qty), 0, Cmp::kInfo);
  }
}

// 大单挂单: a new resting order many times larger than the levels around it, near the touch.
// This is what a spoofing order or a wall looks like when it is placed; the rule reads the
// book after the add, so the order's own level is found by price.
void RuleEngine::check_large_order(Ctx& c) {
  constexpr auto kType = AlertType::kLargeOrder;
  const auto& o = opts_.large_order;
  const OrderBody& ord = c.e.order;
  if (!opts_.enabled[int(kType)] || ord.qty <= 0 || ord.price <= 0) return;
  const double notional = double(ord.price) * c.ref.tick_size * double(ord.qty);
  if (notional < o.min_notional) return;
  const bool bid = ord.side == Side::kBuy;
  const Level* levels = bid ? c.book.bids : c.book.asks;
  const int n = std::min(bid ? c.book.bid_levels : c.book.ask_levels, 5);
  int at = -1;
  Qty others = 0;
  for (int i = 0; i < n; ++i) {
    if (levels[i].price == ord.price) {
      at = i;
      others += levels[i].qty - ord.qty;  // whatever rested at that price before
    } else {
      others += levels[i].qty;
    }
  }
  if (at < 0 || at >= o.max_level || n < 2) return;
  const double avg_other = double(others) / double(n - 1 + (levels[at].qty > ord.qty ? 1 : 0));
  if (avg_other <= 0) return;
  const double multiple = double(ord.qty) / avg_other;
  // Discrete events: always armed (no hysteresis), only the cooldown applies.
  c.s.gates[int(kType)].observe_false(0, opts_.rearm_fraction);
  if (multiple < o.min_level_multiple) return;
  if (Alert* a = gate_fire(c, kType, sev_at(multiple, o.critical_level_multiple), ord.price)) {
    a->add_value("level_multiple", multiple, o.min_level_multiple, Cmp::kGe);
    a->add_value("notional", notional, o.min_notional, Cmp::kGe);
    a->add_value("level", double(at + 1), double(o.max_level), Cmp::kInfo);
    a->add_value("side_buy", bid ? 1.0 : 0.0, 0, Cmp::kInfo);
  }
}

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
    // Still sealed: 封单量骤减 — the queue at the limit vs its recent peak.
    constexpr auto kType = AlertType::kLimitUpQueueShrink;
    const auto& o = opts_.queue_shrink;
    const Qty q = b.bids[0].qty;
    s.seal_peak.update(c.e.exch_ts_ns, q);
    const int64_t peak = s.seal_peak.max(c.e.exch_ts_ns);
    const double drop_pct = peak > 0 ? 100.0 * double(peak - q) / double(peak) : 0.0;
    RuleGate& g = s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && drop_pct >= o.min_drop_pct) {
      if (Alert* a = gate_fire(c, kType, sev_at(drop_pct, o.critical_drop_pct), limit)) {
        a->add_value("queue_drop_pct", drop_pct, o.min_drop_pct, Cmp::kGe);
        a->add_value("bid_qty_at_limit", double(q), 0, Cmp::kInfo);
        a->add_value("peak_qty", double(peak), 0, Cmp::kInfo);
      }
    } else {
      g.observe_false(drop_pct / o.min_drop_pct, opts_.rearm_fraction);
    }
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
    }
    return;
  }

  if (ask_at_limit && !bid_at_or_above && b.asks[0].qty >= min_qty) {
    s.down_sealed = true;
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

void RuleEngine::check_book(Ctx& c, Price p) {
  const BookTop& b = c.book;
  const bool uncrossed = b.has_bbo() && b.bids[0].price < b.asks[0].price;

  // Spread widening against the symbol's own typical spread.
  {
    constexpr auto kType = AlertType::kSpreadWidening;
    const auto& o = opts_.spread;
    const double spread = c.row[kSpreadTicks];
    if (uncrossed && spread > 0) {
      SymbolRuleState& s = c.s;
      const double typical = s.spread_typical;
      const double depth_change = c.row[kDepthChange];
      const bool withdrawn = depth_change <= o.withdrawal_depth_change;
      const double threshold =
          std::max(o.min_ticks, (withdrawn ? o.withdrawal_multiple : o.typical_multiple) * typical);
      RuleGate& g = s.gates[int(kType)];
      if (opts_.enabled[int(kType)] && s.spread_samples >= o.min_samples && spread >= threshold) {
        const Severity sev = spread >= o.critical_multiple * typical ? Severity::kCritical : Severity::kWarning;
        if (Alert* a = gate_fire(c, kType, sev, p)) {
          a->add_value("spread_ticks", spread, threshold, Cmp::kGe);
          a->add_value("typical_spread_ticks", typical, 0, Cmp::kInfo);
          if (withdrawn) a->add_value("depth_change", depth_change, o.withdrawal_depth_change, Cmp::kLe);
        }
      } else {
        g.observe_false(spread / threshold, opts_.rearm_fraction);
        // The typical spread learns from quiet periods only, so a long wide spell does not
        // become the new normal while it is being alerted on.
        s.spread_typical = s.spread_samples == 0 ? spread : typical + o.typical_alpha * (spread - typical);
        ++s.spread_samples;
      }
    }
  }

  // Book imbalance over the top 5 levels, with enough depth to mean something.
  {
    constexpr auto kType = AlertType::kBookImbalance;
    const auto& o = opts_.imbalance;
    const double imb = c.row[kImbalance5];
    RuleGate& g = c.s.gates[int(kType)];
    const double ratio = std::fabs(imb) / o.min_abs_imbalance_5;
    bool fire = opts_.enabled[int(kType)] && uncrossed && std::fabs(imb) >= o.min_abs_imbalance_5;
    Qty depth = 0;
    if (fire) {
      for (int i = 0; i < 5; ++i) depth += b.bids[i].qty + b.asks[i].qty;
      fire = depth >= o.min_depth_lots * c.ref.lot_size;
    }
    if (fire) {
      if (Alert* a = gate_fire(c, kType, sev_at(std::fabs(imb), o.critical_abs_imbalance_5), p)) {
        // Signed: bid-heavy fires at >= +X, ask-heavy at <= -X.
        a->add_value("imbalance_5", imb, imb >= 0 ? o.min_abs_imbalance_5 : -o.min_abs_imbalance_5,
                     imb >= 0 ? Cmp::kGe : Cmp::kLe);
        a->add_value("depth_5", double(depth), double(o.min_depth_lots * c.ref.lot_size), Cmp::kGe);
      }
    } else {
      g.observe_false(ratio, opts_.rearm_fraction);
    }
  }

  // Volume burst.
  {
    constexpr auto kType = AlertType::kVolumeBurst;
    const auto& o = opts_.volume_burst;
    const double z = c.row[kVolumeZ];
    RuleGate& g = c.s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && z >= o.min_volume_z && p > 0) {
      if (Alert* a = gate_fire(c, kType, sev_at(z, o.critical_volume_z), p)) {
        a->add_value("volume_z", z, o.min_volume_z, Cmp::kGe);
        a->add_value("trade_count_z", c.row[kTradeCountZ], 0, Cmp::kInfo);
      }
    } else {
      g.observe_false(z / o.min_volume_z, opts_.rearm_fraction);
    }
  }
}

}  // namespace ts
