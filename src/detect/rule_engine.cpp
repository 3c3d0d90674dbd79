#include "detect/rule_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/clock.h"
#include "core/instrument_ref.h"
#include "detect/rule_engine_ctx.h"

namespace ts {

using rule_detail::print_of;
using rule_detail::sev_at;

// PERF NOTE: evaluate() runs on every event. Each rule starts with a float compare against its
// threshold (or an event-kind test) and leaves at once when that fails; the per-symbol work on
// the quiet path is one WindowMax update, the minute-flow roll and a handful of compares; the
// typical spread and depths take a sample at most every 50 ms of exchange time (RobustLevel).
// Measured by RuleGateTest.QuietEventCost (see docs/rules.md for the number).

namespace {

const float kZeroRow[kFeatureCount] = {};
// Ten minutes without one event in continuous trading is a break, not a quiet book: the
// shortest scheduled break is the 90-minute lunch, and a book that trades at all changes within
// minutes (a definition, not fitted to any dataset).
constexpr int64_t kBreakNs = 10 * 60 * kNsPerSec;
constexpr double kMaxLogDev = 3.0;  // one spread sample moves the dispersion by at most e^3 = 20×

constexpr int64_t kNsPerDay = 86400 * kNsPerSec;

bool tradable_phase(Phase p, bool unknown_is_continuous) {
  return p == Phase::kContinuous || (p == Phase::kUnknown && unknown_is_continuous);
}

int64_t day_of(int64_t exch_ts_ns) {
  return exch_ts_ns >= 0 ? exch_ts_ns / kNsPerDay : (exch_ts_ns - kNsPerDay + 1) / kNsPerDay;
}

constexpr int64_t kNsPerMinute = 60 * kNsPerSec;
__extension__ typedef __int128 Int128;

// Exact notional of price_ticks × qty size increments in the symbol's currency:
// ticks × increments × tick.mantissa × size_increment.mantissa in 128-bit integers, then one
// rounding to double when the decimal scale is applied (a 1e-5 BTC increment and a 1-share
// increment with the same notional give the same double).
double notional_of(Price price_ticks, Qty qty, const RefData& r) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
                                      1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
                                      1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29,
                                      1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36};
  const Int128 units = Int128(price_ticks) * Int128(qty);
  const Int128 unit_mantissa = Int128(r.tick.mantissa) * Int128(r.size_increment.mantissa);
  const int scale = std::clamp(r.tick.scale + r.size_increment.scale, 0, 36);
  // |units| < 2^126 and |unit_mantissa| < 2^126; their product is formed in double when it
  // would overflow 128 bits (no real trade comes near).
  const double m = double(unit_mantissa);
  const double u = double(units);
  if (std::fabs(u) * std::fabs(m) < 1.6e38) return double(units * unit_mantissa) / kPow10[scale];
  return u * m / kPow10[scale];
}

// Rolls the minute flow to the minute of ts_ns: a completed minute becomes a sample of the
// typical flow. Minutes without any event (a lunch break, a quiet spell) add no sample.
void roll_flow(MinuteFlow& f, int64_t ts_ns, const FlowOptions& o) {
  const int64_t minute = ts_ns / kNsPerMinute;
  if (minute == f.minute) return;
  // Only minutes with prints are samples. A minute without one says nothing about how large
  // the flow is when it trades, and under the multiplicative clip it is worse than no sample:
  // a zero is clipped to typical / clip and pulls the level down, so once fewer than ~1 in 4
  // minutes trade (Bitstamp BTC/USD at night, 2015-05-01 03:00-05:00 UTC) the typical minute
  // shrank to $50 against ordinary $120-240 prints and every print was "large".
  if (f.minute != std::numeric_limits<int64_t>::min() && f.notional > 0) {
    f.typical.add(f.notional, o.minute_alpha, o.clip);
  }
  f.minute = minute;
  f.notional = 0;
}

