// The stacked-LSTM wavefront (LSTMStack node, tactics "wave", "wave3" and "wave_split",
// cuda_lstm_wave.cu) against the CPU backend, and the fusion that makes the node
// (passes/fuse_rnn_stack.cpp, shared with GRUStack).
//
// The pass tests run everywhere; the kernel tests are labelled `gpu` with the rest of the CUDA
// tests and skip with the reason where no CUDA device is present.
#include <algorithm>
#include <cstdio>

#include "engine/backends/cuda/cuda_lstm_wave.h"
#include "engine/passes/passes.h"
#include "rnn_stack_test_util.h"

namespace ts::engine::testing {
namespace {

// X [T, B, I] → LSTM₁ → Squeeze(axis 1) → LSTM₂ → Y, Y_h, Y_c, as PyTorch exports
// nn.LSTM(num_layers=2); `peepholes`: layer 2 with P (PyTorch never exports them).
Graph stacked_lstm(int64_t h, int64_t in, uint32_t seed, bool peepholes = false) {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"seq", "batch", ""}, {0, 0, in}));
  const auto [w1, r1, b1, w2, r2, b2] = stack_weights(b, 4, h, in, seed);
  ValueId axes = b.constant_i64("axes", {1});
  ValueId y1 = b.value("y1"), yh1 = b.value("yh1"), yc1 = b.value("yc1"), y1s = b.value("y1s");
  ValueId y = b.value("y"), yh = b.value("yh"), yc = b.value("yc");
  Node& l1 = b.node("LSTM", {x, w1, r1, b1}, {y1, yh1, yc1});
  l1.name = "/rnn/LSTM";
  Node& sq = b.node("Squeeze", {y1, axes}, {y1s});
  sq.name = "/rnn/Squeeze";
  std::vector<ValueId> in2{y1s, w2, r2, b2};
  if (peepholes) {
    in2.resize(7, kNoValue);
    in2.push_back(b.constant("P2", {1, 3 * h}, random_vec(size_t(3 * h), seed + 6, 0.1f)));
  }
  Node& l2 = b.node("LSTM", in2, {y, yh, yc});
  l2.name = "/rnn/LSTM_1";
  for (Node* n : {&b.g.nodes[0], &b.g.nodes[2]}) n->attrs["hidden_size"] = h;
  b.output(y);
  b.output(yh);
  b.output(yc);
  return b.g;
}

Graph lstm_with_io(int64_t h, int64_t in, int64_t outs, uint32_t seed, bool also_out = false, bool yc_out = false) {
  return stack_classifier("LSTM", h, in, outs, seed, also_out, yc_out);
}

int fuse(Graph& g) {
  PassLog log;
  return fuse_rnn_stack(g, log, [](const Node&) { return true; });
}

// --- the pass (no device) ---------------------------------------------------------------------

TEST(FuseLstmStack, TwoStackedLstmsBecomeOneNodeWhereTheBackendRunsIt) {
  Graph g = stacked_lstm(64, 20, 3);
  PassLog log;
  EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "LSTMStack");
  EXPECT_EQ(f.name, "/rnn/LSTM");
  EXPECT_EQ(f.fused_from, (std::vector<std::string>{"/rnn/LSTM", "/rnn/Squeeze", "/rnn/LSTM_1"}));
  ASSERT_EQ(f.inputs.size(), 7u);
  EXPECT_EQ(g.value(f.inputs[0]).name, "x");
  EXPECT_EQ(g.value(f.inputs[4]).name, "W2");
  EXPECT_EQ(g.value(f.inputs[6]).name, "B2");
  ASSERT_EQ(f.outputs.size(), 3u);
  EXPECT_EQ(g.value(f.outputs[0]).name, "y");
  EXPECT_EQ(g.value(f.outputs[2]).name, "yc");
  EXPECT_EQ(f.attr_i("hidden_size", 0), 64);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("LSTMStack /rnn/LSTM"), std::string::npos) << log.lines[0];
}

