// Builder → plan bytes → Engine → ExecutionContext, and every way a plan or a request is refused.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "engine/builder.h"
#include "engine/device_share.h"
#include "engine/passes/passes.h"
#include "engine/plan.h"
#include "engine/runtime.h"
#include "graph_builder.h"
#include "test_data.h"

namespace ts::engine::testing {
namespace {

// x [batch,16] → FusedGemm(relu) [batch,24] → Softmax.
Graph mlp_graph() {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::known(16)});
  auto w = b.constant("W", {16, 24}, random_vec(16 * 24, 1, 0.5f));
  auto bias = b.constant("bias", {24}, random_vec(24, 2));
  auto h = b.value("h"), y = b.value("y");
  auto& g = b.node("FusedGemm", {x, w, bias}, {h});
  g.name = "/fc/Gemm";
  g.attrs["activation"] = std::string("relu");
  g.attrs["trans_b"] = int64_t(0);
  g.fused_from = {"/fc/Gemm", "/fc/Relu"};
  b.node("Softmax", {h}, {y}).attrs["axis"] = int64_t(-1);
  b.output(y);
  b.g.opset = 17;
  return b.g;
}

BuildOptions small_profile() {
  BuildOptions o;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 16}, {8, 16}, {1024, 16}};
  o.profiles.push_back(p);
  return o;
}

std::vector<uint8_t> build_mlp(const BuildOptions& o = small_profile()) {
  auto plan = build_from_graph(mlp_graph(), PassLog{{"fuse: FusedGemm /fc/Gemm ← [/fc/Gemm, /fc/Relu]"}}, o);
  EXPECT_TRUE(plan) << plan.status().to_string();
  return plan ? plan.value() : std::vector<uint8_t>{};
}

std::vector<float> naive_mlp(const HostTensor& x) {
  auto w = random_vec(16 * 24, 1, 0.5f), bias = random_vec(24, 2);
  int64_t m = x.dims[0];
  std::vector<float> y(size_t(m * 24));
  for (int64_t i = 0; i < m; ++i) {
    double row[24], mx = -1e30, sum = 0;
    for (int j = 0; j < 24; ++j) {
      double s = bias[size_t(j)];
      for (int k = 0; k < 16; ++k) s += x.f()[i * 16 + k] * w[size_t(k * 24 + j)];
      row[j] = std::max(s, 0.0);
      mx = std::max(mx, row[j]);
    }
    for (double& v : row) { v = std::exp(v - mx); sum += v; }
    for (int j = 0; j < 24; ++j) y[size_t(i * 24 + j)] = float(row[j] / sum);
  }
  return y;
}

TEST(EnginePlan, RoundTripRunsAndDescribes) {
  auto bytes = build_mlp();
  auto engine = Engine::load(bytes);
  ASSERT_TRUE(engine) << engine.status().to_string();
  EXPECT_EQ(engine.value()->backend(), "cpu");
  ASSERT_EQ(engine.value()->inputs().size(), 1u);
  EXPECT_EQ(shape_to_string(engine.value()->inputs()[0].shape), "[batch,16]");
  auto ctx = engine.value()->create_context();
  ASSERT_TRUE(ctx);
  for (int64_t batch : {1, 7, 64, 7}) {
    HostTensor x = random_tensor({batch, 16}, uint32_t(batch));
    std::vector<float> y(size_t(batch * 24));
    std::vector<TensorView> in = {x.view()};
    std::vector<TensorView> out = {TensorView{DType::kF32, {batch, 24}, y.data()}};
    ASSERT_TRUE(ctx.value()->execute(in, out));
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{batch, 24}));
    auto want = naive_mlp(x);
    expect_close(y.data(), want.data(), batch * 24, 1e-5f, 1e-7f, "mlp batch " + std::to_string(batch));
  }
  std::string d = engine.value()->describe();
  EXPECT_NE(d.find("FusedGemm /fc/Gemm tactic="), std::string::npos) << d;
  EXPECT_NE(d.find("fused_from=[/fc/Gemm, /fc/Relu]"), std::string::npos) << d;
  EXPECT_NE(d.find("precision=fp32"), std::string::npos) << d;
  EXPECT_NE(d.find("tactic: /fc/Gemm (FusedGemm)"), std::string::npos) << d;
  EXPECT_GT(engine.value()->device_memory_bytes(), 0);
}