double typical_flow(const MinuteFlow& f, const FlowOptions& o) {
  return f.typical.samples >= o.min_minutes ? f.typical.level : 0.0;
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
  s.up_touch_armed = true;
  s.down_touch_armed = true;
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
                         Alert* out, int max_out, const VolumeWindow* volume) {
  if (e.symbol == kInvalidSymbol || e.kind == EventKind::kStatus) return 0;
  if (!tradable_phase(book.phase, opts_.unknown_phase_is_continuous)) return 0;
  SymbolRuleState& s = state_for(e.symbol);
  const int64_t day = day_of(e.exch_ts_ns);
  if (day != s.day) new_day(s, day);
  // No event judged for kBreakNs: the symbol was not trading (a break, a halt, the night), and
  // the levels that hold over time do not count that time (RobustLevel::skip_break).
  if (s.last_eval_ns != std::numeric_limits<int64_t>::min() && e.exch_ts_ns - s.last_eval_ns >= kBreakNs) {
    for (RobustLevel* l : {&s.spread, &s.spread_dev, &s.bid_depth, &s.ask_depth}) l->skip_break(e.exch_ts_ns);
  }
  s.last_eval_ns = e.exch_ts_ns;

  Ctx c{e, book, features ? features : kZeroRow, symbols_.ref(e.symbol), s, t, out, max_out};
  c.volume = volume;
  const Price p = book.last > 0 ? book.last : static_cast<Price>(std::llround(book.mid()));
  if (p > 0) {
    if (s.day_open == 0) s.day_open = p;
    s.recent_high.update(e.exch_ts_ns, p);
  }

  roll_flow(s.flow, e.exch_ts_ns, opts_.flow);
  check_large_trade(c);
  if (e.kind == EventKind::kOrderAdd) check_large_order(c);
  if (c.ref.limit_up > 0) {
    check_limit_up(c);
    check_limit_touch(c, p, true);
  }
  if (c.ref.limit_down > 0) {
    check_limit_down(c);
    check_limit_touch(c, p, false);
  }
  if (p > 0) {
    check_trend(c, p);
    check_high_dive(c, p);
  }
  check_book(c, p);
  return c.count;
}

// The relative trend thresholds: a 60 s move in units of the symbol's own volatility over 60 s,
// sigma_60 = vol × √60 with vol the symbol's vol_long before the move (PreMoveVol, rule_state.h),
// and at least min_move_ticks ticks (a one-tick bounce of a coarse-tick stock is not a rapid
// move) and min_move_bps. 0 when vol_long is not known yet.
static double sigma_60s_bps(double vol) { return vol > 0 ? vol * std::sqrt(60.0) : 0.0; }

