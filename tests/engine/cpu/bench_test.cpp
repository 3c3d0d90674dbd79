// run_bench (engine/bench.h) on the cpu backend: the statistics it reports, the iterations and
// duration it honours, the plan facts it reads, and the options it refuses. The device phase
// (H2D / compute / D2H, --useCudaGraph, page-locked vs pageable) is tested on the GPU
// (tests/engine/cuda/cuda_bench_test.cpp).
#include <gtest/gtest.h>

#include <thread>

#include "engine/bench.h"
#include "engine/builder.h"
#include "graph_builder.h"
#include "test_data.h"

namespace ts::engine::testing {
namespace {

// x [batch,16] → FusedGemm(relu) [batch,24].
std::shared_ptr<Engine> gemm_engine() {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::known(16)});
  auto w = b.constant("W", {16, 24}, random_vec(16 * 24, 1, 0.5f));
  auto bias = b.constant("bias", {24}, random_vec(24, 2));
  auto y = b.value("y");
  auto& g = b.node("FusedGemm", {x, w, bias}, {y});
  g.name = "/fc/Gemm";
  g.attrs["activation"] = std::string("relu");
  g.attrs["trans_b"] = int64_t(0);
  b.output(y);
  b.g.opset = 17;
  BuildOptions o;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 16}, {8, 16}, {64, 16}};
  o.profiles.push_back(p);
  auto plan = build_from_graph(b.g, PassLog{}, o);
  EXPECT_TRUE(plan) << plan.status().to_string();
  auto e = Engine::load(plan.value());
  EXPECT_TRUE(e) << e.status().to_string();
  return e.value();
}

TEST(BenchStats, NearestRankPercentilesMinMaxMean) {
  std::vector<double> us;
  for (int i = 100; i >= 1; --i) us.push_back(double(i));  // any order
  const LatencyStats s = latency_stats(us, {0, 50, 90, 99, 99.9, 100, 101, -1});
  EXPECT_EQ(s.count, 100);
  EXPECT_EQ(s.min_us, 1);
  EXPECT_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
  EXPECT_EQ(s.median_us, 50);
  ASSERT_EQ(s.percentiles.size(), 6u) << "101 and -1 are left out";
  EXPECT_EQ(s.percentiles[0], (std::pair<double, double>{0, 1}));
  EXPECT_EQ(s.percentiles[2], (std::pair<double, double>{90, 90}));
  EXPECT_EQ(s.percentiles[3], (std::pair<double, double>{99, 99}));
  EXPECT_EQ(s.percentiles[4], (std::pair<double, double>{99.9, 100}));
  EXPECT_EQ(latency_stats({}, {50}).count, 0);
}

TEST(BenchStats, LayersAndPrecisionFromDescribe) {
  const std::string d =
      "backend cuda (sm_90), precision fp16, plan format 3\n"
      "memory: weights 10 bytes\n"
      "layers (2):\n"
      "  [0] GRUStack /gru/GRU tactic=wave_split precision=fp16 fused_from=[/gru/GRU, /gru/GRU_1]\n"
      "  [1] FusedGemm /head/Gemm tactic=default precision=fp32\n"
      "passes:\n"
      "  [x] not a layer line\n";
  const auto layers = describe_layers(d);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].index, 0);
  EXPECT_EQ(layers[0].op, "GRUStack");
  EXPECT_EQ(layers[0].name, "/gru/GRU");
  EXPECT_EQ(layers[0].tactic, "wave_split");
  EXPECT_EQ(layers[0].precision, "fp16");
  EXPECT_EQ(layers[1].tactic, "default");
  EXPECT_EQ(layers[1].precision, "fp32");
  EXPECT_EQ(describe_precision(d), "fp16");
  EXPECT_EQ(describe_precision("no first line here"), "");
}

TEST(Bench, HonoursIterationsDurationAndPercentiles) {
  auto e = gemm_engine();
  BenchOptions o;
  o.shapes["x"] = {4, 16};
  o.warm_up_ms = 0;
  o.duration_s = 0;
  o.iterations = 25;
  o.percentiles = {50, 99.9};
  auto r = run_bench(*e, o);
  ASSERT_TRUE(r) << r.status().to_string();
  EXPECT_EQ(r.value().host_to_host.count, 25);
  EXPECT_GE(r.value().warm_up_calls, 3) << "a shape's first calls run eagerly, then its graph is captured";
  ASSERT_EQ(r.value().host_to_host.percentiles.size(), 2u);
  EXPECT_LE(r.value().host_to_host.min_us, r.value().host_to_host.median_us);
  EXPECT_LE(r.value().host_to_host.median_us, r.value().host_to_host.percentiles[1].second);
  EXPECT_GT(r.value().throughput_per_s, 0);
  EXPECT_EQ(r.value().batch, 4);
  EXPECT_EQ(r.value().backend, "cpu");
  EXPECT_EQ(r.value().precision, "fp32");
  ASSERT_EQ(r.value().layers.size(), 1u);
  EXPECT_EQ(r.value().layers[0].op, "FusedGemm");
  EXPECT_FALSE(r.value().device_timed);
  EXPECT_NE(r.value().device_note.find("no device"), std::string::npos) << r.value().device_note;
  EXPECT_GT(r.value().context_memory_bytes, 0) << "the context holds its intermediates";

  o.iterations = 1;
  o.duration_s = 0.2;
  auto timed = run_bench(*e, o);
  ASSERT_TRUE(timed);
  EXPECT_GE(timed.value().wall_s, 0.2);
  EXPECT_GT(timed.value().host_to_host.count, 1);
}

TEST(Bench, RefusesWhatItCannotMeasure) {
  auto e = gemm_engine();
  BenchOptions o;
  o.warm_up_ms = 0;
  o.duration_s = 0;
  auto no_shape = run_bench(*e, o);
  ASSERT_FALSE(no_shape);
  EXPECT_NE(no_shape.status().message().find("--shapes x:"), std::string::npos) << no_shape.status().message();
  o.shapes["x"] = {4, 16};
  o.shapes["z"] = {1};
  auto unknown = run_bench(*e, o);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.status().message().find("no input named z"), std::string::npos);
  o.shapes.erase("z");
  o.shapes["x"] = {65, 16};
  auto outside = run_bench(*e, o);
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.status().message().find("outside profile"), std::string::npos) << outside.status().message();
  o.shapes["x"] = {4, 16};
  o.percentiles = {120};
  EXPECT_FALSE(run_bench(*e, o));
  o.percentiles = {50};
  o.iterations = 0;
  EXPECT_FALSE(run_bench(*e, o));
}

TEST(Bench, CudaGraphFlagIsPerThreadAndRestored) {
  EXPECT_TRUE(cuda_graphs_for_this_thread()) << "contexts replay graphs unless told otherwise";
  set_cuda_graphs_for_this_thread(false);
  bool other = false;
  std::thread([&] { other = cuda_graphs_for_this_thread(); }).join();
  EXPECT_TRUE(other) << "another thread's contexts are not affected";
  set_cuda_graphs_for_this_thread(true);
  auto e = gemm_engine();
  BenchOptions o;
  o.shapes["x"] = {2, 16};
  o.warm_up_ms = 0;
  o.duration_s = 0;
  o.use_cuda_graph = false;
  ASSERT_TRUE(run_bench(*e, o));
  EXPECT_TRUE(cuda_graphs_for_this_thread()) << "run_bench restores the thread's setting";
}

}  // namespace
}  // namespace ts::engine::testing
