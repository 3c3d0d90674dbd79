#pragma once
// Options of the feature engine (config section "features"). Every option has a default; all
// take effect when a FeatureEngine is constructed. Formulas: docs/features.md.
#include <cstdint>

#include "core/config.h"
#include "core/event.h"

namespace ts {

struct FeatureOptions {
  int64_t row_interval_ns = 1'000'000'000;  // one window row per this much exchange time
  int window_rows = 120;                    // T, rows kept per symbol (1..120)
  double large_trade_notional = 1'000'000.0;  // currency; a trade at or above it is large
  Qty large_trade_qty = 0;                  // shares; 0 = notional only; else qty >= this is large too
  double vol_floor_bps = 0.1;               // floor of vol_long in vol_ratio, bps per sqrt(s)
  double volume_std_floor_lots = 10.0;      // floor of the 10 s volume std in volume_z, board lots
  double count_std_floor = 2.0;             // floor of the 10 s trade-count std in trade_count_z
  double std_floor_frac_of_mean = 0.1;      // floor of both stds as a fraction of their mean
  int baseline_min_buckets = 6;             // completed 10 s buckets before z-scores are given
  int64_t session_gap_s = 300;              // a gap without events longer than this is a break
  // Phases and the volume profile (docs/features.md):
  int64_t day_gap_s = 14400;                // symbols without a schedule: a break this long starts a new day
  int profile_prior_buckets = 30;           // weight of the default shape × level in a bin, 10 s buckets
  int profile_memory_days = 5;              // a learned bin's EWMA span, days
  int profile_level_buckets = 360;          // the level's EWMA span, 10 s buckets (1 hour)

  // Reads section "features" (keys as the member names); throws ConfigError on a bad value.
  static FeatureOptions from_config(const ConfigSection& section);
};

}  // namespace ts
