// Accuracy of the reduced precisions where it matters to a user: the shipped model
// (models/default.onnx) scored on the models issue's validation split (LOBSTER windows of the
// validation period, tests/engine/cuda/export_val_split.py → TS_AUC_DATA) by the CPU backend
// (FP32, the reference) and the CUDA backend at FP32, FP16, BF16 and INT8; ROC-AUC of each
// against the labels. Targets (issue 5): FP16 loses ≤ 0.1 % of the FP32 AUC; BF16 and INT8
// are held to 0.5 %, both as the default INT8 plan builds it (the encoder layer fused, in FP16:
// builder.cpp) and with --precisionConstraints obey (every eligible GEMM its own INT8 layer, the
// INT8 arithmetic's own accuracy). INT8 is calibrated (quantize.h) on the same windows.npy: calibration reads
// no labels, so the AUC it is judged by is not fitted to. Labelled `gpu`: skipped without
// a CUDA device or without the data, saying which.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include "cuda_test_util.h"
#include "engine/npy.h"

namespace ts::engine {
namespace {

namespace fs = std::filesystem;
using testing::default_model;
using testing::read_bytes;

// ROC-AUC by the rank-sum (Mann–Whitney) formula, ties sharing their average rank.
double roc_auc(const std::vector<float>& score, const std::vector<uint8_t>& label) {
  std::vector<size_t> idx(score.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  double rank_sum = 0, pos = 0;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j < idx.size() && score[idx[j]] == score[idx[i]]) ++j;
    const double avg = (double(i) + double(j - 1)) / 2.0 + 1.0;
    for (size_t k = i; k < j; ++k) {
      if (label[idx[k]]) {
        rank_sum += avg;
        pos += 1;
      }
    }
    i = j;
  }
  const double neg = double(score.size()) - pos;
  if (pos == 0 || neg == 0) return NAN;
  return (rank_sum - pos * (pos + 1) / 2.0) / (pos * neg);
}

// Scores every window: batches of 256 on one context.
Result<std::vector<float>> score_all(const std::vector<uint8_t>& onnx, const std::string& backend, Precision p,
                                     const HostTensor& windows, const std::string& calib = "",
                                     std::string* describe = nullptr, bool int8_obey = false) {
  const int64_t n = windows.dims[0], t = windows.dims[1], f = windows.dims[2], kBatch = 256;
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, t, f}, {kBatch, t, f}, {kBatch, t, f}};
  BuildOptions o;
  o.backend = backend;
  o.precision = p;
  o.profiles = {prof};
  o.calibration_data = calib;
  o.int8_obey_precision = int8_obey;
  auto plan = build(onnx, o);
  if (!plan) return plan.status();
  auto e = Engine::load(plan.value());
  if (!e) return e.status();
  if (describe) *describe = e.value()->describe();
  auto ctx = e.value()->create_context();
  if (!ctx) return ctx.status();
  std::vector<float> scores(static_cast<size_t>(n));
  for (int64_t b0 = 0; b0 < n; b0 += kBatch) {
    const int64_t b = std::min(kBatch, n - b0);
    std::vector<int64_t> dims{b, t, f};
    TensorView in{DType::kF32, dims, const_cast<float*>(windows.as<float>() + b0 * t * f)};
    TensorView out{DType::kF32, {}, scores.data() + b0};
    TS_RETURN_IF_ERROR(ctx.value()->execute(std::span<const TensorView>(&in, 1), std::span<TensorView>(&out, 1)));
    if (shape_numel(out.dims) != b) return Status(StatusCode::kInternal, "expected one score per window, got " + dims_str(out.dims));
  }
  return scores;
}