TEST(FuseLstmStack, LeavesLayersAloneWhenTheyCannotBeFused) {
  {  // the backend does not run LSTMStack (the CPU backend)
    Graph g = stacked_lstm(64, 20, 3);
    PassLog log;
    EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return false; }), 0);
    EXPECT_EQ(count_op(g, "LSTM"), 2);
  }
  {  // layer 1's Y_c is a graph output
    Graph g = stacked_lstm(64, 20, 3);
    g.outputs.push_back(g.nodes[0].outputs[2]);
    EXPECT_EQ(fuse(g), 0);
  }
  {  // layer 1's Y_h is used
    Graph g = stacked_lstm(64, 20, 3);
    g.outputs.push_back(g.nodes[0].outputs[1]);
    EXPECT_EQ(fuse(g), 0);
  }
  {  // peepholes on layer 2
    Graph g = stacked_lstm(64, 20, 3, true);
    EXPECT_EQ(fuse(g), 0);
  }
  {  // the layers differ in an attribute
    Graph g = stacked_lstm(64, 20, 3);
    g.nodes[2].attrs["input_forget"] = int64_t(1);
    EXPECT_EQ(fuse(g), 0);
  }
  {  // an LSTM over a GRU is no stack
    Graph g = stacked_lstm(64, 20, 3);
    g.nodes[0].op = "GRU";
    EXPECT_EQ(fuse(g), 0);
  }
  {  // the same per-layer tactic carries over as "layers:<t>", "wave" as is
    Graph g = stacked_lstm(64, 20, 3);
    g.nodes[0].tactic = g.nodes[2].tactic = "mma";
    ASSERT_EQ(fuse(g), 1);
    EXPECT_EQ(g.nodes[0].tactic, "layers:mma");
    Graph w = stacked_lstm(64, 20, 3);
    w.nodes[0].tactic = w.nodes[2].tactic = "wave";
    ASSERT_EQ(fuse(w), 1);
    EXPECT_EQ(w.nodes[0].tactic, "wave");
    Graph w3 = stacked_lstm(64, 20, 3);
    w3.nodes[0].tactic = w3.nodes[2].tactic = "wave3";
    ASSERT_EQ(fuse(w3), 1);
    EXPECT_EQ(w3.nodes[0].tactic, "wave3");
    Graph ws = stacked_lstm(64, 20, 3);
    ws.nodes[0].tactic = ws.nodes[2].tactic = "wave_split";
    ASSERT_EQ(fuse(ws), 1);
    EXPECT_EQ(ws.nodes[0].tactic, "wave_split");
  }
}

// The model's input Transpose and head (last step → Gemm → Sigmoid) go into the LSTMStack node.
TEST(FuseLstmStack, TakesInTheInputTransposeAndTheHead) {
  Graph g = lstm_with_io(64, 20, 1, 3);
  PassLog log;
  ASSERT_TRUE(run_passes(g, log));
  EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
  ASSERT_EQ(g.nodes.size(), 1u) << "nodes left: " << g.nodes.size();
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "LSTMStack");
  ASSERT_EQ(f.inputs.size(), 9u);
  EXPECT_EQ(g.value(f.inputs[0]).name, "x");
  EXPECT_EQ(g.value(f.inputs[7]).name, "HW");
  EXPECT_EQ(g.value(f.inputs[8]).name, "HB");
  EXPECT_EQ(f.attr_i("x_batch_first", 0), 1);
  EXPECT_EQ(f.attr_i("head_trans_b", 0), 1);
  EXPECT_EQ(f.attr_s("head_activation", ""), "sigmoid");
  ASSERT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(g.value(f.outputs[0]).name, "out");
  EXPECT_EQ(f.fused_from.size(), 8u);  // LSTM, Squeeze, LSTM, Transpose, Squeeze, Transpose, Gather, Gemm+Sigmoid
}

