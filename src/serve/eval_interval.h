#pragma once
// Block-bootstrap 95 % intervals and the baselines a model version is compared with
// (docs/labels.md "Metrics", "Baselines"). Used by the promotion gate; models/intervals.py and
// models/baselines.py define the same quantities for the report.
// Pure functions: no state, safe from any thread.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "serve/eval_metrics.h"

namespace ts {

struct Interval {
  double value = 0;  // the metric on the windows as they are (NaN when undefined)
  double lo = 0;     // 2.5 % quantile of the replicates; NaN with fewer than 10 defined ones
  double hi = 0;     // 97.5 % quantile
};

// PR-AUC (average precision) with a block-bootstrap interval: windows are grouped into blocks of
// block_ns of end time (every symbol together), `reps` replicates each draw as many blocks as
// there are with replacement (seeded: the same input gives the same interval).
Interval pr_auc_interval(std::span<const float> score, std::span<const uint8_t> label,
                         std::span<const int64_t> end_ts_ns, int64_t block_ns = int64_t(300) * 1'000'000'000,
                         int reps = 400, uint64_t seed = 7);

// One detector at a fixed threshold, every metric with a block-bootstrap 95 % interval, as
// models/intervals.py computes them for models/REPORT.md: the alerts (alerts_at's cooldown) are
// raised once over the rows in time order; an event belongs to the block of its first positive
// window; each replicate draws as many blocks as there are, with replacement (seeded). Lead =
// event start - end of the event's first window at or above the threshold, seconds.
struct OperatingIntervals {
  double threshold = 0;
  Interval pr_auc, roc_auc, recall, precision, false_alerts_per_symbol_hour, median_lead_s;
  double p10_lead_s = 0;  // NaN without a caught event
  int64_t events = 0, events_detected = 0, alerts = 0, false_alerts = 0, blocks = 0;
  double symbol_hours = 0;
};
OperatingIntervals operating_intervals(const EvalWindows& w, double threshold, int64_t cooldown_ns,
                                       double window_s, int64_t block_ns = int64_t(300) * 1'000'000'000,
                                       int reps = 100, uint64_t seed = 7);

// The parameter-free baseline scores of a set of windows [n, t, f] (row-major, the export's
// feature order): "ret60" = |ret_60s_bps| / (max(vol_long_bps, 0.5) * sqrt(60)) and
// "volume_z", both of the window's last row. rule_score and zscore come with the export.
std::vector<float> baseline_ret60(std::span<const float> windows, int64_t t, int64_t f);
std::vector<float> baseline_volume_z(std::span<const float> windows, int64_t t, int64_t f);

}  // namespace ts
