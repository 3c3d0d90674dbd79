#include "detect/rule_options.h"

#include <string>

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
    default: return 60'000;
  }
}

RuleOptions RuleOptions::from_config(const Config& config) {
  RuleOptions o;
  const ConfigSection root = config.section("rules");
  o.rearm_fraction = root.get("rearm_fraction", o.rearm_fraction);
  o.unknown_phase_is_continuous = root.get("unknown_phase_is_continuous", o.unknown_phase_is_continuous);
  for (int i = 0; i < kRuleTypeCount; ++i) {
    const ConfigSection s = config.section(std::string("rules.") + alert_type_name(static_cast<AlertType>(i)));
    o.enabled[i] = s.get("enabled", o.enabled[i]);
    o.cooldown_ms[i] = s.get("cooldown_ms", o.cooldown_ms[i]);
    o.hold_ms[i] = s.get("hold_ms", o.hold_ms[i]);
  }

  const ConfigSection lo = config.section("rules.large_order");
  o.large_order.min_level_multiple = lo.get("min_level_multiple", o.large_order.min_level_multiple);
  o.large_order.min_notional = lo.get("min_notional", o.large_order.min_notional);
  o.large_order.max_level = lo.get("max_level", o.large_order.max_level);
  o.large_order.critical_level_multiple =
      lo.get("critical_level_multiple", o.large_order.critical_level_multiple);

  const ConfigSection rr = config.section("rules.rapid_rise");
  o.rapid_rise.min_ret_60s_bps = rr.get("min_ret_60s_bps", o.rapid_rise.min_ret_60s_bps);
  o.rapid_rise.min_ret_10s_bps = rr.get("min_ret_10s_bps", o.rapid_rise.min_ret_10s_bps);
  o.rapid_rise.critical_ret_60s_bps = rr.get("critical_ret_60s_bps", o.rapid_rise.critical_ret_60s_bps);

  const ConfigSection ad = config.section("rules.accelerating_drop");
  o.accelerating_drop.max_ret_60s_bps = ad.get("max_ret_60s_bps", o.accelerating_drop.max_ret_60s_bps);
  o.accelerating_drop.accel_ratio = ad.get("accel_ratio", o.accelerating_drop.accel_ratio);
  o.accelerating_drop.critical_ret_60s_bps =
      ad.get("critical_ret_60s_bps", o.accelerating_drop.critical_ret_60s_bps);

  const ConfigSection hd = config.section("rules.high_dive");
  o.high_dive.min_drop_bps = hd.get("min_drop_bps", o.high_dive.min_drop_bps);
  o.high_dive.min_high_gain_bps = hd.get("min_high_gain_bps", o.high_dive.min_high_gain_bps);
  o.high_dive.lookback_s = hd.get("lookback_s", o.high_dive.lookback_s);
  o.high_dive.critical_drop_bps = hd.get("critical_drop_bps", o.high_dive.critical_drop_bps);

  const ConfigSection lt = config.section("rules.large_trade");
  o.large_trade.min_notional = lt.get("min_notional", o.large_trade.min_notional);
  o.large_trade.critical_notional = lt.get("critical_notional", o.large_trade.critical_notional);

  const ConfigSection lim = config.section("rules.limit");
  o.limit.min_seal_lots = lim.get("min_seal_lots", o.limit.min_seal_lots);

  const ConfigSection qs = config.section("rules.limit_up_queue_shrink");
  o.queue_shrink.min_drop_pct = qs.get("min_drop_pct", o.queue_shrink.min_drop_pct);
  o.queue_shrink.window_ms = qs.get("window_ms", o.queue_shrink.window_ms);
  o.queue_shrink.critical_drop_pct = qs.get("critical_drop_pct", o.queue_shrink.critical_drop_pct);

  const ConfigSection sw = config.section("rules.spread_widening");
  o.spread.min_ticks = sw.get("min_ticks", o.spread.min_ticks);
  o.spread.typical_multiple = sw.get("typical_multiple", o.spread.typical_multiple);
  o.spread.typical_alpha = sw.get("typical_alpha", o.spread.typical_alpha);
  o.spread.min_samples = sw.get("min_samples", o.spread.min_samples);
  o.spread.critical_multiple = sw.get("critical_multiple", o.spread.critical_multiple);
  o.spread.withdrawal_multiple = sw.get("withdrawal_multiple", o.spread.withdrawal_multiple);
  o.spread.withdrawal_depth_change = sw.get("withdrawal_depth_change", o.spread.withdrawal_depth_change);

  const ConfigSection bi = config.section("rules.book_imbalance");
  o.imbalance.min_abs_imbalance_5 = bi.get("min_abs_imbalance_5", o.imbalance.min_abs_imbalance_5);
  o.imbalance.min_depth_lots = bi.get("min_depth_lots", o.imbalance.min_depth_lots);
  o.imbalance.critical_abs_imbalance_5 =
      bi.get("critical_abs_imbalance_5", o.imbalance.critical_abs_imbalance_5);

  const ConfigSection vb = config.section("rules.volume_burst");
  o.volume_burst.min_volume_z = vb.get("min_volume_z", o.volume_burst.min_volume_z);
  o.volume_burst.critical_volume_z = vb.get("critical_volume_z", o.volume_burst.critical_volume_z);
  return o;
}

}  // namespace ts
