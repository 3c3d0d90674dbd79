#pragma once
// Thresholds of every rule, with their defaults. docs/rules.md describes each rule and lists
// every key's range ("Ranges"); from_config() enforces them.
// Read once at start-up (RuleOptions::from_config); a change takes effect when a RuleEngine is
// constructed with the new options. Units are in the names: _bps basis points, _pct percent,
// _ms / _s exchange-time durations, _lots board lots (RefData::lot_size size increments each),
// _sigma units of the symbol's own volatility (vol_long_bps × √seconds), _multiple times the
// symbol's own typical level, notional in the symbol's currency.
//
// Relative vs absolute: rules whose size depends on the price scale or the symbol's liquidity
// have `relative` (default true): the threshold is in units of the symbol's own statistics, so
// a $60,000 coin and a ¥2.72 stock alert at comparable rates. `relative = false` selects the
// absolute threshold (bps, notional, ticks) per rule.
#include <cstdint>
#include <string>

#include "detect/alert.h"

namespace ts {

class Config;

struct RapidRiseOptions {            // [rules.rapid_rise] 快速拉升 / 火箭发射
  bool relative = true;
  // relative: ret_60s >= min_sigma_60s × vol_long × √60 ...
  double min_sigma_60s = 8;
  double critical_sigma_60s = 14;
  // absolute: ret_60s >= min_ret_60s_bps ...
  double min_ret_60s_bps = 200;
  double critical_ret_60s_bps = 500;
  double min_ret_10s_bps = 0;        // ... and ret_10s > this (still rising), both modes
  double min_move_ticks = 3;         // relative: the move is also at least this many ticks ...
  double min_move_bps = 20;          // ... and at least this many bps
};

struct AcceleratingDropOptions {     // [rules.accelerating_drop] 加速下跌
  bool relative = true;
  double max_sigma_60s = -8;         // relative: ret_60s <= this × vol_long × √60 ...
  double critical_sigma_60s = -14;
  double max_ret_60s_bps = -200;     // absolute: ret_60s <= this ...
  double critical_ret_60s_bps = -500;
  double accel_ratio = 1.0;          // ... and ret_10s/10 <= accel_ratio * ret_60s/60 (bps per s)
  double min_move_ticks = 3;         // relative: the move is also at least this many ticks ...
  double min_move_bps = 20;          // ... and at least this many bps
};

struct HighDiveOptions {             // [rules.high_dive] 高台跳水
  bool relative = true;
  double min_drop_sigma = 6;         // relative: drop >= this × vol_long × √lookback_s ...
  double critical_drop_sigma = 10;
  double min_drop_floor_bps = 100;   // relative: the drop is also at least this many bps
  double min_drop_bps = 300;         // absolute: last fell this far below the recent high ...
  double critical_drop_bps = 600;
  double min_high_gain_bps = 200;    // ... and that high was this far above prev close (or open)
  int64_t lookback_s = 600;          // "recent": the high was made within this window
};

// The symbol's typical flow: an EWMA, one sample per completed minute of continuous trading, of
// the notional traded in that minute, each sample clipped to [typical / clip, typical × clip].
struct FlowOptions {                 // [rules.flow]
  double minute_alpha = 0.05;        // EWMA weight of one minute (memory ~20 minutes)
  double clip = 3;                   // bounded influence of one minute
  int64_t min_minutes = 5;           // minutes before a relative notional threshold is trusted
};

struct LargeTradeOptions {           // [rules.large_trade] 大笔买入 / 大笔卖出
  bool relative = true;
  // relative: one print's notional >= this × the symbol's typical one-minute notional flow
  double min_flow_multiple = 1.5;
  double critical_flow_multiple = 5;
  double min_notional = 1'000'000;   // absolute: notional (currency) >= this
  double critical_notional = 5'000'000;
};

struct LimitOptions {                // [rules.limit] 触及/封/打开 涨停·跌停
  int64_t min_seal_lots = 100;       // queue at the limit needed to call it sealed
  // A touch re-arms once the price has gone this far back from the limit (bps of the limit).
  double touch_rearm_bps = 100;
};

struct QueueShrinkOptions {  // [rules.limit_up_queue_shrink] / [rules.limit_down_queue_shrink] 封单量骤减
  double min_drop_pct = 50;          // bid qty at limit fell this much below its peak ...
  int64_t window_ms = 10'000;        // ... reached within this window
  double critical_drop_pct = 80;
};

struct SpreadOptions {               // [rules.spread_widening]
  bool relative = true;
  double min_ticks = 5;              // absolute: spread >= this; relative: also a floor
  double typical_multiple = 4;       // relative: spread >= typical_multiple × typical
  // Liquidity withdrawal: a smaller widening counts when the top-5 depth collapsed with it.
  double withdrawal_multiple = 3.0;  // spread >= max(min_ticks, this * typical) ...
  double withdrawal_depth_change = -1.2;  // ... and depth_change (log, 10 s) <= this (depth < 30%)
  // The typical spread: a time-weighted EWMA of every event's spread (alerting or not), each
  // sample clipped to [typical / clip, typical × clip]: a spread that stays wide becomes the
  // normal one within about tau × ln(spread / (multiple × typical)) / ln(clip).
  double typical_tau_s = 60;
  double typical_clip = 2;
  // Dispersion: the multiples stretch to e^(dispersion_k × d) / typical_multiple times
  // themselves when larger, d = EWMA (time constant dispersion_tau_s) of |ln(spread / typical)|.
  double dispersion_k = 3;
  double dispersion_tau_s = 600;
  int64_t min_samples = 100;         // events before the typical spread is trusted
  double critical_multiple = 10;     // critical at >= critical_multiple * typical
  // The symbol's own spread distribution (SpreadSketch, rule_state.h: a time-weighted histogram
  // with memory quantile_tau_s): relative mode fires only on a spread wider than the symbol's
  // own own_quantile of it, i.e. wider than it is that fraction of the time (a ChiNext stock
  // that sits 7 ticks wide a fifth of the day is not news at 7 ticks). 0 = off. Chosen on the
  // calibration set (docs/rules.md "Calibration"): it changed nothing there, so it is off.
  double own_quantile = 0;
  double quantile_tau_s = 1800;
};

struct ImbalanceOptions {            // [rules.book_imbalance]
  bool relative = true;
  double min_abs_imbalance_5 = 0.8;  // |imbalance_5| >= this ...
  int64_t min_depth_lots = 200;      // ... with top-5 bid+ask depth at least this (both modes)
  // relative: ... and the heavy side's top-5 depth >= this × its typical level (a wall that
  // was not there before, not a side that merely thinned out)
  double min_depth_multiple = 10;
  double depth_tau_s = 300;          // time constant of the typical one-side depth
  double critical_abs_imbalance_5 = 0.95;
};

struct LargeOrderOptions {           // [rules.large_order] 大单挂单
  double min_level_multiple = 12;    // order qty >= this × the average of the other top-5 levels ...
  bool relative = true;
  double min_flow_multiple = 3;      // relative: ... and notional >= this × typical minute flow
  double min_notional = 500'000;     // absolute: ... and price * qty >= this (currency) ...
  int max_level = 3;                 // ... resting within this many levels of the touch (1 = at it)
  double critical_level_multiple = 20;
  // A wall re-placed is the same wall: a new large order on the side of the last reported one,
  // at its price or at its level from the touch, with a size within 2× of it, within
  // same_wall_s of that wall's latest placement, is not reported again (one participant
  // cancelling and re-placing a ~$7M bid is one wall). 300 s: the memory of the book's typical
  // depth (imbalance.depth_tau_s), i.e. a wall seen within it is part of what the book has
  // shown (docs/rules.md). 0 = every placement is judged on its own.
  int64_t same_wall_s = 300;
};

struct VolumeBurstOptions {          // [rules.volume_burst]
  // Relative by construction (there is no absolute mode): the last 60 s of volume in units of
  // what the symbol's intraday profile expects for 60 s at this time of day
  // (FeatureEngine::volume(), docs/features.md). Calibrated on the calibration set of
  // docs/performance.md (the simulator and LOBSTER GOOG 2012-06-21), never on the datasets
  // reported as the result.
  // Fires when either multiple reaches its minimum: volume (a few large orders) or the number
  // of prints (many small ones).
  double min_volume_multiple_60s = 5;
  double critical_volume_multiple_60s = 10;
  double min_count_multiple_60s = 5;
  double critical_count_multiple_60s = 10;
  // ... and the 10 s volume_z (feature) at least this: 0 = any (the default). A user who wants
  // the old 10 s rule back sets this and min_volume_multiple_60s = 0.
  double min_volume_z = 0;
};

struct RuleOptions {
  // [rules]
  double rearm_fraction = 0.5;       // hysteresis: re-arm once value < threshold * this
  bool unknown_phase_is_continuous = true;  // feeds without phase info (LOBSTER) are continuous
  // [rules.<alert type name>] enabled / cooldown_ms, per alert type (e.g. rules.large_buy).
  bool enabled[kRuleTypeCount];
  int64_t cooldown_ms[kRuleTypeCount];  // exchange time; defaults: see default_cooldown_ms()
  // [rules.<alert type name>] hold_ms: the condition must hold this long (exchange time) before
  // it fires; defaults: see default_hold_ms().
  int64_t hold_ms[kRuleTypeCount];

