// What the stacked-RNN wavefront tests (cuda_rnn_wave_test.cpp: GRUStack, cuda_lstm_wave_test.cpp:
// LSTMStack) share: the two layers' random weights, the profile their plans use, and the check of
// a forced tactic on the fused node against the CPU backend.
#pragma once

#include <cstring>

#include "cuda_test_util.h"

namespace ts::engine::testing {

inline constexpr int64_t kStackMaxBatch = 4096;

// W1 [1, G·h, in], R1, B1 [1, 2·G·h], W2 [1, G·h, h], R2, B2 for G gates (3: GRU, 4: LSTM), scaled
// by 1/√h like PyTorch's init; seeds seed..seed+5.
struct StackWeights {
  ValueId w1, r1, b1, w2, r2, b2;
};
inline StackWeights stack_weights(GraphBuilder& b, int64_t gates, int64_t h, int64_t in, uint32_t seed) {
  const float sc = 1.0f / std::sqrt(float(h));
  const int64_t gh = gates * h;
  return {b.constant("W1", {1, gh, in}, random_vec(size_t(gh * in), seed, sc)),
          b.constant("R1", {1, gh, h}, random_vec(size_t(gh * h), seed + 1, sc)),
          b.constant("B1", {1, 2 * gh}, random_vec(size_t(2 * gh), seed + 2, sc)),
          b.constant("W2", {1, gh, h}, random_vec(size_t(gh * h), seed + 3, sc)),
          b.constant("R2", {1, gh, h}, random_vec(size_t(gh * h), seed + 4, sc)),
          b.constant("B2", {1, 2 * gh}, random_vec(size_t(2 * gh), seed + 5, sc))};
}

// The models' classifier shape, as PyTorch exports `sigmoid(head(rnn(x.transpose(0, 1))[0]
// .transpose(0, 1)[:, -1]))`: X [B, T, I] → Transpose → op → Squeeze → op → Squeeze → Transpose →
// Gather(last step) → Gemm → Sigmoid → out [B, N], op "GRU" (linear_before_reset 1) or "LSTM".
// `also_out` makes the transposed Y a graph output too, `yc_out` (LSTM) layer 2's Y_c: either
// way the head cannot be absorbed.
inline Graph stack_classifier(const std::string& op, int64_t h, int64_t in, int64_t outs, uint32_t seed,
                              bool also_out = false, bool yc_out = false) {
  const bool lstm = op == "LSTM";
  GraphBuilder b;
  ValueId x = b.input("x", sym({"batch", "seq", ""}, {0, 0, in}));
  const auto [w1, r1, b1, w2, r2, b2] = stack_weights(b, lstm ? 4 : 3, h, in, seed);
  const float sc = 1.0f / std::sqrt(float(h));
  ValueId hw = b.constant("HW", {outs, h}, random_vec(size_t(outs * h), seed + 6, 4.0f * sc));
  ValueId hb = b.constant("HB", {outs}, random_vec(size_t(outs), seed + 7, sc));
  ValueId axes = b.constant_i64("axes", {1});
  ValueId li = last_step_index(b);
  ValueId xt = b.value("xt"), y1 = b.value("y1"), yh1 = b.value("yh1");
  std::vector<ValueId> o1{y1, yh1};
  if (lstm) o1.push_back(b.value("yc1"));
  ValueId y1s = b.value("y1s"), y = b.value("y"), yh = b.value("yh");
  std::vector<ValueId> o2{y, yh};
  if (lstm) o2.push_back(b.value("yc"));
  ValueId ys = b.value("ys"), yt = b.value("yt"), hl = b.value("hl"), lg = b.value("logits"), out = b.value("out");
  const std::vector<int64_t> perm{1, 0, 2};
  b.node("Transpose", {x}, {xt}).attrs["perm"] = perm;
  b.node(op, {xt, w1, r1, b1}, o1);
  b.node("Squeeze", {y1, axes}, {y1s});
  b.node(op, {y1s, w2, r2, b2}, o2);
  for (Node* n : {&b.g.nodes[1], &b.g.nodes[3]}) {
    n->attrs["hidden_size"] = h;
    if (!lstm) n->attrs["linear_before_reset"] = int64_t(1);
  }
  b.node("Squeeze", {y, axes}, {ys});
  b.node("Transpose", {ys}, {yt}).attrs["perm"] = perm;
  b.node("Gather", {yt, li}, {hl}).attrs["axis"] = int64_t(1);
  b.node("Gemm", {hl, hw, hb}, {lg}).attrs["transB"] = int64_t(1);
  b.node("Sigmoid", {lg}, {out});
  b.output(out);
  if (also_out) b.output(yt);
  if (yc_out && lstm) b.output(o2[2]);
  return b.g;
}

inline int count_op(const Graph& g, const std::string& op) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.op == op;
  return c;
}

// Input x [T, B, in]: T 1..120 (opt 60), B 1..kStackMaxBatch (opt 8).
inline BuildOptions wave_options(const std::string& backend, Precision p, int64_t in) {
  BuildOptions o = options(backend, p);
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 1, in}, {60, 8, in}, {120, kStackMaxBatch, in}};
  o.profiles = {prof};
  return o;
}

// CUDA with `tactic` forced on both `layer_op` layers (fused into one `stack_op` node, whose
// recorded tactic is checked) vs CPU FP32 on every output, at each [T, B].
inline void check_stack(const std::string& name, const Graph& g, const std::string& layer_op, const std::string& stack_op,
                        int64_t h, int64_t in, const std::vector<std::pair<int64_t, int64_t>>& tb, Tol tol, Precision p,
                        const std::string& tactic, uint32_t seed) {
  SCOPED_TRACE(name + " " + tol.name + " tactic " + tactic);
  auto cpu_e = build_graph(g, wave_options("cpu", Precision::kFP32, in));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = g;
  for (Node& n : gg.nodes)
    if (n.op == layer_op) n.tactic = tactic;
  BuildOptions go = wave_options("cuda", p, in);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, PassLog{}, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  ASSERT_EQ(count_op(pl.value().graph, stack_op), 1);
  for (const Node& n : pl.value().graph.nodes) {
    if (n.op == stack_op) {
      EXPECT_EQ(n.tactic, tactic.rfind("wave", 0) == 0 ? tactic : "layers:" + tactic);
    }
  }
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  for (auto [t, b] : tb) {
    std::vector<HostTensor> ins{random_tensor({t, b, in}, seed++, 1.5f)};
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), ins, tol.rel,
                           "at [T, B] = [" + std::to_string(t) + ", " + std::to_string(b) + "]", size_t(t * b * h));
  }
}

}  // namespace ts::engine::testing
