#include "serve/eval_interval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

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
