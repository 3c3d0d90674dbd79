// INT8 calibration of a graph on the host (src/engine/quantize.h), no GPU needed: the
// histograms collected at the right tensors, the scales derived from them, the per-layer
// error check and its FP16 fallback, the calibration cache, the plan that carries the scales
// (and still reads version-1 plans), what `inspect` prints per layer, and every refused input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "../cpu/graph_builder.h"
#include "engine/builder.h"
#include "engine/calibrate.h"
#include "engine/plan.h"
#include "engine/quantize.h"
#include "test_data.h"

namespace ts::engine::testing {
namespace {

using Windows = ::ts::engine::HostTensor;  // graph_builder.h has a testing::HostTensor too

constexpr int64_t kT = 6, kF = 10;

// x [batch, 6, 10] → FusedGemm(relu) 10→24 (W [K,N]) → FusedGemm(none) 24→3 (W [N,K], trans_b)
// → y [batch, 6, 3].
Graph two_layer_graph(float w_scale = 0.4f) {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::known(kT), Dim::known(kF)});
  auto w1 = b.constant("W1", {kF, 24}, random_vec(kF * 24, 11, w_scale));
  auto b1 = b.constant("b1", {24}, random_vec(24, 12, 0.1f));
  auto w2 = b.constant("W2", {3, 24}, random_vec(3 * 24, 13, w_scale));
  auto b2 = b.constant("b2", {3}, random_vec(3, 14, 0.1f));
  auto h = b.value("h"), y = b.value("y");
  auto& n1 = b.node("FusedGemm", {x, w1, b1}, {h});
  n1.name = "/fc1";
  n1.attrs["activation"] = std::string("relu");
  n1.attrs["trans_b"] = int64_t(0);
  auto& n2 = b.node("FusedGemm", {h, w2, b2}, {y});
  n2.name = "/fc2";
  n2.attrs["activation"] = std::string("none");
  n2.attrs["trans_b"] = int64_t(1);
  b.output(y);
  b.g.opset = 17;
  return b.g;
}

// Gaussian windows; with `outlier` > 0, one value in 4999 is that large (what entropy
// calibration clips).
Windows windows(int64_t n, uint32_t seed = 5, float outlier = 0.0f) {
  Windows t = Windows::zeros(DType::kF32, {n, kT, kF});
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = outlier > 0 && i % 4999 == 0 ? outlier : g(rng);
  return t;
}

TEST(Int8Calibration, HistogramsAreCollectedAtEachGemmInputAndOutput) {
  Graph g = two_layer_graph();
  Windows w = windows(1200, 5, 40.0f);
  auto t = calibrate(g, w, CalibrationOptions{});
  ASSERT_TRUE(t) << t.status().to_string();
  // x (input of /fc1), h (its output and /fc2's input); y is a graph output no node reads.
  ASSERT_EQ(t.value().thresholds.size(), 2u);
  ASSERT_TRUE(t.value().thresholds.count("x"));
  ASSERT_TRUE(t.value().thresholds.count("h"));
  EXPECT_EQ(t.value().windows, 1200);
  // x's threshold is exactly what the entropy calibrator gives on the windows themselves:
  // the histogram saw every value of the input once.
  float max_abs = 0;
  for (int64_t i = 0; i < w.numel(); ++i) max_abs = std::max(max_abs, std::fabs(w.as<float>()[i]));
  EntropyHistogram h(max_abs);
  h.add(std::span<const float>(w.as<float>(), size_t(w.numel())));
  EXPECT_FLOAT_EQ(t.value().thresholds.at("x"), h.threshold());
  // The outliers at 40 are clipped: the threshold sits near the Gaussian bulk.
  EXPECT_LT(t.value().thresholds.at("x"), 10.0f);
  EXPECT_GT(t.value().thresholds.at("x"), 2.5f);
  // h = relu(...) ≥ 0 and its threshold is within its range.
  EXPECT_GT(t.value().thresholds.at("h"), 0.0f);
  ASSERT_EQ(t.value().layer_rel_err.size(), 2u);
  for (const auto& [name, e] : t.value().layer_rel_err) EXPECT_GT(e, 1e-4) << name << ": INT8 cannot be exact";
  // The clip the error check chose is never below the entropy threshold nor above max |x|.
  EXPECT_GE(t.value().layer_in_threshold.at("/fc1"), t.value().thresholds.at("x"));
  EXPECT_LE(t.value().layer_in_threshold.at("/fc1"), 40.0f);
  EXPECT_GE(t.value().layer_in_threshold.at("/fc2"), t.value().thresholds.at("h"));
}