// Where the transposed Y, or layer 2's Y_c, is also a graph output the head stays (the input
// Transpose still goes).
TEST(FuseLstmStack, KeepsTheHeadWhenItsValuesAreUsedElsewhere) {
  for (const bool yc_out : {false, true}) {
    SCOPED_TRACE(yc_out ? "Y_c is a graph output" : "the transposed Y is a graph output");
    Graph g = lstm_with_io(64, 20, 1, 3, !yc_out, yc_out);
    PassLog log;
    ASSERT_TRUE(run_passes(g, log));
    EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
    EXPECT_EQ(count_op(g, "LSTMStack"), 1);
    EXPECT_EQ(count_op(g, "FusedGemm"), 1);
    EXPECT_EQ(count_op(g, "Transpose"), 1);  // Y's, not X's
    for (const Node& n : g.nodes) {
      if (n.op != "LSTMStack") continue;
      EXPECT_EQ(n.inputs.size(), 7u);
      EXPECT_EQ(n.outputs.size(), 3u);
      EXPECT_EQ(n.attr_i("x_batch_first", 0), 1);
      EXPECT_EQ(g.value(n.inputs[0]).name, "x");
    }
  }
}

// --- the kernel (H200) -------------------------------------------------------------------------

// The stack of two LSTM layers with `tactic` forced, against the CPU backend (rnn_stack_test_util.h).
void check_lstm_stack(const std::string& name, const Graph& g, int64_t h, int64_t in, const std::vector<std::pair<int64_t, int64_t>>& tb,
                      Tol tol, Precision p, const std::string& tactic) {
  check_stack(name, g, "LSTM", "LSTMStack", h, in, tb, tol, p, tactic, 29);
}

// Batch 1, 2, 7 (one partial 8-row cluster), 9 and 17 (a partial last 8-row tile), 64, 300
// (partial last cluster), 1000, 1200 (several waves of clusters), 2000, 2049 and 4096; with
// "wave" the n tiles per cluster are chosen by batch (lstm_wave_n_tiles; on the H200 2 at 241-480
// rows and above 720: 300 onwards here, 2049 with a partial last tile; the forced counts: the
// ForcedNTiles test below); T 5, 20, 30, 60, 120; H 128 (input 32, the models' size; input 64)
// and 64 (input 20: a partly empty k tile); FP16 and BF16.
TEST(CudaLstmWave, WavefrontMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1},    {5, 2},     {120, 7}, {30, 9},   {30, 17},  {60, 64},
                                                    {120, 300}, {20, 1000}, {5, 1200}, {60, 1200}, {5, 2000}, {5, 2049},
                                                    {5, 4096}};
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "wave");
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, {{60, 1}, {120, 7}, {60, 300}}, kBf16, Precision::kBF16,
              "wave");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {5, 2}, {120, 7}, {60, 64}, {120, 300}, {5, 1200}},
              kFp16, Precision::kFP16, "wave");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {120, 300}}, kBf16, Precision::kBF16, "wave");
  check_lstm_stack("LSTM-2x128 I=64", stacked_lstm(128, 64, 321), 128, 64, {{60, 1}, {120, 300}, {20, 1000}, {5, 2049}}, kFp16,
                   Precision::kFP16, "wave");
}

// Tactic "wave3": three CTAs per cluster (layer 1 with its own input projection, W1 in shared
// memory) at the same shapes, now up to 4096 rows (one n tile per cluster at every batch: two
// were slower, step_cost in cuda_lstm_wave.cu); input 64 has no such layout and runs the
// four-CTA one.
TEST(CudaLstmWave, ThreeCtaWavefrontMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1},   {5, 2},     {120, 7},   {30, 9},  {30, 17},  {60, 64},  {120, 300},
                                                    {20, 1000}, {5, 1200}, {60, 1200}, {5, 2000}, {5, 2049}, {5, 4096}};
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "wave3");
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, {{60, 1}, {120, 7}, {60, 300}, {5, 2049}}, kBf16,
                   Precision::kBF16, "wave3");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {5, 2}, {120, 7}, {120, 300}, {5, 1200}}, kFp16,
                   Precision::kFP16, "wave3");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {120, 300}}, kBf16, Precision::kBF16, "wave3");
  check_lstm_stack("LSTM-2x128 I=64", stacked_lstm(128, 64, 321), 128, 64, {{60, 1}, {120, 300}}, kFp16, Precision::kFP16, "wave3");
}

