#include "http/serving_stats.h"

#include <algorithm>

namespace ts::http {

double bucket_quantile(const std::vector<double>& bounds, const std::vector<double>& counts, double q) {
  double total = 0;
  for (double c : counts) total += c;
  if (total <= 0 || counts.empty()) return 0;
  const double rank = q * total;
  double below = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (below + counts[i] >= rank && counts[i] > 0) {
      if (i >= bounds.size()) return bounds.empty() ? 0 : bounds.back();  // +Inf bucket
      const double lo = i == 0 ? 0 : bounds[i - 1];
      return lo + (bounds[i] - lo) * (rank - below) / counts[i];
    }
    below += counts[i];
  }
  return bounds.empty() ? 0 : bounds.back();
}

double ServingStats::delta(const std::string& key, double now) {
  auto [it, fresh] = last_.try_emplace(key, 0.0);
  const double d = std::max(0.0, now - it->second);
  it->second = now;
  return d;
}

std::vector<double> ServingStats::delta(const std::string& key, const std::vector<double>& now) {
  std::vector<double>& prev = last_buckets_[key];
  prev.resize(now.size(), 0.0);
  std::vector<double> d(now.size());
  for (size_t i = 0; i < now.size(); ++i) d[i] = std::max(0.0, now[i] - prev[i]);
  prev = now;
  return d;
}

namespace {
constexpr const char* kPrefix = "ticksentry_model_";

nlohmann::json quantiles_us(const std::vector<double>& bounds_s, const std::vector<double>& counts) {
  double n = 0;
  for (double c : counts) n += c;
  return {{"p50", bucket_quantile(bounds_s, counts, 0.50) * 1e6},
          {"p99", bucket_quantile(bounds_s, counts, 0.99) * 1e6},
          {"p999", bucket_quantile(bounds_s, counts, 0.999) * 1e6},
          {"count", uint64_t(n)}};
}
}  // namespace

nlohmann::json ServingStats::sample(double dt_s) {
  // End to end, from the shards (ScoreBoard), re-exported to Prometheus.
  ScoreBoard::Latency e2e = scores_ ? scores_->take_latency() : ScoreBoard::Latency();
  if (scores_ && scores_->active() && !end_to_end_) {
    std::vector<double> bounds(ScoreBoard::kBucketsS.begin(), ScoreBoard::kBucketsS.end());
    end_to_end_ = &metrics_->histogram("model_end_to_end_seconds",
                                      "Inference request queued by a shard to its result seen by the shard", bounds);
  }
  if (end_to_end_ && e2e.hist.count() > 0) {
    std::vector<double> inc(e2e.buckets.begin(), e2e.buckets.end());
    end_to_end_->ObserveMultiple(inc, double(e2e.sum_ns) / 1e9);
  }
  struct Hist {
    std::vector<double> bounds, counts;  // counts per bucket (not cumulative), +Inf last
  };
  std::map<std::string, Hist> hists;
  std::map<std::string, double> counters;               // family (without prefix) → total
  std::map<std::string, double> drops;                  // reason → total
  bool serving = false;
  for (const auto& fam : metrics_->registry().Collect()) {
    if (fam.name.rfind(kPrefix, 0) != 0 || fam.name == "ticksentry_model_end_to_end_seconds") continue;
    serving = true;
    const std::string name = fam.name.substr(std::char_traits<char>::length(kPrefix));
    for (const auto& m : fam.metric) {
      if (fam.type == prometheus::MetricType::Histogram) {
        Hist h;
        uint64_t below = 0;
        for (const auto& b : m.histogram.bucket) {
          if (b.upper_bound != std::numeric_limits<double>::infinity()) h.bounds.push_back(b.upper_bound);
          h.counts.push_back(double(b.cumulative_count - below));
          below = b.cumulative_count;
        }
        hists[name] = std::move(h);
      } else if (fam.type == prometheus::MetricType::Counter) {
        std::string reason;
        for (const auto& l : m.label) if (l.name == "reason") reason = l.value;
        if (!reason.empty()) {
          drops[reason] += m.counter.value;
        } else {
          counters[name] += m.counter.value;
        }
      }
    }
  }
  if (!serving) return nullptr;
  const double dt = dt_s > 0 ? dt_s : 1.0;
  nlohmann::json out;
  const double batches = delta("batches", counters["batches_total"]);
  const double inferences = delta("inferences", counters["inferences_total"]);
  out["batches_per_s"] = batches / dt;
  out["inferences_per_s"] = inferences / dt;
  out["mean_batch"] = batches > 0 ? inferences / batches : 0.0;
  nlohmann::json sizes = nlohmann::json::array();
  if (auto it = hists.find("batch_size"); it != hists.end()) {
    const std::vector<double> d = delta("batch_size", it->second.counts);
    for (size_t i = 0; i < it->second.bounds.size() && i < d.size(); ++i) sizes.push_back({it->second.bounds[i], d[i]});
  }
  out["batch_sizes"] = sizes;
  for (const char* h : {"queue_wait_seconds", "compute_seconds"}) {
    auto it = hists.find(h);
    const std::string key = std::string(h).substr(0, std::string(h).size() - 8) + "_us";  // "queue_wait_us"
    out[key] = it == hists.end() ? quantiles_us({}, {}) : quantiles_us(it->second.bounds, delta(h, it->second.counts));
  }
  out["end_to_end_us"] = {{"p50", double(e2e.hist.quantile_ns(0.50)) / 1e3},
                          {"p99", double(e2e.hist.quantile_ns(0.99)) / 1e3},
                          {"p999", double(e2e.hist.quantile_ns(0.999)) / 1e3},
                          {"count", e2e.hist.count()}};
  nlohmann::json dn = nlohmann::json::object(), dt_total = nlohmann::json::object();
  for (const auto& [reason, total] : drops) {
    dn[reason] = delta("drop:" + reason, total);
    dt_total[reason] = total;
  }
  out["drops"] = dn;
  out["drops_total"] = dt_total;
  out["failed_batches"] = delta("failed", counters["failed_batches_total"]);
  out["fallback_batches"] = delta("fallback", counters["fallback_batches_total"]);
  out["failed_total"] = counters["failed_batches_total"];
  out["backend_switches_total"] = counters["backend_switches_total"];
  return out;
}

}  // namespace ts::http