TEST(Int8Calibration, LayersOverTheErrorLimitFallBackToFp16WithTheReason) {
  Graph g = two_layer_graph();
  auto t = calibrate(g, windows(1000), CalibrationOptions{});
  ASSERT_TRUE(t) << t.status().to_string();
  CalibrationOptions strict;
  strict.max_rel_err = 1e-6;
  auto layers = choose_layer_precisions(g, t.value(), strict);
  ASSERT_TRUE(layers) << layers.status().to_string();
  ASSERT_EQ(layers.value().size(), 2u);
  for (const auto& l : layers.value()) {
    EXPECT_FALSE(l.int8) << l.node;
    EXPECT_EQ(l.reason.rfind("fallback: rel err ", 0), 0u) << l.reason;
    EXPECT_NE(l.reason.find("> 1.0e-06"), std::string::npos) << l.reason;
  }
  // On Gaussian inputs both layers quantize well: errors of 1e-2 or less, below the 5e-2 default.
  for (const auto& [name, e] : t.value().layer_rel_err) EXPECT_LT(e, 2e-2) << name;
  auto ok = choose_layer_precisions(g, t.value(), CalibrationOptions{});
  ASSERT_TRUE(ok);
  for (const auto& l : ok.value()) {
    EXPECT_TRUE(l.int8) << l.node << " " << l.reason;
    EXPECT_FLOAT_EQ(l.in_scale, int8_scale(t.value().layer_in_threshold.at(l.node)));
  }
  // Per-output-channel weight scales: /fc1 has 24 channels (columns of its [K,N] W), /fc2 3
  // (rows of its [N,K] W); each is that channel's max |w| / 127.
  const auto& fc1 = ok.value()[0];
  ASSERT_EQ(fc1.w_scales.size(), 24u);
  const float* w1 = g.value(g.find_value("W1")).as<float>();
  float m = 0;
  for (int k = 0; k < kF; ++k) m = std::max(m, std::fabs(w1[k * 24 + 5]));
  EXPECT_FLOAT_EQ(fc1.w_scales[5], m / 127.0f);
  EXPECT_EQ(ok.value()[1].w_scales.size(), 3u);
}

TEST(Int8Calibration, RefusesTooFewOrMisshapenWindows) {
  Graph g = two_layer_graph();
  auto few = calibrate(g, windows(999), CalibrationOptions{});
  ASSERT_FALSE(few);
  EXPECT_EQ(few.status().message(), "int8 calibration: need ≥ 1000 windows, got 999");
  Windows wrong = Windows::zeros(DType::kF32, {1000, kT, kF + 1});
  auto bad = calibrate(g, wrong, CalibrationOptions{});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("do not fit the model's input x"), std::string::npos) << bad.status().message();
  Windows flat = Windows::zeros(DType::kF32, {1000, kF});
  EXPECT_FALSE(calibrate(g, flat, CalibrationOptions{}));
}