// The node with the model's input Transpose and head absorbed (`tactic` forced) vs the CPU
// backend on the unfused graph: with "wave" the wavefront up to kLstmWaveMaxBatch rows (all of
// the profile's), the layers one by one with the forced per-layer tactics (a transpose, the
// layers, the head kernel; in time chunks where all steps' intermediates exceed 192 MiB: 4096 ×
// 57 steps runs 4 chunks of 15, 15, 15 and 12 steps).
void check_lstm_io(const std::string& name, const Graph& g, int64_t in, const std::vector<std::pair<int64_t, int64_t>>& bt,
                   Precision p, Tol tol, const std::string& tactic = "wave") {
  SCOPED_TRACE(name + " " + tol.name + " tactic " + tactic);
  auto opts = [&](const std::string& backend, Precision pr) {
    BuildOptions o = options(backend, pr);
    OptimizationProfile prof;
    prof.inputs["x"] = ShapeRange{{1, 1, in}, {8, 60, in}, {kStackMaxBatch, 120, in}};
    o.profiles = {prof};
    return o;
  };
  auto cpu_e = build_graph(g, opts("cpu", Precision::kFP32));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  // As an ONNX build does: the passes first (Gemm + Sigmoid → FusedGemm, which the head fusion
  // looks for), then the build.
  Graph gg = g;
  PassLog log;
  ASSERT_TRUE(run_passes(gg, log));
  for (Node& n : gg.nodes)
    if (n.op == "LSTM") n.tactic = tactic;
  BuildOptions go = opts("cuda", p);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, log, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  ASSERT_EQ(pl.value().graph.nodes.size(), 1u) << "the plan should be the one LSTMStack node";
  EXPECT_EQ(pl.value().graph.nodes[0].op, "LSTMStack");
  EXPECT_EQ(pl.value().graph.nodes[0].inputs.size(), 9u);
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  uint32_t seed = 41;
  for (auto [b, t] : bt) {
    std::vector<HostTensor> ins{random_tensor({b, t, in}, seed++, 1.5f)};
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), ins, tol.rel,
                           "at [B, T] = [" + std::to_string(b) + ", " + std::to_string(t) + "]");
  }
}

TEST(CudaLstmWave, FusedInputTransposeAndHeadMatchCpu) {
  SKIP_WITHOUT_GPU();
  check_lstm_io("LSTM-2x128 I=32 head 1", lstm_with_io(128, 32, 1, 451), 32,
                {{1, 60}, {7, 120}, {17, 30}, {300, 60}, {1200, 5}, {2000, 5}, {2049, 5}, {4096, 5}, {4096, 57}}, Precision::kFP16,
                kFp16);
  check_lstm_io("LSTM-2x64 I=20 head 3", lstm_with_io(64, 20, 3, 461), 20, {{1, 60}, {37, 30}, {4096, 5}, {2000, 60}},
                Precision::kFP16, kFp16);
  check_lstm_io("LSTM-2x128 I=32 head 1", lstm_with_io(128, 32, 1, 451), 32, {{1, 60}, {300, 60}, {4096, 57}}, Precision::kBF16,
                kBf16);
  check_lstm_io("LSTM-2x128 I=32 head 1", lstm_with_io(128, 32, 1, 451), 32,
                {{1, 60}, {7, 120}, {17, 30}, {300, 60}, {1200, 5}, {2000, 5}, {4096, 5}}, Precision::kFP16, kFp16, "wave3");
  check_lstm_io("LSTM-2x64 I=20 head 3", lstm_with_io(64, 20, 3, 461), 20, {{1, 60}, {37, 30}}, Precision::kBF16, kBf16, "wave3");
  // Forced per-layer tactics: the layers (and their time chunks) at every batch.
  check_lstm_io("LSTM-2x128 I=32 head 3", lstm_with_io(128, 32, 3, 471), 32, {{1, 60}, {300, 60}, {4096, 57}}, Precision::kFP16,
                kFp16, "mma_x2");
  check_lstm_io("LSTM-2x128 I=32 head 3", lstm_with_io(128, 32, 3, 471), 32, {{7, 60}, {2000, 60}}, Precision::kFP16, kFp16,
                "persistent_ks4");
}

