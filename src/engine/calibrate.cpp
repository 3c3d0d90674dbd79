// INT8 calibration math (see calibrate.h for the algorithm and its source).
#include "engine/calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ts::engine {

EntropyHistogram::EntropyHistogram(float max_abs, int bins)
    : max_abs_(max_abs > 0 && std::isfinite(max_abs) ? max_abs : 0.0f), bins_(size_t(std::max(bins, 1)), 0) {}

void EntropyHistogram::add(std::span<const float> x) {
  const int64_t n = int64_t(bins_.size());
  const float per_bin = max_abs_ > 0 ? float(n) / max_abs_ : 0.0f;
  for (float v : x) {
    if (!std::isfinite(v)) continue;
    int64_t b = int64_t(std::fabs(v) * per_bin);
    bins_[size_t(std::min(b, n - 1))] += 1;
  }
  count_ += x.size();
}

double kl_divergence(std::span<const double> p, std::span<const double> q) {
  double sp = 0, sq = 0;
  for (double v : p) sp += v;
  for (double v : q) sq += v;
  if (sp <= 0 || sq <= 0) return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (size_t i = 0; i < p.size() && i < q.size(); ++i) {
    if (p[i] <= 0) continue;
    double pi = p[i] / sp, qi = q[i] > 0 ? q[i] / sq : 1e-10;
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

float EntropyHistogram::threshold(int levels) const {
  const int n = int(bins_.size());
  if (count_ == 0 || max_abs_ <= 0 || levels < 1 || n < levels) return max_abs_;
  const double width = double(max_abs_) / n;
  double best_kl = std::numeric_limits<double>::infinity();
  int best_i = n;
  std::vector<double> p, q;
  for (int i = levels; i <= n; ++i) {
    p.assign(bins_.begin(), bins_.begin() + i);
    double outliers = 0;
    for (int j = i; j < n; ++j) outliers += double(bins_[size_t(j)]);
    p[size_t(i) - 1] += outliers;
    // Q: bins [0, i) merged into `levels` groups, each group's mass spread over its non-empty bins.
    q.assign(size_t(i), 0.0);
    const double per_level = double(i) / levels;
    for (int l = 0; l < levels; ++l) {
      int lo = int(std::floor(l * per_level)), hi = l == levels - 1 ? i : int(std::floor((l + 1) * per_level));
      double mass = 0;
      int nonzero = 0;
      for (int j = lo; j < hi; ++j) {
        mass += double(bins_[size_t(j)]);
        nonzero += bins_[size_t(j)] != 0;
      }
      if (nonzero == 0) continue;
      for (int j = lo; j < hi; ++j) {
        if (bins_[size_t(j)] != 0) q[size_t(j)] = mass / nonzero;
      }
    }
    double kl = kl_divergence(p, q);
    if (kl < best_kl) {
      best_kl = kl;
      best_i = i;
    }
  }
  return float(std::min((best_i + 0.5) * width, double(max_abs_)));
}

std::vector<float> per_channel_weight_scales(const float* w, int64_t channels, int64_t per_channel) {
  std::vector<float> s(size_t(std::max<int64_t>(channels, 0)), 1.0f);
  for (int64_t c = 0; c < channels; ++c) {
    float m = 0;
    for (int64_t k = 0; k < per_channel; ++k) m = std::max(m, std::fabs(w[c * per_channel + k]));
    s[size_t(c)] = int8_scale(m);
  }
  return s;
}

int8_t quantize_int8(float x, float scale) {
  float q = std::nearbyint(x / scale);
  return int8_t(std::clamp(q, -127.0f, 127.0f));
}

}  // namespace ts::engine
