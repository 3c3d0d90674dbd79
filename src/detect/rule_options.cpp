#include "detect/rule_options.h"

#include <string>
#include <utility>
#include <vector>

#include "core/config.h"

namespace ts {

RuleOptions::RuleOptions() {
  for (int i = 0; i < kRuleTypeCount; ++i) {
    enabled[i] = true;
    cooldown_ms[i] = default_cooldown_ms(static_cast<AlertType>(i));
    hold_ms[i] = default_hold_ms(static_cast<AlertType>(i));
  }
}

int64_t RuleOptions::default_hold_ms(AlertType type) {
  // Measured on the simulator's quiet flow (tests/e2e/sim_alerts_test.cpp): without a hold,
  // |imbalance_5| >= 0.8 for a single event gave ~6 alerts per symbol-hour of noise; spoofing
  // orders rest for seconds; a 2 s hold brought it to 0.04 per symbol-hour.
  // spread_widening: chosen on the calibration set (docs/rules.md "Calibration",
  // bench/calibrate_spread.sh): quiet simulator spread alerts 27 / 3 / 0 at 0 / 500 / 2000 ms,
  // every injected liquidity withdrawal caught at each (bench/results/spread-calibration-cpu2-20261202.json).
  if (type == AlertType::kSpreadWidening) return 2'000;
  return type == AlertType::kBookImbalance ? 2'000 : 0;
}

int64_t RuleOptions::default_cooldown_ms(AlertType type) {
  switch (type) {
    case AlertType::kLargeBuy:
    case AlertType::kLargeSell: return 5'000;
    case AlertType::kLargeOrder: return 30'000;
    // Seal/open are state transitions: the state machine is their hysteresis, and each
    // transition (炸板, 回封) is news to a trader.
    case AlertType::kLimitUpSealed:
    case AlertType::kLimitUpOpened:
    case AlertType::kLimitDownSealed:
    case AlertType::kLimitDownOpened: return 0;
    // A touch has its own re-arm (the price must leave the limit); the cooldown only stops a
    // price that flickers at the limit from re-alerting within a minute.
    case AlertType::kLimitUpTouched:
    case AlertType::kLimitDownTouched: return 60'000;
    default: return 60'000;
  }
}

RuleOptions RuleOptions::absolute() {
  RuleOptions o;
  o.rapid_rise.relative = false;
  o.accelerating_drop.relative = false;
  o.high_dive.relative = false;
  o.large_trade.relative = false;
  o.large_order.relative = false;
  o.spread.relative = false;
  o.imbalance.relative = false;
  return o;
}

// Ranges: docs/config.md ([rules.*]). Every numeric key goes through get_in: a value outside its
// range, NaN or an int64 overflow is a ConfigError naming the key (the CLI exits 2).
RuleOptions RuleOptions::from_config(const Config& config) {
  // [rules] relative = false: every rule's absolute thresholds (each rule's own `relative`
  // still overrides it).
  const RuleOptions base = config.section("rules").get("relative", true) ? RuleOptions() : RuleOptions::absolute();
  return from_config(config, "rules", base);
}

namespace {

// The alert types a rule section covers besides the one of its own name.
std::vector<AlertType> covered_types(const std::string& rule) {
  if (rule == "large_trade") return {AlertType::kLargeBuy, AlertType::kLargeSell};
  if (rule == "limit") {
    return {AlertType::kLimitUpTouched, AlertType::kLimitDownTouched, AlertType::kLimitUpSealed,
            AlertType::kLimitUpOpened, AlertType::kLimitDownSealed, AlertType::kLimitDownOpened};
  }
  return {};
}

}  // namespace

RuleOptions RuleOptions::from_config(const Config& config, const std::string& p, const RuleOptions& base) {
  constexpr double kHuge = 1e15;            // notionals, currency
  constexpr int64_t kDayMs = 86'400'000;
  const ConfigSection root = config.section(p);
  RuleOptions o = base;
  if (p != "rules") {  // a group's `relative` switches every rule of the group
    const bool rel = root.get("relative", true);
    if (rel == root.get("relative", false)) {  // given
      for (bool* r : {&o.rapid_rise.relative, &o.accelerating_drop.relative, &o.high_dive.relative,
                      &o.large_trade.relative, &o.large_order.relative, &o.spread.relative, &o.imbalance.relative}) {
        *r = rel;
      }
    }
  }
  o.rearm_fraction = root.get_in("rearm_fraction", o.rearm_fraction, 0.0, 1.0);
  o.unknown_phase_is_continuous = root.get("unknown_phase_is_continuous", o.unknown_phase_is_continuous);
  // Gates: a rule's section for every type it covers, then each type's own section.
  for (const char* rule : {"large_trade", "limit"}) {
    const ConfigSection s = config.section(p + "." + rule);
    for (AlertType t : covered_types(rule)) {
      const int i = static_cast<int>(t);
      o.enabled[i] = s.get("enabled", o.enabled[i]);
      o.cooldown_ms[i] = s.get_in("cooldown_ms", o.cooldown_ms[i], int64_t{0}, kDayMs);
      o.hold_ms[i] = s.get_in("hold_ms", o.hold_ms[i], int64_t{0}, kDayMs);
    }
  }
  for (int i = 0; i < kRuleTypeCount; ++i) {
    const ConfigSection s = config.section(p + "." + alert_type_name(static_cast<AlertType>(i)));
    o.enabled[i] = s.get("enabled", o.enabled[i]);
    o.cooldown_ms[i] = s.get_in("cooldown_ms", o.cooldown_ms[i], int64_t{0}, kDayMs);
    o.hold_ms[i] = s.get_in("hold_ms", o.hold_ms[i], int64_t{0}, kDayMs);
  }

  const ConfigSection lo = config.section(p + ".large_order");
  auto& l = o.large_order;
  l.min_level_multiple = lo.get_in("min_level_multiple", l.min_level_multiple, 1.0, 1e6);
  l.critical_level_multiple = lo.get_in("critical_level_multiple", l.critical_level_multiple, 1.0, 1e6);
  l.relative = lo.get("relative", l.relative);
  l.min_flow_multiple = lo.get_in("min_flow_multiple", l.min_flow_multiple, 0.0, 1e6);
  l.min_notional = lo.get_in("min_notional", l.min_notional, 0.0, kHuge);
  l.max_level = lo.get_in("max_level", l.max_level, 1, 5);
  l.same_wall_s = lo.get_in("same_wall_s", l.same_wall_s, int64_t{0}, int64_t{86'400});

  const ConfigSection rr = config.section(p + ".rapid_rise");
  auto& r = o.rapid_rise;
  r.relative = rr.get("relative", r.relative);
  r.min_sigma_60s = rr.get_in("min_sigma_60s", r.min_sigma_60s, 0.1, 1000.0);
  r.critical_sigma_60s = rr.get_in("critical_sigma_60s", r.critical_sigma_60s, 0.1, 1000.0);
  r.min_ret_60s_bps = rr.get_in("min_ret_60s_bps", r.min_ret_60s_bps, 0.1, 1e5);
  r.critical_ret_60s_bps = rr.get_in("critical_ret_60s_bps", r.critical_ret_60s_bps, 0.1, 1e5);
  r.min_ret_10s_bps = rr.get_in("min_ret_10s_bps", r.min_ret_10s_bps, -1e5, 1e5);
  r.min_move_ticks = rr.get_in("min_move_ticks", r.min_move_ticks, 0.0, 1e6);
  r.min_move_bps = rr.get_in("min_move_bps", r.min_move_bps, 0.0, 1e5);

  const ConfigSection ad = config.section(p + ".accelerating_drop");
  auto& d = o.accelerating_drop;
  d.relative = ad.get("relative", d.relative);
  d.max_sigma_60s = ad.get_in("max_sigma_60s", d.max_sigma_60s, -1000.0, -0.1);
  d.critical_sigma_60s = ad.get_in("critical_sigma_60s", d.critical_sigma_60s, -1000.0, -0.1);
  d.max_ret_60s_bps = ad.get_in("max_ret_60s_bps", d.max_ret_60s_bps, -1e4, -0.1);
  d.critical_ret_60s_bps = ad.get_in("critical_ret_60s_bps", d.critical_ret_60s_bps, -1e4, -0.1);
  d.accel_ratio = ad.get_in("accel_ratio", d.accel_ratio, 0.0, 100.0);
  d.min_move_ticks = ad.get_in("min_move_ticks", d.min_move_ticks, 0.0, 1e6);
  d.min_move_bps = ad.get_in("min_move_bps", d.min_move_bps, 0.0, 1e4);

  const ConfigSection hd = config.section(p + ".high_dive");
  auto& h = o.high_dive;
  h.relative = hd.get("relative", h.relative);
  h.min_drop_sigma = hd.get_in("min_drop_sigma", h.min_drop_sigma, 0.1, 1000.0);
  h.critical_drop_sigma = hd.get_in("critical_drop_sigma", h.critical_drop_sigma, 0.1, 1000.0);
  h.min_drop_floor_bps = hd.get_in("min_drop_floor_bps", h.min_drop_floor_bps, 0.0, 1e4);
  h.min_drop_bps = hd.get_in("min_drop_bps", h.min_drop_bps, 0.1, 1e4);
  h.critical_drop_bps = hd.get_in("critical_drop_bps", h.critical_drop_bps, 0.1, 1e4);
  h.min_high_gain_bps = hd.get_in("min_high_gain_bps", h.min_high_gain_bps, 0.0, 1e5);
  h.lookback_s = hd.get_in("lookback_s", h.lookback_s, int64_t{1}, int64_t{86'400});

  const ConfigSection fl = config.section(p + ".flow");
  o.flow.minute_alpha = fl.get_in("minute_alpha", o.flow.minute_alpha, 0.001, 1.0);
  o.flow.clip = fl.get_in("clip", o.flow.clip, 1.0, 1000.0);
  o.flow.min_minutes = fl.get_in("min_minutes", o.flow.min_minutes, int64_t{1}, int64_t{1440});

  const ConfigSection lt = config.section(p + ".large_trade");
  auto& t = o.large_trade;
  t.relative = lt.get("relative", t.relative);
  t.min_flow_multiple = lt.get_in("min_flow_multiple", t.min_flow_multiple, 0.001, 1e6);
  t.critical_flow_multiple = lt.get_in("critical_flow_multiple", t.critical_flow_multiple, 0.001, 1e6);
  t.min_notional = lt.get_in("min_notional", t.min_notional, 0.0, kHuge);
  t.critical_notional = lt.get_in("critical_notional", t.critical_notional, 0.0, kHuge);

  const ConfigSection lim = config.section(p + ".limit");
  o.limit.min_seal_lots = lim.get_in("min_seal_lots", o.limit.min_seal_lots, int64_t{1}, int64_t{1'000'000'000});
  o.limit.touch_rearm_bps = lim.get_in("touch_rearm_bps", o.limit.touch_rearm_bps, 0.0, 1e4);

  for (auto [name, q] : {std::pair{".limit_up_queue_shrink", &o.queue_shrink},
                         std::pair{".limit_down_queue_shrink", &o.queue_shrink_down}}) {
    const ConfigSection qs = config.section(p + name);
    q->min_drop_pct = qs.get_in("min_drop_pct", q->min_drop_pct, 0.1, 100.0);
    q->window_ms = qs.get_in("window_ms", q->window_ms, int64_t{16}, kDayMs);
    q->critical_drop_pct = qs.get_in("critical_drop_pct", q->critical_drop_pct, 0.1, 100.0);
  }

  const ConfigSection sw = config.section(p + ".spread_widening");
  auto& sp = o.spread;
  sp.relative = sw.get("relative", sp.relative);
  sp.min_ticks = sw.get_in("min_ticks", sp.min_ticks, 1.0, 1e9);
  sp.typical_multiple = sw.get_in("typical_multiple", sp.typical_multiple, 1.0, 1e6);
  sp.typical_tau_s = sw.get_in("typical_tau_s", sp.typical_tau_s, 0.1, 86'400.0);
  sp.typical_clip = sw.get_in("typical_clip", sp.typical_clip, 1.0, 100.0);
  sp.dispersion_k = sw.get_in("dispersion_k", sp.dispersion_k, 0.0, 100.0);
  sp.dispersion_tau_s = sw.get_in("dispersion_tau_s", sp.dispersion_tau_s, 0.1, 86'400.0);
  sp.min_samples = sw.get_in("min_samples", sp.min_samples, int64_t{0}, int64_t{1'000'000'000});
  sp.critical_multiple = sw.get_in("critical_multiple", sp.critical_multiple, 1.0, 1e6);
  sp.withdrawal_multiple = sw.get_in("withdrawal_multiple", sp.withdrawal_multiple, 1.0, 1e6);
  sp.withdrawal_depth_change = sw.get_in("withdrawal_depth_change", sp.withdrawal_depth_change, -100.0, 0.0);
  sp.own_quantile = sw.get_in("own_quantile", sp.own_quantile, 0.0, 0.9999);
  sp.quantile_tau_s = sw.get_in("quantile_tau_s", sp.quantile_tau_s, 1.0, 86'400.0 * 30);

  const ConfigSection bi = config.section(p + ".book_imbalance");
  auto& im = o.imbalance;
  im.relative = bi.get("relative", im.relative);
  im.min_abs_imbalance_5 = bi.get_in("min_abs_imbalance_5", im.min_abs_imbalance_5, 0.0, 1.0);
  im.critical_abs_imbalance_5 = bi.get_in("critical_abs_imbalance_5", im.critical_abs_imbalance_5, 0.0, 1.0);
  im.min_depth_lots = bi.get_in("min_depth_lots", im.min_depth_lots, int64_t{0}, int64_t{1'000'000'000});
  im.min_depth_multiple = bi.get_in("min_depth_multiple", im.min_depth_multiple, 1.0, 1e6);
  im.depth_tau_s = bi.get_in("depth_tau_s", im.depth_tau_s, 0.1, 86'400.0);

  const ConfigSection vb = config.section(p + ".volume_burst");
  o.volume_burst.min_volume_multiple_60s =
      vb.get_in("min_volume_multiple_60s", o.volume_burst.min_volume_multiple_60s, 0.0, 1e6);
  o.volume_burst.critical_volume_multiple_60s =
      vb.get_in("critical_volume_multiple_60s", o.volume_burst.critical_volume_multiple_60s, 0.1, 1e6);
  o.volume_burst.min_count_multiple_60s =
      vb.get_in("min_count_multiple_60s", o.volume_burst.min_count_multiple_60s, 0.1, 1e6);
  o.volume_burst.critical_count_multiple_60s =
      vb.get_in("critical_count_multiple_60s", o.volume_burst.critical_count_multiple_60s, 0.1, 1e6);
  o.volume_burst.min_volume_z = vb.get_in("min_volume_z", o.volume_burst.min_volume_z, 0.0, 1e6);
  return o;
}

}  // namespace ts