// Tactic "wave_split": each role over two CTAs of an 8-CTA cluster up to kLstmWaveSplitMaxBatch
// (64) rows, the halves of h swapped every step. [T, B] = [1, 1] and [2, 3] (the first steps'
// hand-overs), [5, 7] (a partial cluster), [120, 7], [60, 64] (the split's last batch) and every
// batch from 1 to 64 at T = 3 (each partial cluster; batch 1 takes the one-column cell); above
// 64 rows the three-CTA wavefront (65, 300, 2000: two n tiles per cluster); Y, Y_h and Y_c; FP16
// and BF16; input 64 (four k tiles of x); hidden 64 runs as "wave".
TEST(CudaLstmWave, SplitWavefrontMatchesCpu) {
  SKIP_WITHOUT_GPU();
  std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {1, 1}, {2, 3}, {5, 7}, {120, 7}, {60, 64}, {60, 65}, {120, 300}, {5, 2000}};
  for (int64_t b = 1; b <= 64; ++b) tb.push_back({3, b});
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "wave_split");
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, {{60, 1}, {120, 7}, {60, 64}, {60, 300}}, kBf16,
                   Precision::kBF16, "wave_split");
  check_lstm_stack("LSTM-2x128 I=64", stacked_lstm(128, 64, 321), 128, 64, {{60, 1}, {120, 9}, {60, 64}, {60, 300}}, kFp16,
                   Precision::kFP16, "wave_split");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {5, 7}, {60, 300}}, kFp16, Precision::kFP16,
                   "wave_split");
  // Batch-first X and the head of 1 and of 3 outputs ([B, T] here).
  check_lstm_io("LSTM-2x128 I=32 head 1", lstm_with_io(128, 32, 1, 451), 32,
                {{1, 60}, {1, 1}, {7, 120}, {64, 60}, {65, 60}, {300, 60}, {2000, 5}}, Precision::kFP16, kFp16, "wave_split");
  check_lstm_io("LSTM-2x128 I=32 head 3", lstm_with_io(128, 32, 3, 471), 32, {{1, 60}, {37, 30}, {64, 5}}, Precision::kBF16, kBf16,
                "wave_split");
}

// Where the wavefront does not apply the node runs its layers one by one: hidden 96 (no
// wavefront shape), and tactic "layers:<t>" (layer 1's Y in the scratch region, layer 2's
// projection after it).
TEST(CudaLstmWave, LayerByLayerTacticsAndFallbackMatchCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {120, 7}, {60, 300}};
  check_lstm_stack("LSTM-2x96", stacked_lstm(96, 32, 331), 96, 32, tb, kFp16, Precision::kFP16, "wave");
  // The layers in time chunks (33 × 4096 rows: 2 chunks of 17 and 16 steps): Y written in place
  // chunk by chunk, Y_h and Y_c from the last.
  check_lstm_stack("LSTM-2x128 chunks", stacked_lstm(128, 32, 301), 128, 32, {{33, 4096}}, kFp16, Precision::kFP16, "mma_x2");
  check_lstm_stack("LSTM-2x128", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "mma_x2");
  check_lstm_stack("LSTM-2x128", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "persistent_ks4");
}