Status load_error(std::span<const uint8_t> b) {
  auto e = Engine::load(b);
  return e ? Status::ok() : e.status();
}

TEST(EnginePlan, EveryCorruptionIsRefusedWithItsReason) {
  auto good = build_mlp();
  ASSERT_FALSE(good.empty());
  EXPECT_EQ(load_error({}).message(), "loading plan: empty plan");
  auto m = good;
  m[0] = 'X';
  EXPECT_EQ(load_error(m).message(), "loading plan: not a ticksentry plan (wrong magic)");
  m = good;
  m[8] = 9;
  EXPECT_EQ(load_error(m).message(), "loading plan: plan format version 9 is not supported (this build reads versions 1 to 4; "
            "the plan was made by a newer build)");
  m = good;
  m.resize(m.size() - 100);
  EXPECT_EQ(load_error(m).message(), "loading plan: plan checksum mismatch (corrupt or truncated plan)");
  m = good;
  m[m.size() / 2] ^= 0x10;
  EXPECT_EQ(load_error(m).message(), "loading plan: plan checksum mismatch (corrupt or truncated plan)");
  m = std::vector<uint8_t>(good.begin(), good.begin() + 12);
  EXPECT_EQ(load_error(m).message(), "loading plan: truncated plan (12 bytes)");

  auto plan = deserialize_plan(good);
  ASSERT_TRUE(plan);
  Plan p = plan.value();
  p.backend = "tpu";  // ("cuda" exists in CUDA builds: tests/engine/cuda covers its refusals)
  EXPECT_EQ(load_error(serialize_plan(p)).message(),
            "loading plan: plan was built for backend 'tpu', which this build does not have");
  p = plan.value();
  p.target_arch = "x86-64-v4";
  EXPECT_NE(load_error(serialize_plan(p)).message().find("plan was built for cpu arch x86-64-v4, this machine is x86-64-v3"),
            std::string::npos);
  // Valid checksum, inconsistent graph: a node reads a value nobody produces.
  p = plan.value();
  p.graph.nodes[1].inputs[0] = p.graph.outputs[0];
  EXPECT_NE(load_error(serialize_plan(p)).message().find("invalid plan graph"), std::string::npos);
}

TEST(EnginePlan, LoadFileNamesThePath) {
  auto e = Engine::load_file("/nonexistent/model.plan");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.status().message(), "loading plan /nonexistent/model.plan: cannot open");
}

TEST(EngineRuntime, ShapeOutsideProfileIsRefusedAtEnqueue) {
  auto engine = Engine::load(build_mlp());
  ASSERT_TRUE(engine);
  auto ctx = engine.value()->create_context();
  HostTensor x = random_tensor({2000, 16}, 1);
  std::vector<float> y(2000 * 24);
  std::vector<TensorView> in = {x.view()};
  std::vector<TensorView> out = {TensorView{DType::kF32, {2000, 24}, y.data()}};
  bool called = false;
  Status s = ctx.value()->enqueue(in, out, [&](Status) { called = true; });
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "input x: shape [2000,16] is outside profile 0 (min [1,16], max [1024,16])");
  HostTensor bad = random_tensor({2, 15}, 1);
  std::vector<TensorView> in2 = {bad.view()};
  EXPECT_EQ(ctx.value()->execute(in2, out).message(), "input x: shape [2,15] does not match [batch,16]");
  EXPECT_FALSE(called);
}