TEST(CudaAccuracy, Fp16Bf16AndInt8AucOnTheValidationSplit) {
  const Backend* cuda = find_backend("cuda");
  if (!cuda) GTEST_SKIP() << "this build has no cuda backend (nvcc not found at configure)";
  if (Status s = cuda->available(); !s) GTEST_SKIP() << s.message();
  const char* dir = std::getenv("TS_AUC_DATA");
  if (!dir || !fs::exists(fs::path(dir) / "windows.npy")) {
    GTEST_SKIP() << "no validation windows: set TS_AUC_DATA to the output of tests/engine/cuda/export_val_split.py";
  }
  auto windows = npy_read((fs::path(dir) / "windows.npy").string());
  auto labels = npy_read((fs::path(dir) / "labels.npy").string());
  ASSERT_TRUE(windows && labels) << windows.status().to_string() << labels.status().to_string();
  ASSERT_EQ(windows.value().dims.size(), 3u);
  ASSERT_EQ(labels.value().numel(), windows.value().dims[0]);
  std::vector<uint8_t> y(labels.value().as<uint8_t>(), labels.value().as<uint8_t>() + labels.value().numel());
  const std::vector<uint8_t> onnx = read_bytes(default_model());
  ASSERT_FALSE(onnx.empty()) << default_model() << " is missing";

  struct Run {
    const char* name;
    const char* key;  // the test property carrying its AUC
    std::string backend;
    Precision p;
    bool int8_obey = false;
    double auc = NAN;
  };
  std::vector<Run> runs{{"cpu fp32", "auc_cpu_fp32", "cpu", Precision::kFP32},
                        {"cuda fp32", "auc_cuda_fp32", "cuda", Precision::kFP32},
                        {"cuda fp16", "auc_cuda_fp16", "cuda", Precision::kFP16},
                        {"cuda bf16", "auc_cuda_bf16", "cuda", Precision::kBF16},
                        {"cuda int8", "auc_cuda_int8", "cuda", Precision::kINT8},
                        {"cuda int8 obey", "auc_cuda_int8_obey", "cuda", Precision::kINT8, true}};
  const std::string calib = (fs::path(dir) / "windows.npy").string();
  std::string int8_layers;
  for (Run& r : runs) {
    auto s = score_all(onnx, r.backend, r.p, windows.value(), r.p == Precision::kINT8 ? calib : "",
                       r.int8_obey ? &int8_layers : nullptr, r.int8_obey);
    ASSERT_TRUE(s) << r.name << ": " << s.status().to_string();
    r.auc = roc_auc(s.value(), y);
  }
  const double ref = runs[1].auc;
  std::printf("ROC-AUC on %lld validation windows (%lld positive), models/default.onnx:\n",
              (long long)y.size(), (long long)std::count(y.begin(), y.end(), 1));
  for (const Run& r : runs) {
    std::printf("  %-14s %.6f  drop vs cuda fp32 %+.4f %%\n", r.name, r.auc, 100.0 * (ref - r.auc) / ref);
    RecordProperty(r.key, std::to_string(r.auc));
  }
  EXPECT_NEAR(runs[1].auc, runs[0].auc, 1e-4) << "CUDA FP32 should rank the windows as the CPU backend does";
  EXPECT_LE((ref - runs[2].auc) / ref, 0.001) << "FP16 AUC drop over the 0.1 % target";
  EXPECT_LE((ref - runs[3].auc) / ref, 0.005) << "BF16 AUC drop over 0.5 %";
  EXPECT_LE((ref - runs[4].auc) / ref, 0.005) << "INT8 AUC drop over the 0.5 % target";
  EXPECT_LE((ref - runs[5].auc) / ref, 0.005) << "INT8 (obey) AUC drop over the 0.5 % target";
  EXPECT_NE(int8_layers.find("precision=int8"), std::string::npos) << "the obey plan ran no INT8 layer:\n" << int8_layers;
  // Which layers ran INT8 (inspect's view of the obey plan).
  std::printf("int8 (obey) plan layers:\n");
  for (size_t a = 0, b; a < int8_layers.size(); a = b + 1) {
    b = int8_layers.find('\n', a);
    if (b == std::string::npos) b = int8_layers.size();
    const std::string line = int8_layers.substr(a, b - a);
    if (line.find("precision=int8") != std::string::npos || line.find("precision=fp16") != std::string::npos) {
      std::printf("%s\n", line.c_str());
    }
  }
}

}  // namespace
}  // namespace ts::engine