// Device memory for the direct launches below (freed on scope exit).
template <typename T>
struct DevVec {
  T* p = nullptr;
  size_t n = 0;
  explicit DevVec(size_t count, const T* host = nullptr) : n(count) {
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess) {
      p = nullptr;
      return;
    }
    if (host ? cudaMemcpy(p, host, n * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess
             : cudaMemset(p, 0, n * sizeof(T)) != cudaSuccess) {
      cudaFree(p);
      p = nullptr;
    }
  }
  DevVec(const DevVec&) = delete;
  DevVec& operator=(const DevVec&) = delete;
  ~DevVec() { cudaFree(p); }
  std::vector<T> get() const {
    std::vector<T> h(n);
    if (cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
    return h;
  }
};

// Largest |a - b| / max(1, |b|) over two equal-length vectors (infinity when the lengths differ).
float max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return INFINITY;
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]) / std::max(1.0f, std::fabs(b[i])));
  return m;
}

// The wavefront launched directly (cuda::launch_lstm_wave) with the n tiles per cluster forced
// (LstmWaveParams::n_tiles: 8·NN batch rows per cluster) against NN = 1 of the same tactic, whose
// outputs the tests above compare with the CPU backend: "wave" NN 2 and 4, "wave3" NN 2 (its
// most), LSTM-2x128 FP16 input 32, X [T, B, 32]: Y, Y_h, Y_c, and the head of one output on
// batch-first X, at [T, B] = [30, 9], [30, 17] (a 16-row cluster and a 1-row one), [20, 300],
// [20, 1000], [5, 2049] and [60, 4096]. (The kernel's PERF NOTE times came from this test's
// earlier timing loop, bench/results/archive/lstmwide-h200-20261201-0827-tests.log; speed is the benchmark's now.)
TEST(CudaLstmWave, ForcedNTilesMatchOneTile) {
  SKIP_WITHOUT_GPU();
  if (!cuda::lstm_wave_supported(128, 32)) GTEST_SKIP() << "the wavefront needs a device with clusters (sm_90)";
  constexpr int H = 128, I = 32, G = 4;
  const float sc = 1.0f / std::sqrt(float(H));
  const std::vector<float> w1 = random_vec(size_t(G * H * I), 501, sc), r1 = random_vec(size_t(G * H * H), 502, sc),
                           w2 = random_vec(size_t(G * H * H), 503, sc), r2 = random_vec(size_t(G * H * H), 504, sc),
                           b1 = random_vec(size_t(2 * G * H), 505, sc), b2 = random_vec(size_t(2 * G * H), 506, sc),
                           hw = random_vec(size_t(H), 507, 4.0f * sc), hb{0.1f};
  const std::vector<uint32_t> frags = cuda::lstm_wave_pack(w1.data(), r1.data(), w2.data(), r2.data(), H, I, false);
  const std::vector<float> bias = cuda::lstm_wave_bias(b1, b2, H);
  DevVec<uint32_t> dfrags(frags.size(), frags.data());
  DevVec<float> dbias(bias.size(), bias.data()), dhw(hw.size(), hw.data()), dhb(hb.size(), hb.data());
  ASSERT_TRUE(dfrags.p && dbias.p && dhw.p && dhb.p);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  struct Variant {
    const char* name;
    bool three;
    int nn;
  };
  const Variant variants[] = {{"wave", false, 1}, {"wave", false, 2}, {"wave", false, 4}, {"wave3", true, 1}, {"wave3", true, 2}};
  auto params = [&](int t, int b, const Variant& v) {
    cuda::LstmWaveParams p;
    p.frags = dfrags.p;
    p.bias = dbias.p;
    p.t_len = t;
    p.batch = b;
    p.hidden = H;
    p.input = I;
    p.three_ctas = v.three;
    p.n_tiles = v.nn;
    return p;
  };
  for (const auto& [t, b] : std::vector<std::pair<int, int>>{{30, 9}, {30, 17}, {20, 300}, {20, 1000}, {5, 2049}, {60, 4096}}) {
    const std::vector<float> x = random_vec(size_t(t) * b * I, uint32_t(600 + b), 1.5f);
    DevVec<float> dx(x.size(), x.data());
    ASSERT_TRUE(dx.p);
    std::vector<float> ref[4];  // NN = 1 of the tactic: Y, Y_h, Y_c, the head
    for (const Variant& v : variants) {
      SCOPED_TRACE(std::string(v.name) + " NN " + std::to_string(v.nn) + " at [T, B] = [" + std::to_string(t) + ", " +
                   std::to_string(b) + "]");
      DevVec<float> y(size_t(t) * b * H), yh(size_t(b) * H), yc(size_t(b) * H), out{size_t(b)};
      ASSERT_TRUE(y.p && yh.p && yc.p && out.p);
      cuda::LstmWaveParams p = params(t, b, v);
      EXPECT_EQ(cuda::lstm_wave_n_tiles(p), v.nn);
      p.x = dx.p;
      p.y = y.p;
      p.yh = yh.p;
      p.yc = yc.p;
      Status st = cuda::launch_lstm_wave(p, s);
      ASSERT_TRUE(st) << st.to_string();
      cuda::LstmWaveParams q = p;  // the head on the same X read batch-first ([B, T, I])
      q.y = q.yh = q.yc = nullptr;
      q.x_batch_first = true;
      q.head_w = dhw.p;
      q.head_b = dhb.p;
      q.head_out = out.p;
      q.head_n = 1;
      q.head_sigmoid = true;
      st = cuda::launch_lstm_wave(q, s);
      ASSERT_TRUE(st) << st.to_string();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      std::vector<float> got[4] = {y.get(), yh.get(), yc.get(), out.get()};
      if (v.nn == 1) {
        for (int i = 0; i < 4; ++i) ref[i] = std::move(got[i]);
        continue;
      }
      const char* what[4] = {"Y", "Y_h", "Y_c", "head"};
      for (int i = 0; i < 4; ++i) EXPECT_LE(max_rel_diff(got[i], ref[i]), 1e-2f) << what[i];
    }
  }
  cudaStreamDestroy(s);
}