TEST(EngineRuntime, BatchBucketsOfAHugeProfileMaxStayFew) {
  // plan_fuzz found it: a profile max of 2^62 doubled x past INT64_MAX and grew the list until
  // the process ran out of memory.
  Graph g = mlp_graph();
  PassLog log;
  ASSERT_TRUE(infer_shapes(g, log));  // y gets dim 0 "batch", as in a built plan
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 16}, {8, 16}, {int64_t(1) << 62, 16}};
  auto b = batch_buckets(g, {p});
  ASSERT_EQ(b.size(), 63u);
  EXPECT_EQ(b.front(), 1);
  EXPECT_EQ(b[61], int64_t(1) << 61);
  EXPECT_EQ(b.back(), int64_t(1) << 62);
  p.inputs["x"].max[0] = INT64_MAX;
  EXPECT_EQ(batch_buckets(g, {p}).size(), 64u);
}

TEST(EngineRuntime, AsyncEnqueueCallsDoneOnceWithResults) {
  auto engine = Engine::load(build_mlp());
  ASSERT_TRUE(engine);
  auto ctx = engine.value()->create_context();
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  const int kJobs = 8;
  std::vector<HostTensor> xs;
  std::vector<std::vector<float>> ys(kJobs, std::vector<float>(5 * 24));
  std::vector<std::vector<TensorView>> outs(kJobs);
  for (int i = 0; i < kJobs; ++i) xs.push_back(random_tensor({5, 16}, uint32_t(100 + i)));
  for (int i = 0; i < kJobs; ++i) {
    std::vector<TensorView> in = {xs[size_t(i)].view()};
    outs[size_t(i)] = {TensorView{DType::kF32, {5, 24}, ys[size_t(i)].data()}};
    ASSERT_TRUE(ctx.value()->enqueue(in, outs[size_t(i)], [&](Status s) {
      EXPECT_TRUE(s) << s.to_string();
      std::lock_guard<std::mutex> lk(mu);
      ++done;
      cv.notify_all();
    }));
  }
  std::unique_lock<std::mutex> lk(mu);
  ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return done == kJobs; }));
  for (int i = 0; i < kJobs; ++i) {
    auto want = naive_mlp(xs[size_t(i)]);
    expect_close(ys[size_t(i)].data(), want.data(), 5 * 24, 1e-5f, 1e-7f, "async job");
    EXPECT_EQ(outs[size_t(i)][0].dims, (std::vector<int64_t>{5, 24}));
  }
}

// The executor's shape buckets (and the builder's timing executor's): powers of two up to the
// smallest profile maximum, only where every input and output has the same symbolic dim 0.
TEST(EngineRuntime, BatchBucketsFollowTheSmallestProfileMaxAndNeedOneBatchSymbol) {
  Graph g = mlp_graph();
  for (ValueId id : g.outputs) {
    g.value(id).shape = Shape{Dim::sym("batch"), Dim::known(24)};
    g.value(id).rank_known = true;
  }
  OptimizationProfile a, b;
  a.inputs["x"] = ShapeRange{{1, 16}, {8, 16}, {3000, 16}};
  b.inputs["x"] = ShapeRange{{1, 16}, {8, 16}, {1000, 16}};
  EXPECT_EQ(batch_buckets(g, {a}), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3000}));
  EXPECT_EQ(batch_buckets(g, {a, b}), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000}));
  Graph other = g;
  other.value(other.outputs[0]).shape = Shape{Dim::sym("rows"), Dim::known(24)};
  EXPECT_TRUE(batch_buckets(other, {a}).empty()) << "an output on another symbol must turn the buckets off";
  Graph unknown = mlp_graph();  // outputs without inferred shapes
  EXPECT_TRUE(batch_buckets(unknown, {a}).empty());
}

TEST(EngineBuilder, UnsupportedOpNamesNodeAndOp) {
  Graph g = mlp_graph();
  g.nodes[1].op = "NonMaxSuppression";
  g.nodes[1].name = "/head/NMS";
  auto plan = build_from_graph(g, PassLog{}, small_profile());
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.status().message(), "building: node /head/NMS: op NonMaxSuppression is not supported by the cpu backend");
}

