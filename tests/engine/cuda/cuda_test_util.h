#pragma once
// Helpers of the CUDA backend's tests (cuda_backend_test.cpp, cuda_layers_test.cpp): the CPU
// backend is the reference; compare() is the tolerance rule; check_case() builds one graph for
// both backends and compares them on random inputs at several shapes; check_model_file()
// does the same for a whole ONNX model at several batch/seq shapes (eager, CUDA-graph capture
// and replay). Tolerances (‖gpu − cpu‖₂ / ‖cpu‖₂, and per element |gpu − cpu| ≤
// 20·tol·(1 + |cpu|)): FP32 1e-5, TF32 1e-3, FP16 and BF16 1e-2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "../cpu/graph_builder.h"
#include "engine/backend.h"
#include "engine/builder.h"
#include "engine/engine.h"
#include "engine/onnx_import.h"
#include "engine/plan.h"

namespace ts::engine::testing {

namespace fs = std::filesystem;

// models/default.onnx, the shipped model (a 1-layer Transformer over 20 features): where the
// test binary finds it (TS_DEFAULT_MODEL, the working directory's models/, the source tree).
inline fs::path default_model() {
  if (const char* d = std::getenv("TS_DEFAULT_MODEL")) return d;
  if (fs::exists("models/default.onnx")) return "models/default.onnx";
  return fs::path(TICKSENTRY_SOURCE_DIR) / "models" / "default.onnx";
}

inline const Backend* cuda() { return find_backend("cuda"); }

inline std::string dstr(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

inline Shape sym(std::vector<std::string> names, std::vector<int64_t> fixed) {
  // names[i] non-empty → symbolic, else fixed[i]
  Shape s;
  for (size_t i = 0; i < names.size(); ++i) s.push_back(names[i].empty() ? Dim::known(fixed[i]) : Dim::sym(names[i]));
  return s;
}

inline bool have_gpu() { return cuda() && cuda()->available().is_ok(); }

#define SKIP_WITHOUT_GPU()                                                                        \
  do {                                                                                            \
    if (!cuda()) GTEST_SKIP() << "this build has no cuda backend (nvcc not found at configure)";  \
    if (!have_gpu()) GTEST_SKIP() << cuda()->available().message();                               \
  } while (0)

struct Tol {
  double rel;
  const char* name;
};
constexpr Tol kFp32{1e-5, "fp32"}, kTf32{1e-3, "tf32"}, kFp16{1e-2, "fp16"}, kBf16{1e-2, "bf16"};

// Returns "" when close, else what differs.
inline std::string compare(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return "element " + std::to_string(i) + " is not finite";
    double d = double(got[i]) - want[i];
    num += d * d;
    den += double(want[i]) * want[i];
    if (std::fabs(d) > 20 * tol * (1.0 + std::fabs(want[i]))) {
      return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
    }
  }
  double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
  if (rel > tol) return "relative L2 error " + std::to_string(rel) + " > " + std::to_string(tol);
  return "";
}

inline BuildOptions options(const std::string& backend, Precision p = Precision::kFP32, bool tf32 = false) {
  BuildOptions o;
  o.backend = backend;
  o.precision = p;
  o.tf32 = tf32;
  return o;
}

// Builds `g` for the backend with one profile (input name → min/opt/max), loads it.
inline Result<std::shared_ptr<Engine>> build_graph(const Graph& g, BuildOptions o) {
  auto plan = build_from_graph(g, PassLog{}, o);
  if (!plan) return plan.status();
  return Engine::load(plan.value());
}

// Runs `e` on inputs; outputs sized from `out_elems`.
inline Result<std::vector<std::vector<float>>> run(Engine& e, std::vector<HostTensor>& inputs, size_t out_elems = 1 << 22) {
  return run_engine(e, inputs, out_elems);
}

// The CUDA engine's outputs against the CPU engine's on the same inputs, each within `rel`;
// `where` names the case in a failure.
inline void expect_gpu_matches_cpu(Engine& cpu, Engine& gpu, std::vector<HostTensor>& in, double rel, const std::string& where,
                                   size_t out_elems = 1 << 22) {
  auto want = run(cpu, in, out_elems);
  ASSERT_TRUE(want) << want.status().to_string();
  auto got = run(gpu, in, out_elems);
  ASSERT_TRUE(got) << got.status().to_string();
  ASSERT_EQ(got.value().size(), want.value().size());
  for (size_t i = 0; i < want.value().size(); ++i) {
    EXPECT_EQ(compare(got.value()[i], want.value()[i], rel), "") << "output " << i << " " << where;
  }
}

// One graph, CPU vs CUDA on the same random inputs at several shapes.
struct OpCase {
  std::string name;
  Graph g;
  std::vector<std::vector<std::vector<int64_t>>> runs;  // per run: dims of each input
};

// `gpu_graph`: the graph built for the GPU (default c.g; a copy with a forced tactic).
inline void check_case(const OpCase& c, Tol tol, Precision p = Precision::kFP32, bool tf32 = false, const Graph* gpu_graph = nullptr,
                bool time_tactics = true) {
  SCOPED_TRACE(c.name + " " + tol.name);
  auto cpu_e = build_graph(c.g, options("cpu"));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  BuildOptions go = options("cuda", p, tf32);
  go.time_tactics = time_tactics;
  auto gpu_e = build_graph(gpu_graph ? *gpu_graph : c.g, go);
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  uint32_t seed = 7;
  for (const auto& dims : c.runs) {
    std::vector<HostTensor> in;
    for (const auto& d : dims) in.push_back(random_tensor(d, seed++, 1.5f));
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), in, tol.rel, "at input " + dstr(dims[0]));
  }
}
inline fs::path model_fixtures() {
  if (const char* d = std::getenv("TS_ENGINE_FIXTURES")) return d;
  return fs::path(TICKSENTRY_BINARY_DIR) / "engine-fixtures";
}

