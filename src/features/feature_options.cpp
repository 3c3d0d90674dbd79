#include "features/feature_options.h"

#include <string>

namespace ts {

FeatureOptions FeatureOptions::from_config(const ConfigSection& s) {
  FeatureOptions o;
  o.row_interval_ns = s.get("row_interval_ns", o.row_interval_ns);
  o.window_rows = s.get("window_rows", o.window_rows);
  o.large_trade_notional = s.get("large_trade_notional", o.large_trade_notional);
  o.large_trade_qty = s.get("large_trade_qty", int64_t(o.large_trade_qty));
  o.vol_floor_bps = s.get("vol_floor_bps", o.vol_floor_bps);
  o.volume_std_floor_lots = s.get("volume_std_floor_lots", o.volume_std_floor_lots);
  o.count_std_floor = s.get("count_std_floor", o.count_std_floor);
  o.std_floor_frac_of_mean = s.get("std_floor_frac_of_mean", o.std_floor_frac_of_mean);
  o.baseline_min_buckets = s.get("baseline_min_buckets", o.baseline_min_buckets);
  o.session_gap_s = s.get("session_gap_s", o.session_gap_s);
  o.day_gap_s = s.get_in("day_gap_s", o.day_gap_s, int64_t(60), int64_t(7 * 86400));
  o.profile_prior_buckets = s.get_in("profile_prior_buckets", o.profile_prior_buckets, 1, 100000);
  o.profile_memory_days = s.get_in("profile_memory_days", o.profile_memory_days, 1, 365);
  o.profile_level_buckets = s.get_in("profile_level_buckets", o.profile_level_buckets, 1, 1000000);
  if (o.row_interval_ns <= 0) throw ConfigError("config key features.row_interval_ns: must be > 0");
  if (o.window_rows < 1 || o.window_rows > 120) {
    throw ConfigError("config key features.window_rows: must be in 1..120, got " + std::to_string(o.window_rows));
  }
  if (o.large_trade_qty < 0) throw ConfigError("config key features.large_trade_qty: must be >= 0");
  if (o.session_gap_s < 1) throw ConfigError("config key features.session_gap_s: must be >= 1");
  return o;
}

}  // namespace ts
