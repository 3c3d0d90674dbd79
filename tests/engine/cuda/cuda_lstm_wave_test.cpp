// The stacked-LSTM wavefront (LSTMStack node, tactic "wave", cuda_lstm_wave.cu) against the CPU
// backend, and the fusion that makes the node (passes/fuse_rnn_stack.cpp, shared with GRUStack).
//
// The pass tests run everywhere; the kernel tests are labelled `gpu` with the rest of the CUDA
// tests and skip with the reason where no CUDA device is present.
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
  }
}

// --- the kernel (H200) -------------------------------------------------------------------------

// The stack of two LSTM layers with `tactic` forced, against the CPU backend (rnn_stack_test_util.h).
void check_lstm_stack(const std::string& name, const Graph& g, int64_t h, int64_t in, const std::vector<std::pair<int64_t, int64_t>>& tb,
                      Tol tol, Precision p, const std::string& tactic) {
  check_stack(name, g, "LSTM", "LSTMStack", h, in, tb, tol, p, tactic, 29);
}

// Batch 1, 2, 7 (one partial 8-row cluster), 64, 300 (partial last cluster), 1200 (150
// clusters: several waves of them), 2000 and 4096 (above kLstmWaveMaxBatch: the layers one by
// one); T 5, 60, 120; H 128 (input 32, the models' size; input 64) and 64 (input 20: a partly
// empty k tile); FP16 and BF16.
TEST(CudaLstmWave, WavefrontMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1},     {5, 2},     {120, 7}, {60, 64}, {120, 300},
                                                    {5, 1200},   {60, 1200}, {5, 2000}, {5, 4096}};
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "wave");
  check_lstm_stack("LSTM-2x128 I=32", stacked_lstm(128, 32, 301), 128, 32, {{60, 1}, {120, 7}, {60, 300}}, kBf16, Precision::kBF16,
              "wave");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {5, 2}, {120, 7}, {60, 64}, {120, 300}, {5, 1200}},
              kFp16, Precision::kFP16, "wave");
  check_lstm_stack("LSTM-2x64 I=20", stacked_lstm(64, 20, 311), 64, 20, {{60, 1}, {120, 300}}, kBf16, Precision::kBF16, "wave");
  check_lstm_stack("LSTM-2x128 I=64", stacked_lstm(128, 64, 321), 128, 64, {{60, 1}, {120, 300}}, kFp16, Precision::kFP16, "wave");
}

// Where the wavefront does not apply the node runs its layers one by one: hidden 96 (no
// wavefront shape), and tactic "layers:<t>" (layer 1's Y in the scratch region, layer 2's
// projection after it).
TEST(CudaLstmWave, LayerByLayerTacticsAndFallbackMatchCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {120, 7}, {60, 300}};
  check_lstm_stack("LSTM-2x96", stacked_lstm(96, 32, 331), 96, 32, tb, kFp16, Precision::kFP16, "wave");
  check_lstm_stack("LSTM-2x128", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "mma_x2");
  check_lstm_stack("LSTM-2x128", stacked_lstm(128, 32, 301), 128, 32, tb, kFp16, Precision::kFP16, "persistent_ks4");
}

// The builder times "wave" against the per-layer tactics and records its choice; FP32 plans keep
// the two LSTM nodes.
TEST(CudaLstmWave, BuilderTimesTheStackAndFp32KeepsTheLayers) {
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
  EXPECT_EQ(count_op(p32.value().graph, "LSTMStack"), 0);
  EXPECT_EQ(count_op(p32.value().graph, "LSTM"), 2);
}

}  // namespace
}  // namespace ts::engine::testing