inline std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Inputs in the range the model was trained on: its own input normalization (norm.mean,
// norm.inv_std) inverted, mean ± a few σ per feature. Features with zero variance in training
// (inv_std 1e6) stay at their mean: random values there become ±1e6 after normalization, past
// FP16's 65504 (an FP16 engine, TensorRT's too, overflows on inputs it never sees), and TF32's
// 10-bit mantissa turns them into absolute errors of ~1e3 in the first GEMM. FP32 is checked on
// plain random inputs too. in_model_range() maps a random normal tensor into that range.
inline std::vector<std::pair<float, float>> default_model_input_range(const fs::path& onnx) {
  std::vector<std::pair<float, float>> affine;
  auto g = import_onnx_file(onnx.string());
  if (!g) return affine;
  ValueId mean = g.value().find_value("norm.mean"), inv = g.value().find_value("norm.inv_std");
  if (mean == kNoValue || inv == kNoValue) return affine;
  const Value& m = g.value().value(mean);
  const Value& s = g.value().value(inv);
  for (int64_t f = 0; f < m.numel() && f < s.numel(); ++f) {
    float is = s.as<float>()[f];
    affine.emplace_back(m.as<float>()[f], is > 0 && is < 1e5f ? 2.0f / is : 0.0f);
  }
  return affine;
}

inline void in_model_range(HostTensor& x, const std::vector<std::pair<float, float>>& affine) {
  float* v = x.f();
  const int64_t f = x.dims.back();
  for (int64_t i = 0; i < x.numel(); ++i) v[i] = affine[size_t(i % f)].first + affine[size_t(i % f)].second * v[i];
}

// `onnx` built for the CPU and the CUDA backend (profile batch 1..512, seq 30..120, opt 64×60),
// compared at several shapes on one context each; x is [batch, seq, features], random normal
// × 2, or offset[f] + scale[f] · random normal when `affine` holds (offset, scale) per feature.
inline void check_model_file(const fs::path& onnx, int64_t features, Precision p, bool tf32, Tol tol,
                             const std::vector<std::pair<float, float>>& affine = {}) {
  SCOPED_TRACE(onnx.string() + " " + tol.name);
  if (!fs::exists(onnx)) GTEST_SKIP() << onnx << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)";
  auto bytes = read_bytes(onnx);
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 30, features}, {64, 60, features}, {512, 120, features}};
  BuildOptions co = options("cpu");
  co.profiles = {prof};
  BuildOptions go = options("cuda", p, tf32);
  go.profiles = {prof};
  auto cpu_plan = build(bytes, co);
  ASSERT_TRUE(cpu_plan) << cpu_plan.status().to_string();
  auto gpu_plan = build(bytes, go);
  ASSERT_TRUE(gpu_plan) << gpu_plan.status().to_string();
  auto ce = Engine::load(cpu_plan.value());
  auto ge = Engine::load(gpu_plan.value());
  ASSERT_TRUE(ce && ge) << ge.status().to_string();
  EXPECT_GT(ge.value()->device_memory_bytes(), 0);
  EXPECT_NE(ge.value()->describe().find("backend cuda (sm_"), std::string::npos);
  auto cctx = ce.value()->create_context();
  auto gctx = ge.value()->create_context();
  ASSERT_TRUE(cctx && gctx);
  // Same shape three times (eager, graph capture, graph replay), another shape, back again.
  const std::vector<std::pair<int64_t, int64_t>> shapes{{1, 60}, {1, 60}, {1, 60}, {7, 30}, {300, 120}, {300, 120},
                                                        {1, 60}, {64, 60}, {64, 60}, {64, 60}};
  uint32_t seed = 100;
  for (auto [b, t] : shapes) {
    HostTensor x = random_tensor({b, t, features}, seed++, affine.empty() ? 2.0f : 1.0f);
    if (!affine.empty()) in_model_range(x, affine);
    std::vector<TensorView> in{x.view()};
    std::vector<float> yc(size_t(b * t * 8)), yg(size_t(b * t * 8), NAN);
    std::vector<TensorView> oc(1), og(1);
    oc[0].data = yc.data();
    og[0].data = yg.data();
    oc[0].capacity_bytes = og[0].capacity_bytes = yc.size() * sizeof(float);
    ASSERT_TRUE(cctx.value()->execute(in, oc));
    Status s = gctx.value()->execute(in, og);
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(og[0].dims, oc[0].dims);
    yc.resize(size_t(shape_numel(oc[0].dims)));
    yg.resize(yc.size());
    EXPECT_EQ(compare(yg, yc, tol.rel), "") << "batch " << b << " seq " << t;
  }
}