TEST(Int8Calibration, CacheRoundTripsAndARebuildNeedsNoWindows) {
  const auto dir = ts::testing::scratch_dir("int8_cache");
  const std::string cache = (dir / "model.calib").string();
  const std::string npy = (dir / "windows.npy").string();
  Windows w = windows(1000);
  ASSERT_TRUE(npy_write(npy, w));

  Graph g = two_layer_graph();
  std::vector<std::string> log;
  auto first = quantize_graph(g, npy, cache, CalibrationOptions{}, &log);
  ASSERT_TRUE(first) << first.status().to_string();
  ASSERT_TRUE(std::filesystem::exists(cache));
  EXPECT_EQ(g.nodes[0].attr_s(kAttrQPrecision, ""), "int8");
  EXPECT_GT(g.nodes[0].attr_f(kAttrQInScale, 0.0f), 0.0f);

  auto read = read_calibration_cache(cache);
  ASSERT_TRUE(read) << read.status().to_string();
  EXPECT_EQ(read.value().fingerprint, first.value().fingerprint);
  EXPECT_EQ(read.value().thresholds, first.value().thresholds);  // hex floats: exact
  EXPECT_EQ(read.value().layer_rel_err, first.value().layer_rel_err);
  EXPECT_EQ(read.value().layer_in_threshold, first.value().layer_in_threshold);

  Graph again = two_layer_graph();
  log.clear();
  auto second = quantize_graph(again, "", cache, CalibrationOptions{}, &log);
  ASSERT_TRUE(second) << second.status().to_string();
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("calibration read from cache"), std::string::npos) << log[0];
  EXPECT_EQ(again.nodes[1].attrs, g.nodes[1].attrs);

  // Another model's cache is refused without windows to recalibrate on.
  Graph other = two_layer_graph(0.7f);
  auto refused = quantize_graph(other, "", cache, CalibrationOptions{}, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("was made for another model"), std::string::npos)
      << refused.status().message();

  std::ofstream(dir / "bad.calib") << "ticksentry-int8-calibration 1\nfingerprint 0000abcd\ntensor zz x\n";
  auto bad = read_calibration_cache((dir / "bad.calib").string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("line 3: bad value 'zz'"), std::string::npos) << bad.status().message();
  std::ofstream(dir / "other.txt") << "TRT-8601-EntropyCalibration2\n";
  EXPECT_FALSE(read_calibration_cache((dir / "other.txt").string()));
}

TEST(Int8Calibration, NeedsDataOrACache) {
  Graph g = two_layer_graph();
  auto none = quantize_graph(g, "", "", CalibrationOptions{}, nullptr);
  ASSERT_FALSE(none);
  EXPECT_NE(none.status().message().find("int8 needs calibration data: give --calib"), std::string::npos);
  auto missing = quantize_graph(g, "/nonexistent/windows.npy", "", CalibrationOptions{}, nullptr);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("/nonexistent/windows.npy"), std::string::npos) << missing.status().message();
}

// The builder checks INT8's calibration inputs before the device: the errors read the same
// with and without a GPU.
TEST(Int8Calibration, BuildRefusesMissingOrShortCalibrationData) {
  const auto dir = ts::testing::scratch_dir("int8_build_errors");
  BuildOptions o;
  o.backend = "cpu";  // checked before the backend refuses int8
  o.precision = Precision::kINT8;
  auto no_data = build({}, o);
  ASSERT_FALSE(no_data);
  EXPECT_NE(no_data.status().message().find("int8 needs calibration data"), std::string::npos) << no_data.status().message();
  o.calibration_data = (dir / "missing.npy").string();
  auto missing = build({}, o);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("missing.npy"), std::string::npos) << missing.status().message();
  o.calibration_data = (dir / "few.npy").string();
  ASSERT_TRUE(npy_write(o.calibration_data, windows(10)));
  auto few = build({}, o);
  ASSERT_FALSE(few);
  EXPECT_NE(few.status().message().find("need ≥ 1000 windows, got 10"), std::string::npos) << few.status().message();
  // On the cpu backend INT8 is refused outright (no CPU INT8 kernels), naming the way out.
  o.calibration_data = (dir / "many.npy").string();
  ASSERT_TRUE(npy_write(o.calibration_data, windows(1000)));
  auto cpu = build_from_graph(two_layer_graph(), PassLog{}, o);
  ASSERT_FALSE(cpu);
  EXPECT_NE(cpu.status().message().find("int8 is not supported by the cpu backend (use --backend cuda)"), std::string::npos)
      << cpu.status().message();
}