  RapidRiseOptions rapid_rise;
  AcceleratingDropOptions accelerating_drop;
  HighDiveOptions high_dive;
  FlowOptions flow;
  LargeTradeOptions large_trade;
  LimitOptions limit;
  QueueShrinkOptions queue_shrink;       // limit-up (bid queue)
  QueueShrinkOptions queue_shrink_down;  // limit-down (ask queue)
  SpreadOptions spread;
  ImbalanceOptions imbalance;
  VolumeBurstOptions volume_burst;
  LargeOrderOptions large_order;

  RuleOptions();
  // 60 s for trend rules, 5 s for large trades, 0 for limit seal/open transitions.
  static int64_t default_cooldown_ms(AlertType type);
  // 2 s for book imbalance (a one-event lopsided book is noise) and spread widening (chosen on
  // the calibration set), 0 for the others.
  static int64_t default_hold_ms(AlertType type);
  // Every relative threshold off: the absolute thresholds of every rule.
  static RuleOptions absolute();
  // Reads [rules] and its subsections; absent keys keep their defaults. Throws ConfigError
  // naming the key on a wrong type, NaN, or a value outside its range (start-up only: exit 2).
  // A rule's section holds its thresholds and its enabled / cooldown_ms / hold_ms, for every
  // alert type it raises ([rules.large_trade] cooldown_ms: large_buy and large_sell; [rules.limit]:
  // the six limit types); a type's own section ([rules.large_buy]) still wins.
  static RuleOptions from_config(const Config& config);
  // The same keys under `prefix` (a [[rules.groups]] element: "rules.groups[0]"), starting from
  // `base` instead of the defaults: absent keys keep base's values (detect/rule_groups.h).
  static RuleOptions from_config(const Config& config, const std::string& prefix, const RuleOptions& base);
};

}  // namespace ts