// A fixture of models/fixtures.py (x: [batch, seq, 32]).
inline void check_model(const std::string& name, Precision p, bool tf32, Tol tol) {
  check_model_file(model_fixtures() / name / "model.onnx", 32, p, tf32, tol);
}

// X [T, B, I] (and initial_h [1, B, H] when with_h0) → GRU/LSTM → Y, Y_h (and Y_c), random
// weights from `seed`.
inline Graph rnn_graph(bool lstm, int64_t h, int64_t in, int lbr, bool peep, bool with_h0, uint32_t seed) {
  GraphBuilder b;
  const int64_t g = lstm ? 4 : 3;
  ValueId x = b.input("x", sym({"seq", "batch", ""}, {0, 0, in}));
  ValueId h0 = with_h0 ? b.input("h0", sym({"", "batch", ""}, {1, 0, h})) : kNoValue;
  float sc = 1.0f / std::sqrt(float(h));
  ValueId w = b.constant("W", {1, g * h, in}, random_vec(size_t(g * h * in), seed, sc));
  ValueId r = b.constant("R", {1, g * h, h}, random_vec(size_t(g * h * h), seed + 1, sc));
  ValueId bias = b.constant("B", {1, 2 * g * h}, random_vec(size_t(2 * g * h), seed + 2, sc));
  ValueId y = b.value("y"), yh = b.value("yh"), yc = b.value("yc");
  std::vector<ValueId> ins{x, w, r, bias, kNoValue, h0};
  std::vector<ValueId> outs{y, yh};
  if (lstm) {
    ins.push_back(kNoValue);  // initial_c
    ins.push_back(peep ? b.constant("P", {1, 3 * h}, random_vec(size_t(3 * h), seed + 3, 0.5f)) : kNoValue);
    outs.push_back(yc);
  }
  Node& n = b.node(lstm ? "LSTM" : "GRU", ins, outs);
  n.attrs["hidden_size"] = h;
  if (!lstm) n.attrs["linear_before_reset"] = int64_t(lbr);
  for (ValueId o : outs) b.output(o);
  return b.g;
}

// One profile for rnn_graph()'s inputs: X [T, B, I] with T 1..120 (opt opt_t) and B 1..max_batch
// (opt opt_b), and initial_h [1, B, H] where the graph has it.
inline BuildOptions rnn_options(const Graph& g, const std::string& backend, Precision p, int64_t opt_t, int64_t opt_b,
                                int64_t max_batch) {
  BuildOptions o = options(backend, p);
  OptimizationProfile prof;
  const int64_t in = g.value(g.inputs[0]).shape[2].value;
  prof.inputs["x"] = ShapeRange{{1, 1, in}, {opt_t, opt_b, in}, {120, max_batch, in}};
  if (g.inputs.size() > 1) {
    const int64_t h = g.value(g.inputs[1]).shape[2].value;
    prof.inputs["h0"] = ShapeRange{{1, 1, h}, {1, opt_b, h}, {1, max_batch, h}};
  }
  o.profiles = {prof};
  return o;
}

}  // namespace ts::engine::testing