TEST(Int8Plan, ScalesAndLayerChoicesRoundTripAndVersion1StillLoads) {
  Graph g = two_layer_graph();
  auto t = calibrate(g, windows(1000), CalibrationOptions{});
  ASSERT_TRUE(t);
  CalibrationOptions o;
  o.max_rel_err = 0.5 * (t.value().layer_rel_err.at("/fc1") + t.value().layer_rel_err.at("/fc2"));
  auto layers = choose_layer_precisions(g, t.value(), o);  // the worse layer falls back
  ASSERT_TRUE(layers);
  apply_layer_precisions(g, layers.value());
  Plan p;
  p.backend = "cuda";
  p.target_arch = "sm_90";
  p.precision = Precision::kINT8;
  p.graph = g;
  for (const auto& [name, th] : t.value().thresholds) p.activation_scales[name] = int8_scale(th);
  auto bytes = serialize_plan(p);
  auto back = deserialize_plan(bytes);
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back.value().precision, Precision::kINT8);
  EXPECT_EQ(back.value().activation_scales, p.activation_scales);
  ASSERT_EQ(back.value().graph.nodes.size(), 2u);
  int n_int8 = 0;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.value().graph.nodes[i].attrs, g.nodes[i].attrs);
    n_int8 += back.value().graph.nodes[i].attr_s(kAttrQPrecision, "") == "int8";
  }
  EXPECT_EQ(n_int8, 1);

  // A version-1 plan (no calibration table) still reads.
  Plan v1 = p;
  v1.activation_scales.clear();
  auto b1 = serialize_plan(v1);
  // drop the empty table's count, the absent manifest's marker, the empty bucket-memory count
  // (format 4), the checksum
  b1.resize(b1.size() - 16);
  b1[8] = 1;
  const uint32_t crc = crc32(b1);
  for (int i = 0; i < 4; ++i) b1.push_back(uint8_t(crc >> (8 * i)));
  auto old = deserialize_plan(b1);
  ASSERT_TRUE(old) << old.status().to_string();
  EXPECT_TRUE(old.value().activation_scales.empty());
  EXPECT_EQ(old.value().graph.nodes.size(), 2u);
}

// What `ticksentry inspect` prints per layer of an INT8 plan (the cuda backend's
// layer_precision reads the layer's attributes: host code, no device needed).
TEST(Int8Plan, InspectSaysWhichPrecisionEachLayerRunsAndWhy) {
  const Backend* cuda = find_backend("cuda");
  if (!cuda) GTEST_SKIP() << "this build has no cuda backend (nvcc not found at configure)";
  Graph g = two_layer_graph();
  auto t = calibrate(g, windows(1000), CalibrationOptions{});
  ASSERT_TRUE(t);
  CalibrationOptions o;
  o.max_rel_err = 0.5 * (t.value().layer_rel_err.at("/fc1") + t.value().layer_rel_err.at("/fc2"));
  auto layers = choose_layer_precisions(g, t.value(), o);
  ASSERT_TRUE(layers);
  apply_layer_precisions(g, layers.value());
  Node gru;
  gru.name = "/gru";
  gru.op = "GRU";
  g.nodes.push_back(gru);
  Program prog;
  prog.graph = g;
  std::vector<std::string> got;
  for (size_t i = 0; i < 3; ++i) got.push_back(cuda->layer_precision(prog, i, Precision::kINT8));
  const bool fc1_int8 = layers.value()[0].int8;
  const std::string& int8_one = fc1_int8 ? got[0] : got[1];
  const std::string& fp16_one = fc1_int8 ? got[1] : got[0];
  EXPECT_EQ(int8_one.rfind("int8 (rel err ", 0), 0u) << int8_one;
  EXPECT_EQ(fp16_one.rfind("fp16 (fallback: rel err ", 0), 0u) << fp16_one;
  EXPECT_NE(fp16_one.find(" > "), std::string::npos) << fp16_one;
  EXPECT_EQ(got[2], "fp16 (recurrent)");
  EXPECT_EQ(cuda->layer_precision(prog, 0, Precision::kFP16), "fp16");
}

}  // namespace
}  // namespace ts::engine::testing