// The builder times "wave" against the per-layer tactics and records its choice; FP32 plans fuse
// the stack too (its FP32 wavefront: cuda_rnn_wave_f32_test.cpp).
TEST(CudaLstmWave, BuilderTimesTheStackAndFp32FusesItToo) {
  SKIP_WITHOUT_GPU();
  Graph g = stacked_lstm(128, 32, 301);
  auto fp16 = build_from_graph(g, PassLog{}, wave_options("cuda", Precision::kFP16, 32));
  ASSERT_TRUE(fp16) << fp16.status().to_string();
  auto p16 = deserialize_plan(fp16.value());
  ASSERT_TRUE(p16);
  ASSERT_EQ(count_op(p16.value().graph, "LSTMStack"), 1);
  bool timed = false;
  for (const std::string& l : p16.value().pass_log) {
    if (l.find("(LSTMStack) →") == std::string::npos) continue;
    timed = true;
    std::printf("builder: %s\n", l.c_str());
  }
  EXPECT_TRUE(timed) << "no tactic line for the LSTMStack node in the plan's pass log";
  auto fp32 = build_from_graph(g, PassLog{}, wave_options("cuda", Precision::kFP32, 32));
  ASSERT_TRUE(fp32) << fp32.status().to_string();
  auto p32 = deserialize_plan(fp32.value());
  ASSERT_TRUE(p32);
  EXPECT_EQ(count_op(p32.value().graph, "LSTMStack"), 1);
  EXPECT_EQ(count_op(p32.value().graph, "LSTM"), 0);
}

}  // namespace
}  // namespace ts::engine::testing
