#pragma once
// ServingStats: the numbers behind the dashboard's serving panels, one sample per live-feed tick.
//
// Read from the serving metrics in the process's Prometheus registry (src/serve/model_server.h:
// per-batch histograms ticksentry_model_batch_size, _queue_wait_seconds, _compute_seconds and
// the counters _batches_total, _inferences_total, _failed_batches_total, _fallback_batches_total,
// _backend_switches_total, _dropped_total{reason}) as differences since the previous sample, so
// the page shows what happened in the last second, not since start. Quantiles of the per-batch
// histograms are interpolated within their buckets the way Prometheus' histogram_quantile() does
// (what the Grafana board shows too). End-to-end inference latency (queued → result at the
// shard) comes from the ScoreBoard's histograms (≤ 1.6 % error) and is re-exported as the
// Prometheus histogram ticksentry_model_end_to_end_seconds.
//
// sample() JSON, or null while no model serves (the families are absent):
//   {"batches_per_s", "inferences_per_s", "mean_batch",
//    "batch_sizes": [[bucket upper bound, batches], ...] (this interval, not cumulative),
//    "queue_wait_us", "compute_us", "end_to_end_us": {"p50", "p99", "p999", "count"},
//    "drops": {reason: n}, "drops_total": {reason: n}, "failed_batches", "fallback_batches",
//    "failed_total", "backend_switches_total"}
// Threading: the live feed's thread only.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <prometheus/histogram.h>

#include "core/metrics.h"
#include "pipeline/score_board.h"

namespace ts::http {

// The value at quantile q of a histogram given per bucket (not cumulative) with ascending upper
// bounds (bounds.size() == counts.size() - 1; the last count is +Inf), interpolated linearly
// within the bucket (lower bound 0 for the first). 0 when empty; the largest bound for +Inf.
double bucket_quantile(const std::vector<double>& bounds, const std::vector<double>& counts, double q);

class ServingStats {
 public:
  ServingStats(Metrics& metrics, ScoreBoard* scores) : metrics_(&metrics), scores_(scores) {}
  nlohmann::json sample(double dt_s);

 private:
  // Per-series differences since the previous sample.
  double delta(const std::string& key, double now);
  std::vector<double> delta(const std::string& key, const std::vector<double>& now);

  Metrics* metrics_;
  ScoreBoard* scores_;
  prometheus::Histogram* end_to_end_ = nullptr;  // registered when the first result arrives
  std::map<std::string, double> last_;
  std::map<std::string, std::vector<double>> last_buckets_;
};

}  // namespace ts::http