void RuleEngine::check_trend(Ctx& c, Price p) {
  const float r60 = c.row[kRet60s];
  const float r10 = c.row[kRet10s];
  const double sigma60 = sigma_60s_bps(c.s.vol.reference(c.e.exch_ts_ns, c.row[kVolLong]));
  const double tick_bps = 1e4 / double(p);

  // 快速拉升: up >= X over 60 s and still rising over 10 s.
  {
    constexpr auto kType = AlertType::kRapidRise;
    const auto& o = opts_.rapid_rise;
    const double min_ret =
        o.relative ? std::max({o.min_sigma_60s * sigma60, o.min_move_ticks * tick_bps, o.min_move_bps})
                   : o.min_ret_60s_bps;
    const double critical = o.relative ? o.critical_sigma_60s * sigma60 : o.critical_ret_60s_bps;
    const bool known = !o.relative || sigma60 > 0;
    RuleGate& g = c.s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && known && r60 >= min_ret && r10 > o.min_ret_10s_bps) {
      if (Alert* a = gate_fire(c, kType, sev_at(r60, std::max(critical, min_ret)), p)) {
        a->add_value("ret_60s_bps", r60, min_ret, Cmp::kGe);
        a->add_value("ret_10s_bps", r10, o.min_ret_10s_bps, Cmp::kGt);
        if (o.relative) a->add_value("ret_60s_sigma", r60 / sigma60, o.min_sigma_60s, Cmp::kInfo);
      }
    } else {
      g.observe_false(min_ret > 0 ? r60 / min_ret : 0.0, opts_.rearm_fraction);
    }
  }

  // 加速下跌: down >= X over 60 s and falling faster (per second) over the last 10 s.
  {
    constexpr auto kType = AlertType::kAcceleratingDrop;
    const auto& o = opts_.accelerating_drop;
    const double max_ret =
        o.relative ? std::min({o.max_sigma_60s * sigma60, -o.min_move_ticks * tick_bps, -o.min_move_bps})
                   : o.max_ret_60s_bps;
    const double critical = o.relative ? o.critical_sigma_60s * sigma60 : o.critical_ret_60s_bps;
    const bool known = !o.relative || sigma60 > 0;
    const double speed_10 = r10 / 10.0;
    const double speed_limit = o.accel_ratio * r60 / 60.0;
    RuleGate& g = c.s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && known && r60 <= max_ret && speed_10 <= speed_limit) {
      const Severity sev = r60 <= std::min(critical, max_ret) ? Severity::kCritical : Severity::kWarning;
      if (Alert* a = gate_fire(c, kType, sev, p)) {
        a->add_value("ret_60s_bps", r60, max_ret, Cmp::kLe);
        a->add_value("ret_10s_bps_per_s", speed_10, speed_limit, Cmp::kLe);
        if (o.relative) a->add_value("ret_60s_sigma", r60 / sigma60, o.max_sigma_60s, Cmp::kInfo);
      }
    } else {
      g.observe_false(max_ret < 0 ? r60 / max_ret : 0.0, opts_.rearm_fraction);
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
  // Relative: the drop in units of the symbol's volatility over the lookback window.
  // The pre-move volatility (check_trend updated it on this event when it ran first; reading it
  // here without a new bucket changes nothing).
  const double vol = c.s.vol.reference(c.e.exch_ts_ns, c.row[kVolLong]);
  const double sigma = vol > 0 ? vol * std::sqrt(double(o.lookback_s)) : 0.0;
  if (o.relative && sigma <= 0) {
    g.observe_false(0, opts_.rearm_fraction);
    return;
  }
  const double min_drop = o.relative ? std::max(o.min_drop_sigma * sigma, o.min_drop_floor_bps) : o.min_drop_bps;
  const double critical = o.relative ? o.critical_drop_sigma * sigma : o.critical_drop_bps;
  if (drop_bps < min_drop) {
    g.observe_false(drop_bps / min_drop, opts_.rearm_fraction);
    return;
  }
  const Price ref = c.ref.prev_close > 0 ? c.ref.prev_close : c.s.day_open;
  const double gain_bps = ref > 0 ? (double(high) / double(ref) - 1.0) * 1e4 : 0.0;
  if (gain_bps < o.min_high_gain_bps) {
    g.observe_false(drop_bps / min_drop, opts_.rearm_fraction);
    return;
  }
  if (Alert* a = gate_fire(c, kType, sev_at(drop_bps, std::max(critical, min_drop)), p)) {
    a->add_value("drop_from_high_bps", drop_bps, min_drop, Cmp::kGe);
    a->add_value("high_gain_bps", gain_bps, o.min_high_gain_bps, Cmp::kGe);
    a->add_value("recent_high_ticks", double(high), 0, Cmp::kInfo);
  }
}

