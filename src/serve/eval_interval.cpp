#include "serve/eval_interval.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <utility>

#include "serve/eval_metrics.h"

namespace ts {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The export's feature order (features/feature_set.h): ret_60s_bps, vol_long_bps, volume_z.
constexpr int64_t kRet60s = 2, kVolLong = 5, kVolumeZ = 7;
constexpr double kVolFloorBps = 0.5;  // the label's default sigma floor, bps / sqrt(s)

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t i = size_t(pos);
  const double frac = pos - double(i);
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

}  // namespace

Interval pr_auc_interval(std::span<const float> score, std::span<const uint8_t> label,
                         std::span<const int64_t> end_ts_ns, int64_t block_ns, int reps, uint64_t seed) {
  Interval out{average_precision(score, label), kNaN, kNaN};
  std::map<int64_t, std::vector<size_t>> by_block;
  for (size_t i = 0; i < score.size(); ++i) by_block[end_ts_ns[i] / std::max<int64_t>(block_ns, 1)].push_back(i);
  std::vector<const std::vector<size_t>*> blocks;
  for (const auto& [_, rows] : by_block) blocks.push_back(&rows);
  if (blocks.size() < 2) return out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, blocks.size() - 1);
  std::vector<double> values;
  std::vector<float> s;
  std::vector<uint8_t> y;
  for (int r = 0; r < reps; ++r) {
    s.clear();
    y.clear();
    for (size_t b = 0; b < blocks.size(); ++b) {
      for (size_t i : *blocks[pick(rng)]) {
        s.push_back(score[i]);
        y.push_back(label[i]);
      }
    }
    const double v = average_precision(s, y);
    if (std::isfinite(v)) values.push_back(v);
  }
  if (values.size() < 10) return out;
  out.lo = quantile(values, 0.025);
  out.hi = quantile(values, 0.975);
  return out;
}

namespace {

struct BlockSums {
  double alerts = 0, false_alerts = 0, hours = 0, events = 0, caught = 0;
  std::vector<double> leads;
};

// recall, precision, false alerts per symbol-hour, median and 10th-percentile lead over blocks.
std::array<double, 5> budget_values(const std::vector<BlockSums>& per, const std::vector<size_t>& idx) {
  BlockSums t;
  for (size_t b : idx) {
    const BlockSums& p = per[b];
    t.alerts += p.alerts;
    t.false_alerts += p.false_alerts;
    t.hours += p.hours;
    t.events += p.events;
    t.caught += p.caught;
    t.leads.insert(t.leads.end(), p.leads.begin(), p.leads.end());
  }
  const bool leads = !t.leads.empty();
  return {t.events > 0 ? t.caught / t.events : kNaN, t.alerts > 0 ? (t.alerts - t.false_alerts) / t.alerts : kNaN,
          t.hours > 0 ? t.false_alerts / t.hours : kNaN, leads ? quantile(t.leads, 0.5) : kNaN,
          leads ? quantile(t.leads, 0.1) : kNaN};
}

Interval interval_of(double value, std::vector<double> reps) {
  std::erase_if(reps, [](double v) { return !std::isfinite(v); });
  if (reps.size() < 10) return {value, kNaN, kNaN};
  return {value, quantile(reps, 0.025), quantile(reps, 0.975)};
}

}  // namespace

OperatingIntervals operating_intervals(const EvalWindows& w, double threshold, int64_t cooldown_ns, double window_s,
                                       int64_t block_ns, int reps, uint64_t seed) {
  const size_t n = w.score.size();
  std::map<int64_t, size_t> id_of;
  std::vector<size_t> block(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t key = w.end_ts_ns[i] / std::max<int64_t>(block_ns, 1);
    block[i] = id_of.try_emplace(key, id_of.size()).first->second;
  }
  const size_t nb = id_of.size();
  std::vector<std::vector<size_t>> rows_of(nb);
  for (size_t i = 0; i < n; ++i) rows_of[block[i]].push_back(i);
  const std::vector<uint8_t> alert = alert_flags(w, threshold, cooldown_ns);
  std::vector<BlockSums> per(nb);
  std::map<std::pair<int32_t, int64_t>, std::pair<size_t, int64_t>> events;  // → first positive row, first hit end
  for (size_t i = 0; i < n; ++i) {
    BlockSums& p = per[block[i]];
    p.alerts += alert[i];
    p.false_alerts += alert[i] && !w.label[i];
    p.hours += window_s / 3600.0;
    if (!w.label[i]) continue;
    auto& e = events.try_emplace({w.symbol[i], w.event_ts_ns[i]}, i, INT64_MIN).first->second;
    if (e.second == INT64_MIN && double(w.score[i]) >= threshold) e.second = w.end_ts_ns[i];
  }
  OperatingIntervals out;
  out.threshold = threshold;
  for (const auto& [key, e] : events) {
    BlockSums& p = per[block[e.first]];
    p.events += 1;
    ++out.events;
    if (e.second == INT64_MIN) continue;
    p.caught += 1;
    ++out.events_detected;
    p.leads.push_back(double(key.second - e.second) / 1e9);
  }
  for (const BlockSums& p : per) {
    out.alerts += int64_t(p.alerts);
    out.false_alerts += int64_t(p.false_alerts);
    out.symbol_hours += p.hours;
  }
  out.blocks = int64_t(nb);
  std::vector<size_t> all(nb);
  for (size_t b = 0; b < nb; ++b) all[b] = b;
  const std::array<double, 5> point = budget_values(per, all);
  std::array<std::vector<double>, 7> samples;  // the five above, PR-AUC, ROC-AUC
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, nb ? nb - 1 : 0);
  std::vector<size_t> idx(nb);
  std::vector<float> s;
  std::vector<uint8_t> y;
  for (int r = 0; nb > 1 && r < reps; ++r) {
    s.clear();
    y.clear();
    for (size_t& b : idx) {
      b = pick(rng);
      for (size_t i : rows_of[b]) {
        s.push_back(w.score[i]);
        y.push_back(w.label[i]);
      }
    }
    const std::array<double, 5> v = budget_values(per, idx);
    for (size_t k = 0; k < v.size(); ++k) samples[k].push_back(v[k]);
    samples[5].push_back(average_precision(s, y));
    samples[6].push_back(roc_auc(s, y));
  }
  out.recall = interval_of(point[0], samples[0]);
  out.precision = interval_of(point[1], samples[1]);
  out.false_alerts_per_symbol_hour = interval_of(point[2], samples[2]);
  out.median_lead_s = interval_of(point[3], samples[3]);
  out.p10_lead_s = point[4];
  out.pr_auc = interval_of(average_precision(w.score, w.label), samples[5]);
  out.roc_auc = interval_of(roc_auc(w.score, w.label), samples[6]);
  return out;
}

std::vector<float> baseline_ret60(std::span<const float> windows, int64_t t, int64_t f) {
  const size_t n = t > 0 && f > kVolumeZ ? windows.size() / size_t(t * f) : 0;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    const float* last = windows.data() + (i * size_t(t) + size_t(t - 1)) * size_t(f);
    const double vol = std::max(double(last[kVolLong]), kVolFloorBps);
    out[i] = float(std::fabs(double(last[kRet60s])) / (vol * std::sqrt(60.0)));
  }
  return out;
}

std::vector<float> baseline_volume_z(std::span<const float> windows, int64_t t, int64_t f) {
  const size_t n = t > 0 && f > kVolumeZ ? windows.size() / size_t(t * f) : 0;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = windows[(i * size_t(t) + size_t(t - 1)) * size_t(f) + kVolumeZ];
  return out;
}

}  // namespace ts