TEST(EngineBuilder, PrecisionsTheCpuCannotRunAreRefused) {
  BuildOptions o = small_profile();
  o.precision = Precision::kFP16;
  auto r = build_from_graph(mlp_graph(), PassLog{}, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "building: fp16 is not supported by the cpu backend (use --backend cuda)");
  o.precision = Precision::kINT8;
  EXPECT_EQ(build_from_graph(mlp_graph(), PassLog{}, o).status().message(),
            "building: int8 is not supported by the cpu backend (use --backend cuda)");
  // bf16 (BF16 recurrent weights, FP32 math) needs AVX2+FMA; an MLP then stays FP32 throughout.
  o.precision = Precision::kBF16;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    auto plan = build_from_graph(mlp_graph(), PassLog{}, o);
    ASSERT_TRUE(plan) << plan.status().to_string();
    auto e = Engine::load(plan.value());
    ASSERT_TRUE(e) << e.status().to_string();
    const std::string d = e.value()->describe();
    EXPECT_NE(d.find("precision bf16"), std::string::npos) << d;
    EXPECT_EQ(d.find("precision=bf16"), std::string::npos) << "no MLP layer computes in bf16 on the cpu:\n" << d;
  } else {
    EXPECT_EQ(build_from_graph(mlp_graph(), PassLog{}, o).status().message(),
              "building: bf16 on the cpu backend needs AVX2 and FMA, which this CPU lacks");
  }
  o.precision = Precision::kFP32;
  o.backend = "tpu";
  std::string have;  // "cpu", or "cpu, cuda" in builds with the CUDA backend
  for (const auto& name : backend_names()) {
    if (!have.empty()) have += ", ";
    have += name;
  }
  EXPECT_EQ(build_from_graph(mlp_graph(), PassLog{}, o).status().message(),
            "building: unknown backend 'tpu' (this build has: " + have + ")");
}

TEST(EngineBuilder, TimingCacheMakesTheRebuildSkipTiming) {
  std::string path = std::string(TICKSENTRY_BINARY_DIR) + "/engine_cpu_timing_cache.txt";
  std::remove(path.c_str());
  BuildOptions o = small_profile();
  o.timing_cache_path = path;
  auto first = Engine::load(build_mlp(o));
  ASSERT_TRUE(first);
  EXPECT_NE(first.value()->describe().find("timing cache: 0 hits, 2 timed"), std::string::npos) << first.value()->describe();
  std::ifstream f(path);
  std::string line;
  int lines = 0;
  while (std::getline(f, line)) {
    EXPECT_EQ(line.rfind("cpu|", 0), 0u) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 2);  // avx2 and onednn for the one FusedGemm
  auto second = Engine::load(build_mlp(o));
  ASSERT_TRUE(second);
  EXPECT_NE(second.value()->describe().find("timing cache: 2 hits, 0 timed"), std::string::npos);
  // Another precision is timed afresh, not served the FP32 times.
  o.precision = Precision::kBF16;
  auto third = Engine::load(build_mlp(o));
  ASSERT_TRUE(third) << third.status().to_string();
  EXPECT_NE(third.value()->describe().find("timing cache: 0 hits, 2 timed"), std::string::npos) << third.value()->describe();
  std::remove(path.c_str());
}

TEST(EngineBuilder, ProfileOutsideTheModelIsRefused) {
  BuildOptions o;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 16}, {8, 16}, {4, 16}};
  o.profiles.push_back(p);
  auto r = build_from_graph(mlp_graph(), PassLog{}, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "building: profile 0 input x: needs 0 <= min <= opt <= max on axis 0");
}

// A server's worker threads each say how many contexts share the device; the setting is the
// calling thread's (graphs are captured on the thread that runs them) and never below 1.
TEST(DeviceShare, IsPerThreadAndAtLeastOne) {
  EXPECT_EQ(device_contexts_for_this_thread(), 1);
  set_device_contexts_for_this_thread(8);
  EXPECT_EQ(device_contexts_for_this_thread(), 8);
  int other = 0;
  std::thread([&] { other = device_contexts_for_this_thread(); }).join();
  EXPECT_EQ(other, 1);
  set_device_contexts_for_this_thread(0);
  EXPECT_EQ(device_contexts_for_this_thread(), 1);
}

}  // namespace
}  // namespace ts::engine::testing
