// INT8 calibration math on the host (src/engine/calibrate.h), no GPU needed: KL divergence,
// the entropy threshold on distributions whose right answer is known, per-channel weight
// scales, and the property that makes entropy calibration worth having: on activations with
// rare outliers it clips them and quantizes the bulk of the values far more accurately than a
// max-based scale.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/calibrate.h"

namespace ts::engine {
namespace {

TEST(Calibrate, KlDivergenceOfKnownDistributions) {
  std::vector<double> p{1, 2, 3, 4}, q{1, 2, 3, 4}, q2{2, 4, 6, 8};
  EXPECT_NEAR(kl_divergence(p, q), 0.0, 1e-12);
  EXPECT_NEAR(kl_divergence(p, q2), 0.0, 1e-12);  // normalized first
  std::vector<double> a{0.5, 0.5}, b{0.9, 0.1};
  EXPECT_NEAR(kl_divergence(a, b), 0.5 * std::log(0.5 / 0.9) + 0.5 * std::log(0.5 / 0.1), 1e-12);
  std::vector<double> c{1, 0}, d{0, 1};  // p > 0 where q = 0: charged at q = 1e-10
  EXPECT_GT(kl_divergence(c, d), 20.0);
}

TEST(Calibrate, UniformDataKeepsNearlyItsWholeRange) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(200000);
  for (float& v : x) v = u(rng);
  EntropyHistogram h(1.0f);
  h.add(x);
  EXPECT_EQ(h.count(), x.size());
  EXPECT_GT(h.threshold(), 0.9f);
  EXPECT_LE(h.threshold(), 1.0f);
}

// Gaussian activations (σ = 1) with 0.01 % outliers at ±50: max calibration spends the 127
// levels on [0, 50]; entropy calibration clips near the bulk and quantizes the bulk better
// (the clipped outliers are the price).
TEST(Calibrate, EntropyThresholdClipsOutliersAndBeatsMaxCalibration) {
  std::mt19937 rng(2);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(400000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 10000 == 0 ? (i % 20000 ? 50.0f : -50.0f) : nd(rng);
  float max_abs = 0;
  for (float v : x) max_abs = std::max(max_abs, std::fabs(v));
  EntropyHistogram h(max_abs);
  h.add(x);
  const float t = h.threshold();
  EXPECT_GT(t, 2.0f);
  EXPECT_LT(t, 12.0f) << "the outliers at 50 should be clipped";
  auto mse = [&](float scale) {  // over the bulk (the 99.99 % that are not outliers)
    double e = 0;
    size_t n = 0;
    for (float v : x) {
      if (std::fabs(v) >= 50.0f) continue;
      double d = double(quantize_int8(v, scale)) * scale - v;
      e += d * d;
      ++n;
    }
    return e / double(n);
  };
  const double e_entropy = mse(int8_scale(t)), e_max = mse(int8_scale(max_abs));
  EXPECT_LT(e_entropy, 0.25 * e_max) << "threshold " << t << ": bulk MSE " << e_entropy << " vs max calibration " << e_max;
}

TEST(Calibrate, EmptyAndZeroTensorsFallBackToTheirRange) {
  EntropyHistogram empty(3.0f);
  EXPECT_FLOAT_EQ(empty.threshold(), 3.0f);
  EntropyHistogram zero(0.0f);
  std::vector<float> z(100, 0.0f);
  zero.add(z);
  EXPECT_FLOAT_EQ(zero.threshold(), 0.0f);
  EXPECT_FLOAT_EQ(int8_scale(0.0f), 1.0f);
}

TEST(Calibrate, PerChannelWeightScalesAndSaturation) {
  std::vector<float> w{0.1f, -2.54f, 1.0f,   // channel 0: max 2.54
                       0.0f, 0.0f, 0.0f,     // channel 1: all zero
                       0.127f, 0.05f, -0.1f};  // channel 2: max 0.127
  auto s = per_channel_weight_scales(w.data(), 3, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_FLOAT_EQ(s[0], 0.02f);
  EXPECT_FLOAT_EQ(s[1], 1.0f);
  EXPECT_FLOAT_EQ(s[2], 0.001f);
  EXPECT_EQ(quantize_int8(-2.54f, s[0]), -127);
  EXPECT_EQ(quantize_int8(100.0f, s[0]), 127);   // saturates
  EXPECT_EQ(quantize_int8(0.05f, s[2]), 50);
}

}  // namespace
}  // namespace ts::engine