void RuleEngine::check_large_trade(Ctx& c) {
  Price price;
  Qty qty;
  Side aggressor;
  if (!print_of(c.e, price, qty, aggressor) || qty <= 0 || price <= 0) return;
  const double notional = notional_of(price, qty, c.ref);
  // The print counts in this minute's flow after it was judged against the typical minute.
  const double typical = typical_flow(c.s.flow, opts_.flow);
  c.s.flow.notional += notional;
  if (aggressor == Side::kNone) return;
  const auto& o = opts_.large_trade;
  const double min_notional = o.relative ? o.min_flow_multiple * typical : o.min_notional;
  const double critical = o.relative ? o.critical_flow_multiple * typical : o.critical_notional;
  if ((o.relative && typical <= 0) || notional < min_notional) return;
  const AlertType type = aggressor == Side::kBuy ? AlertType::kLargeBuy : AlertType::kLargeSell;
  if (!opts_.enabled[int(type)]) return;
  c.s.large_print_ns = c.e.exch_ts_ns;
  // Discrete events: always armed (no hysteresis), only the cooldown applies.
  c.s.gates[int(type)].observe_false(0, opts_.rearm_fraction);
  if (Alert* a = gate_fire(c, type, sev_at(notional, std::max(critical, min_notional)), price)) {
    a->add_value("notional", notional, min_notional, Cmp::kGe);
    a->add_value("qty", double(qty), 0, Cmp::kInfo);
    if (o.relative) a->add_value("typical_minute_notional", typical, 0, Cmp::kInfo);
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
  const double notional = notional_of(ord.price, ord.qty, c.ref);
  const double typical = typical_flow(c.s.flow, opts_.flow);
  const double min_notional = o.relative ? o.min_flow_multiple * typical : o.min_notional;
  if ((o.relative && typical <= 0) || notional < min_notional) return;
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
  // The wall reported last, cancelled and re-placed — same side, at its price or at its level
  // from the touch (a wall that follows the touch as the market moves), a size within 2× — is
  // one wall, one alert. Its window runs from the latest placement, so a wall that keeps being
  // re-placed stays one wall.
  SymbolRuleState& s = c.s;
  if (o.same_wall_s > 0 && s.wall_bid == bid && (s.wall_price == ord.price || s.wall_level == at) &&
      ord.qty <= 2 * s.wall_qty && 2 * ord.qty >= s.wall_qty &&
      c.e.exch_ts_ns - s.wall_ns < o.same_wall_s * kNsPerSec) {
    s.wall_ns = c.e.exch_ts_ns;
    s.wall_price = ord.price;
    s.wall_level = at;
    s.wall_qty = ord.qty;
    return;
  }
  if (Alert* a = gate_fire(c, kType, sev_at(multiple, o.critical_level_multiple), ord.price)) {
    s.wall_ns = c.e.exch_ts_ns;
    s.wall_bid = bid;
    s.wall_price = ord.price;
    s.wall_level = at;
    s.wall_qty = ord.qty;
    a->add_value("level_multiple", multiple, o.min_level_multiple, Cmp::kGe);
    a->add_value("notional", notional, min_notional, Cmp::kGe);
    a->add_value("level", double(at + 1), double(o.max_level), Cmp::kInfo);
    a->add_value("side_buy", bid ? 1.0 : 0.0, 0, Cmp::kInfo);
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
    // A print is a book in the middle of a match: an order-flow feed (SSE L3, LOBSTER, Bitstamp)
    // publishes a taker's fills one message at a time and its remainder after them, so between
    // two fills the book shows the levels already taken and not yet the taker's own order (on
    // SSE 2023-07-11, 57 of 79 alerts were such transients: 600536 at 10:46:45.030 "5 ticks"
    // for the microseconds between a fill and the taker's 1-tick remainder). The spread is
    // judged, and learned, on the events that leave the book at rest; a spread that a sweep
    // really left wide is still wide at the next order event. (Snapshot feeds: a print does
    // not move the book, so nothing is lost.)
    const bool mid_match = c.e.kind == EventKind::kTrade || c.e.kind == EventKind::kOrderExecute;
    if (uncrossed && spread > 0 && !mid_match) {
      SymbolRuleState& s = c.s;
      const double typical = s.spread.level;
      const double depth_change = c.row[kDepthChange];
      const bool withdrawn = depth_change <= o.withdrawal_depth_change;
      // How far this symbol's spread usually strays from its typical level (log units): a spread
      // that routinely doubles needs more than 4× to be news.
      const double stretch = std::max(1.0, std::exp(o.dispersion_k * s.spread_dev.level) / o.typical_multiple);
      const double multiple = (withdrawn ? o.withdrawal_multiple : o.typical_multiple) * stretch;
      const double threshold = o.relative ? std::max(o.min_ticks, multiple * typical) : o.min_ticks;
      // Known once min_samples samples span one time constant (the opening minutes' spread is
      // not yet the symbol's typical spread).
      const bool known = !o.relative || s.spread.trusted(o.min_samples, o.typical_tau_s * 1e9);
      // ... and wider than the symbol's own spread is own_quantile of the time (relative mode):
      // a multiple of a mean cannot tell a stock whose spread is often that wide (SZSE ChiNext
      // names sit >= 7 ticks for minutes at a time around a typical 1-2) from one where it is news.
      // (Read only once the spread passed the cheap tests: a sum over the sketch's bins.)
      const auto above_own = [&] {
        return !o.relative || o.own_quantile <= 0 || s.spread_dist.above(spread, o.own_quantile);
      };
      RuleGate& g = s.gates[int(kType)];
      if (opts_.enabled[int(kType)] && known && spread >= threshold && above_own()) {
        const Severity sev = spread >= std::max(o.critical_multiple * typical, threshold) ? Severity::kCritical
                                                                                          : Severity::kWarning;
        if (Alert* a = gate_fire(c, kType, sev, p)) {
          a->add_value("spread_ticks", spread, threshold, Cmp::kGe);
          a->add_value("typical_spread_ticks", typical, 0, Cmp::kInfo);
          if (withdrawn) a->add_value("depth_change", depth_change, o.withdrawal_depth_change, Cmp::kLe);
        }
      } else {
        g.observe_false(spread / threshold, opts_.rearm_fraction);
      }
      // The typical spread learns from every event, alerting or not, with bounded influence
      // (RobustLevel): a short widening barely moves it, a spread that stays wide becomes the
      // normal one within minutes (typical_tau_s, typical_clip) and the alerts stop.
      if (s.spread.due(c.e.exch_ts_ns)) {
        if (o.own_quantile > 0) {
          // Weighted by the time since the previous sample (the first: one sampling step).
          const double dt = s.spread.last_ns == std::numeric_limits<int64_t>::min()
                                ? double(RobustLevel::kStepNs) : double(c.e.exch_ts_ns - s.spread.last_ns);
          s.spread_dist.add(spread, dt / (o.quantile_tau_s * 1e9 + dt));
        }
        if (typical > 0) {
          const double dev = std::min(std::fabs(std::log(spread / typical)), kMaxLogDev);
          s.spread_dev.add_at(c.e.exch_ts_ns, dev, o.dispersion_tau_s * 1e9, 0);
        }
        s.spread.add_at(c.e.exch_ts_ns, spread, o.typical_tau_s * 1e9, o.typical_clip);
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
    const bool sample_depth = uncrossed && c.s.bid_depth.due(c.e.exch_ts_ns);
    Qty bid_depth = 0, ask_depth = 0;
    if (fire || sample_depth) {
      for (int i = 0; i < 5; ++i) {
        bid_depth += b.bids[i].qty;
        ask_depth += b.asks[i].qty;
      }
    }
    const Qty depth = bid_depth + ask_depth;
    // Relative: the heavy side is a wall that was not there before (its depth a multiple of
    // its own typical level), not a book whose other side merely thinned out.
    const RobustLevel& heavy_typical = imb >= 0 ? c.s.bid_depth : c.s.ask_depth;
    const double heavy = double(imb >= 0 ? bid_depth : ask_depth);
    const double heavy_multiple = heavy_typical.level > 0 ? heavy / heavy_typical.level : 0.0;
    // The floor in trading lots (core/instrument_ref.h): an A-share's board lot, a coin's
    // minimum order at this price; 200 lots of BTC were 200 × 10^-8 BTC before, no floor at all.
    const double depth_floor = double(o.min_depth_lots) * lot_increments(c.ref, double(p));
    if (fire) fire = double(depth) >= depth_floor;
    // The typical depth is trusted once it has seen one time constant of samples (the first
    // minutes of a symbol have no typical depth yet, only the first few seconds').
    if (fire && o.relative) fire = heavy_typical.trusted(100, o.depth_tau_s * 1e9) && heavy_multiple >= o.min_depth_multiple;
    // A wall that large_order reported (same side, within this rule's cooldown) is not reported
    // again as the imbalance it makes: one order, one alert.
    if (fire && c.e.exch_ts_ns - c.s.wall_ns < cooldown_ns_[int(kType)] && c.s.wall_bid == (imb >= 0)) fire = false;
    if (sample_depth) {
      c.s.bid_depth.add_at(c.e.exch_ts_ns, double(bid_depth), o.depth_tau_s * 1e9, 2.0);
      c.s.ask_depth.add_at(c.e.exch_ts_ns, double(ask_depth), o.depth_tau_s * 1e9, 2.0);
    }
    if (fire) {
      if (Alert* a = gate_fire(c, kType, sev_at(std::fabs(imb), o.critical_abs_imbalance_5), p)) {
        // Signed: bid-heavy fires at >= +X, ask-heavy at <= -X.
        a->add_value("imbalance_5", imb, imb >= 0 ? o.min_abs_imbalance_5 : -o.min_abs_imbalance_5,
                     imb >= 0 ? Cmp::kGe : Cmp::kLe);
        a->add_value("depth_5", double(depth), depth_floor, Cmp::kGe);
        if (o.relative) a->add_value("heavy_side_depth_multiple", heavy_multiple, o.min_depth_multiple, Cmp::kGe);
      }
    } else {
      g.observe_false(ratio, opts_.rearm_fraction);
    }
  }

  // Volume burst: the last 60 s traded a multiple of the volume, or of the number of prints,
  // that this time of day usually sees for the symbol (one block print in a 10 s window is
  // large_buy/large_sell's, not a burst).
  {
    constexpr auto kType = AlertType::kVolumeBurst;
    const auto& o = opts_.volume_burst;
    const double z = c.row[kVolumeZ];
    const bool known = c.volume != nullptr && c.volume->expected_60s > 0;
    const double vm = known ? double(c.volume->multiple_60s) : 0.0;
    const double cm = known ? double(c.volume->count_multiple_60s) : 0.0;
    // One order, one alert: within 60 s of a print that large_buy / large_sell judged large, the
    // 60 s volume is mostly that taker's order (Bitstamp at night: one 13 BTC market order was
    // 12.9x the expected minute), which they reported; the burst must then show in the number of
    // prints. A burst of many prints still fires by its count.
    const bool after_large_print = c.e.exch_ts_ns - c.s.large_print_ns < 60 * kNsPerSec;
    const bool by_volume = vm >= o.min_volume_multiple_60s && !after_large_print;
    const bool by_multiple = o.min_volume_multiple_60s <= 0 || (known && (by_volume || cm >= o.min_count_multiple_60s));
    const double ratio = o.min_volume_multiple_60s > 0
                             ? std::max(vm / o.min_volume_multiple_60s, cm / o.min_count_multiple_60s)
                             : (o.min_volume_z > 0 ? z / o.min_volume_z : 0.0);
    RuleGate& g = c.s.gates[int(kType)];
    if (opts_.enabled[int(kType)] && p > 0 && by_multiple && z >= o.min_volume_z) {
      const bool critical = vm >= o.critical_volume_multiple_60s || cm >= o.critical_count_multiple_60s;
      if (Alert* a = gate_fire(c, kType, critical ? Severity::kCritical : Severity::kWarning, p)) {
        a->add_value("volume_multiple_60s", vm, o.min_volume_multiple_60s, Cmp::kGe);
        a->add_value("count_multiple_60s", cm, o.min_count_multiple_60s, Cmp::kGe);
        a->add_value("volume_z", z, o.min_volume_z, o.min_volume_z > 0 ? Cmp::kGe : Cmp::kInfo);
        a->add_value("trade_count_z", c.row[kTradeCountZ], 0, Cmp::kInfo);
      }
    } else {
      g.observe_false(ratio, opts_.rearm_fraction);
    }
  }
}

}  // namespace ts
