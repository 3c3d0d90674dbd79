#include "features/feature_set.h"

namespace ts {

const char* feature_name(int id) {
  static const char* const kNames[kFeatureCount] = {
      "ret_1s_bps",        "ret_10s_bps",      "ret_60s_bps",     "ret_300s_bps",
      "vol_short_bps",     "vol_long_bps",     "vol_ratio",       "volume_z",
      "trade_count_z",     "imbalance_1",      "imbalance_5",     "imbalance_10",
      "spread_ticks",      "microprice_dev_ticks", "depth_change", "trade_flow_imbalance",
      "dist_limit_up",     "dist_limit_down",  "ret_from_prev_close", "large_trade_ratio",
  };
  return (id >= 0 && id < kFeatureCount) ? kNames[id] : "unknown";
}

}  // namespace ts
