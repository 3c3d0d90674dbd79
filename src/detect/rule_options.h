#pragma once
// Thresholds of every rule, with their defaults. docs/rules.md describes each rule.
// Read once at start-up (RuleOptions::from_config); a change takes effect when a RuleEngine is
// constructed with the new options. Units are in the names: _bps basis points, _pct percent,
// _ms / _s exchange-time durations, _lots board lots (RefData::lot_size shares each),
// notional in the symbol's currency.
#include <cstdint>

#include "detect/alert.h"

namespace ts {

class Config;

struct RapidRiseOptions {            // [rules.rapid_rise] 快速拉升 / 火箭发射
  double min_ret_60s_bps = 200;      // ret_60s >= this ...
  double min_ret_10s_bps = 0;        // ... and ret_10s > this (still rising)
  double critical_ret_60s_bps = 500; // severity critical at or beyond
};

struct AcceleratingDropOptions {     // [rules.accelerating_drop] 加速下跌
  double max_ret_60s_bps = -200;     // ret_60s <= this ...
  double accel_ratio = 1.0;          // ... and ret_10s/10 <= accel_ratio * ret_60s/60 (bps per s)
  double critical_ret_60s_bps = -500;
};

struct HighDiveOptions {             // [rules.high_dive] 高台跳水
  double min_drop_bps = 300;         // last fell this far below the recent high ...
  double min_high_gain_bps = 200;    // ... and that high was this far above prev close (or open)
  int64_t lookback_s = 600;          // "recent": the high was made within this window
  double critical_drop_bps = 600;
};

struct LargeTradeOptions {           // [rules.large_trade] 大笔买入 / 大笔卖出
  double min_notional = 1'000'000;   // price * qty, currency
  double critical_notional = 5'000'000;
};

struct LimitOptions {                // [rules.limit] 封涨停 / 打开涨停 / 封跌停 / 打开跌停
  int64_t min_seal_lots = 100;       // queue at the limit needed to call it sealed
};

struct QueueShrinkOptions {          // [rules.limit_up_queue_shrink] 封单量骤减
  double min_drop_pct = 50;          // bid qty at limit fell this much below its peak ...
  int64_t window_ms = 10'000;        // ... reached within this window
  double critical_drop_pct = 80;
};

struct SpreadOptions {               // [rules.spread_widening]
  double min_ticks = 5;              // spread_ticks >= max(min_ticks, typical_multiple * typical)
  double typical_multiple = 4;
  // Liquidity withdrawal: a smaller widening counts when the top-5 depth collapsed with it.
  double withdrawal_multiple = 3.0;  // spread >= max(min_ticks, this * typical) ...
  double withdrawal_depth_change = -1.2;  // ... and depth_change (log, 10 s) <= this (depth < 30%)
  double typical_alpha = 0.01;       // per-event EWMA weight of the typical spread
  int64_t min_samples = 100;         // events before the typical spread is trusted
  double critical_multiple = 10;     // critical at >= critical_multiple * typical
};

struct ImbalanceOptions {            // [rules.book_imbalance]
  double min_abs_imbalance_5 = 0.8;  // |imbalance_5| >= this ...
  int64_t min_depth_lots = 200;      // ... with top-5 bid+ask depth at least this
  double critical_abs_imbalance_5 = 0.95;
};

struct LargeOrderOptions {           // [rules.large_order] 大单挂单
  double min_level_multiple = 12;     // order qty >= this × the average of the other top-5 levels ...
  double min_notional = 500'000;     // ... and price * qty >= this (currency) ...
  int max_level = 3;                 // ... resting within this many levels of the touch (1 = at it)
  double critical_level_multiple = 20;
};

struct VolumeBurstOptions {          // [rules.volume_burst]
  double min_volume_z = 8;       // calibrated on the simulator's quiet flow: z >= 4 fired ~2.8
  double critical_volume_z = 16; // times per symbol-hour on Hawkes clustering alone
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
  LargeTradeOptions large_trade;
  LimitOptions limit;
  QueueShrinkOptions queue_shrink;
  SpreadOptions spread;
  ImbalanceOptions imbalance;
  VolumeBurstOptions volume_burst;
  LargeOrderOptions large_order;

  RuleOptions();
  // 60 s for trend rules, 5 s for large trades, 0 for limit seal/open transitions.
  static int64_t default_cooldown_ms(AlertType type);
  // 2 s for book imbalance (a one-event lopsided book is noise), 0 for the others.
  static int64_t default_hold_ms(AlertType type);
  // Reads [rules] and its subsections; absent keys keep their defaults. Throws ConfigError on a
  // wrong type (start-up only).
  static RuleOptions from_config(const Config& config);
};

}  // namespace ts
