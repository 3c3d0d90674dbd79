#pragma once
// INT8 calibration math, backend-independent (runs on the host): entropy calibration as
// TensorRT's IInt8EntropyCalibrator2 does it, and per-channel weight scales.
//
// Entropy calibration of one tensor: a histogram of |x| over [0, max_abs] in `bins` bins
// (2048 by default) is filled from the calibration windows; for every candidate clip point i
// (from `levels` = 128 bins up to all of them) the reference distribution P is the first i bins
// with everything beyond folded into bin i − 1, and Q is P's first i bins quantized into 128
// levels and expanded back (each level's mass spread evenly over its non-empty bins). The
// threshold is (i + 0.5) · bin width for the i minimizing KL(P ‖ Q); the INT8 scale is
// threshold / 127 (symmetric, zero point 0). Outliers are clipped rather than stretching the
// range: a max-based scale would waste most of the 256 codes on them.
//
// Threading: an EntropyHistogram is filled by one thread at a time; the free functions are pure.
#include <cstdint>
#include <span>
#include <vector>

namespace ts::engine {

class EntropyHistogram {
 public:
  // max_abs: the range of |x| (from a first pass over the calibration set; values beyond it
  // land in the last bin). max_abs ≤ 0 makes every value land in bin 0 (an all-zero tensor).
  explicit EntropyHistogram(float max_abs, int bins = 2048);
  void add(std::span<const float> x);
  const std::vector<uint64_t>& bins() const { return bins_; }
  float max_abs() const { return max_abs_; }
  uint64_t count() const { return count_; }
  // The clip threshold minimizing KL(P ‖ Q), ≤ max_abs; max_abs when the histogram has fewer
  // than `levels` bins or no data.
  float threshold(int levels = 128) const;

 private:
  float max_abs_;
  std::vector<uint64_t> bins_;
  uint64_t count_ = 0;
};

// KL(P ‖ Q) = Σ p·ln(p / q) after normalizing both to sum 1; terms with p = 0 contribute 0, a
// term with p > 0 and q = 0 is charged as if q were 1e-10 (TensorRT's smoothing).
double kl_divergence(std::span<const double> p, std::span<const double> q);

// The INT8 scale of a tensor whose clip threshold is `threshold`: threshold / 127.
inline float int8_scale(float threshold) { return threshold > 0 ? threshold / 127.0f : 1.0f; }

// Symmetric per-output-channel weight scales: w holds `channels` rows of `per_channel` values
// (row-major [channels, per_channel]); scale[c] = max |w[c, :]| / 127 (1 for an all-zero row).
std::vector<float> per_channel_weight_scales(const float* w, int64_t channels, int64_t per_channel);

// Round-to-nearest INT8 code of x at `scale`, saturated to [−127, 127].
int8_t quantize_int8(float x, float scale);

}  // namespace ts::engine
