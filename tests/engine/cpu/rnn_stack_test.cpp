// GRUStack / LSTMStack on the cpu backend (cpu_rnn_stack.cpp): what PyTorch exports for
// nn.GRU / nn.LSTM(num_layers = N) with its input transpose and head, built by the builder (one
// stack node, the glue folded) against the same graph run node by node (every GRU/LSTM layer,
// Transpose, Squeeze, Gather and Gemm as separate kernels), FP32 within 1e-5.
#include <cstring>

#include "engine/backends/cpu/cpu_backend.h"
#include "engine/builder.h"
#include "engine/engine.h"
#include "engine/passes/passes.h"
#include "engine/plan.h"
#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

struct StackCase {
  std::string op;      // "GRU" or "LSTM"
  int64_t layers = 2, h = 13, in = 7;
  bool lbr = true;     // GRU linear_before_reset
  bool head = true;    // Gather(last) → Gemm → Sigmoid; else Y [B, T, H] transposed back
  bool batch_first = true;  // X [B, T, F] through a Transpose; else X [T, B, F]
  bool states = false;      // each layer's initial_h (and initial_c) as graph inputs
  std::string tactic;       // forced on every layer ("" = builder's timing)
};

std::string name_of(const StackCase& c) {
  return c.op + (c.op == "GRU" ? (c.lbr ? "(lbr1)" : "(lbr0)") : "") + " " + std::to_string(c.layers) + "x" +
         std::to_string(c.h) + (c.head ? " head" : " Y") + (c.batch_first ? " batch-first" : " time-major") +
         (c.states ? " h0" : "") + (c.tactic.empty() ? "" : " tactic " + c.tactic);
}

// The graph PyTorch exports for `rnn(x.transpose(0, 1), h0)` … `sigmoid(head(y[-1]))`.
Graph stack_graph(const StackCase& c) {
  const bool lstm = c.op == "LSTM";
  const int64_t gates = lstm ? 4 : 3, gh = gates * c.h;
  const float sc = 1.0f / std::sqrt(float(c.h));
  GraphBuilder b;
  const Shape xs = c.batch_first ? Shape{Dim::sym("batch"), Dim::sym("seq"), Dim::known(c.in)}
                                 : Shape{Dim::sym("seq"), Dim::sym("batch"), Dim::known(c.in)};
  ValueId x = b.input("x", xs);
  std::vector<ValueId> h0, c0;
  for (int64_t l = 0; l < c.layers && c.states; ++l) {
    const Shape ss{Dim::known(1), Dim::sym("batch"), Dim::known(c.h)};
    h0.push_back(b.input("h0_" + std::to_string(l), ss));
    if (lstm) c0.push_back(b.input("c0_" + std::to_string(l), ss));
  }
  ValueId axes = b.constant_i64("axes", {1});
  const std::vector<int64_t> perm{1, 0, 2};
  ValueId cur = x;
  if (c.batch_first) {
    ValueId xt = b.value("xt");
    b.node("Transpose", {x}, {xt}).attrs["perm"] = perm;
    cur = xt;
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string s = std::to_string(l);
    const int64_t in = l == 0 ? c.in : c.h;
    ValueId w = b.constant("W" + s, {1, gh, in}, random_vec(size_t(gh * in), 100 + 10 * uint32_t(l), sc));
    ValueId r = b.constant("R" + s, {1, gh, c.h}, random_vec(size_t(gh * c.h), 101 + 10 * uint32_t(l), sc));
    ValueId bias = b.constant("B" + s, {1, 2 * gh}, random_vec(size_t(2 * gh), 102 + 10 * uint32_t(l), sc));
    std::vector<ValueId> ins{cur, w, r, bias};
    if (c.states) {
      ins.push_back(kNoValue);
      ins.push_back(h0[size_t(l)]);
      if (lstm) ins.push_back(c0[size_t(l)]);
    }
    ValueId y = b.value("y" + s), yh = b.value("yh" + s), ys = b.value("ys" + s);
    std::vector<ValueId> outs{y, yh};
    if (lstm) outs.push_back(b.value("yc" + s));
    Node& n = b.node(c.op, ins, outs);
    n.name = "/rnn/" + c.op + (l ? "_" + s : "");
    n.attrs["hidden_size"] = c.h;
    if (!lstm) n.attrs["linear_before_reset"] = int64_t(c.lbr ? 1 : 0);
    n.tactic = c.tactic;
    b.node("Squeeze", {y, axes}, {ys});
    cur = ys;
  }
  ValueId yt = cur;
  if (c.batch_first) {
    yt = b.value("yt");
    b.node("Transpose", {cur}, {yt}).attrs["perm"] = perm;
  }
  if (!c.head) {
    b.output(yt);
    return b.g;
  }
  const int64_t n_out = 3;
  ValueId hw = b.constant("HW", {n_out, c.h}, random_vec(size_t(n_out * c.h), 150, 4.0f * sc));
  ValueId hb = b.constant("HB", {n_out}, random_vec(size_t(n_out), 151, sc));
  ValueId hl = b.value("hl"), lg = b.value("logits"), out = b.value("out");
  b.node("Gather", {yt, last_step_index(b)}, {hl}).attrs["axis"] = int64_t(c.batch_first ? 1 : 0);
  b.node("Gemm", {hl, hw, hb}, {lg}).attrs["transB"] = int64_t(1);
  b.node("Sigmoid", {lg}, {out});
  b.output(out);
  return b.g;
}

BuildOptions stack_options(const StackCase& c, Precision p = Precision::kFP32) {
  BuildOptions o;
  o.backend = "cpu";
  o.precision = p;
  OptimizationProfile prof;
  prof.inputs["x"] = c.batch_first ? ShapeRange{{1, 1, c.in}, {4, 9, c.in}, {64, 20, c.in}}
                                   : ShapeRange{{1, 1, c.in}, {9, 4, c.in}, {20, 64, c.in}};
  for (int64_t l = 0; l < c.layers && c.states; ++l) {
    const ShapeRange sr{{1, 1, c.h}, {1, 4, c.h}, {1, 64, c.h}};
    prof.inputs["h0_" + std::to_string(l)] = sr;
    if (c.op == "LSTM") prof.inputs["c0_" + std::to_string(l)] = sr;
  }
  o.profiles = {prof};
  return o;
}

// The builder's input: g after the import passes (Gemm + Sigmoid → FusedGemm, ...), as
// `ticksentry build` hands an imported model over.
Result<std::vector<uint8_t>> build_cpu(Graph g, const BuildOptions& o) {
  PassLog log;
  TS_RETURN_IF_ERROR(run_passes(g, log));
  return build_from_graph(std::move(g), log, o);
}

int count_op(const Graph& g, const std::string& op) {
  int k = 0;
  for (const Node& n : g.nodes) k += n.op == op;
  return k;
}

// Builds c (one stack node expected: with the glue folded when `folded`), runs it at each
// (batch, seq) against the unfused graph; returns the plan's stack node.
Node check_case(const StackCase& c, float rel = 1e-5f, Precision p = Precision::kFP32) {
  SCOPED_TRACE(name_of(c));
  const Graph g = stack_graph(c);
  BuildOptions o = stack_options(c, p);
  o.time_tactics = c.tactic.empty();  // a forced tactic stays
  auto bytes = build_cpu(g, o);
  EXPECT_TRUE(bytes) << bytes.status().to_string();
  if (!bytes) return {};
  auto plan = deserialize_plan(bytes.value());
  EXPECT_TRUE(plan) << plan.status().to_string();
  if (!plan) return {};
  const std::string stack_op = c.op + "Stack";
  EXPECT_EQ(count_op(plan.value().graph, stack_op), 1);
  EXPECT_EQ(count_op(plan.value().graph, c.op), 0);
  if (c.head) {  // every Squeeze, Transpose, Gather and the Gemm folded
    EXPECT_EQ(count_op(plan.value().graph, "Squeeze"), 0);
    EXPECT_EQ(count_op(plan.value().graph, "Transpose"), 0);
    EXPECT_EQ(count_op(plan.value().graph, "Gather"), 0);
  }
  auto e = Engine::load(bytes.value());
  EXPECT_TRUE(e) << e.status().to_string();
  if (!e) return {};
  uint32_t seed = 7;
  for (auto [batch, seq] : std::vector<std::pair<int64_t, int64_t>>{{1, 9}, {3, 5}, {16, 4}}) {
    SCOPED_TRACE("batch " + std::to_string(batch) + " seq " + std::to_string(seq));
    std::vector<HostTensor> in{random_tensor(c.batch_first ? std::vector<int64_t>{batch, seq, c.in}
                                                           : std::vector<int64_t>{seq, batch, c.in},
                                             seed++, 1.5f)};
    for (int64_t l = 0; l < c.layers && c.states; ++l) {
      in.push_back(random_tensor({1, batch, c.h}, seed++, 0.5f));
      if (c.op == "LSTM") in.push_back(random_tensor({1, batch, c.h}, seed++, 0.5f));
    }
    auto want = run_graph(g, in);
    EXPECT_TRUE(want) << want.status().to_string();
    auto got = run_engine(*e.value(), in);
    EXPECT_TRUE(got) << got.status().to_string();
    if (!want || !got) continue;
    const std::vector<float>& y = got.value()[0];
    EXPECT_EQ(int64_t(y.size()), want.value()[0].numel());
    if (int64_t(y.size()) == want.value()[0].numel()) {
      expect_close(y.data(), want.value()[0].f(), int64_t(y.size()), rel, rel / 10, "output");
    }
  }
  for (const Node& n : plan.value().graph.nodes)
    if (n.op == stack_op) return n;
  return {};
}

TEST(CpuRnnStack, GruAndLstmStacksOfOneToThreeLayersMatchTheUnfusedLayers) {
  for (const char* op : {"GRU", "LSTM"}) {
    for (int64_t layers : {1, 2, 3}) {
      for (int64_t h : {13, 24}) {
        StackCase c{op, layers, h};
        check_case(c);
      }
    }
  }
  StackCase lbr0{"GRU", 2, 13};
  lbr0.lbr = false;
  check_case(lbr0);
}

TEST(CpuRnnStack, EveryLayerTacticAndEveryGlueVariantMatches) {
  for (const char* op : {"GRU", "LSTM"}) {
    for (const char* t : {"avx2_blocked", "avx2_packed", "onednn"}) {
      StackCase c{op, 2, 21};
      c.tactic = t;
      const Node n = check_case(c);
      EXPECT_EQ(n.tactic, std::string("layers:") + t);
    }
    StackCase ymaj{op, 2, 13};
    ymaj.head = false;  // Y [B, T, H] out: X transposed in the kernel, Y time-major
    check_case(ymaj);
    StackCase tmaj{op, 2, 13};
    tmaj.batch_first = false;  // X [T, B, F], Gather(axis 0) head
    check_case(tmaj);
    StackCase states{op, 2, 13};
    states.states = true;
    check_case(states);
  }
}

TEST(CpuRnnStack, MixedLayerTacticsAreOfferedAndRun) {
  StackCase c{"LSTM", 3, 13};
  const Graph g = stack_graph(c);
  auto bytes = build_cpu(g, stack_options(c));
  ASSERT_TRUE(bytes) << bytes.status().to_string();
  auto plan = deserialize_plan(bytes.value());
  ASSERT_TRUE(plan);
  const Node* stack = nullptr;
  for (const Node& n : plan.value().graph.nodes) {
    if (n.op == "LSTMStack") stack = &n;
  }
  ASSERT_NE(stack, nullptr);
  const auto tactics = cpu_backend().tactics(plan.value().graph, *stack);
  EXPECT_NE(std::find(tactics.begin(), tactics.end(), "layers:onednn,avx2_blocked"), tactics.end());
  std::vector<HostTensor> in{random_tensor({5, 6, c.in}, 3, 1.5f)};
  auto want = run_graph(g, in);
  ASSERT_TRUE(want) << want.status().to_string();
  for (const std::string& t : tactics) {
    SCOPED_TRACE(t);
    Graph pg = plan.value().graph;
    auto got = run_graph(pg, in, t);
    ASSERT_TRUE(got) << got.status().to_string();
    expect_close(got.value()[0].f(), want.value()[0].f(), want.value()[0].numel(), 1e-5f, 1e-6f, t);
  }
  // A tactic that names no layer tactic is refused with the node's name.
  auto bad = cpu_backend().make_kernel(plan.value().graph, *stack, "layers:avx2_blocked,nope");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find(stack->name), std::string::npos) << bad.status().to_string();
}

TEST(CpuRnnStack, Bf16WeightsStackStaysWithinOnePercent) {
  StackCase c{"GRU", 2, 24};
  c.tactic = "avx2_blocked";
  check_case(c, 1e-2f, Precision::kBF16);
}

TEST(CpuRnnStack, RuntimeHeadWeightStaysOutsideTheStack) {
  // The head's W as a graph input: the stack check refuses a folded head with runtime weights,
  // so the plan fuses the layers (and the input transpose) and runs the Gemm itself.
  StackCase c{"GRU", 2, 13};
  Graph g = stack_graph(c);
  const int64_t n_out = 3;
  for (Node& n : g.nodes) {
    if (n.op != "Gemm") continue;
    Value& w = g.values[size_t(n.inputs[1])];
    w.is_constant = false;
    w.data.clear();
    w.name = "hw";
    g.inputs.push_back(n.inputs[1]);
  }
  BuildOptions o = stack_options(c);
  o.profiles[0].inputs["hw"] = ShapeRange{{n_out, c.h}, {n_out, c.h}, {n_out, c.h}};
  auto bytes = build_cpu(g, o);
  ASSERT_TRUE(bytes) << bytes.status().to_string();
  auto plan = deserialize_plan(bytes.value());
  ASSERT_TRUE(plan);
  ASSERT_EQ(count_op(plan.value().graph, "GRUStack"), 1);
  for (const Node& n : plan.value().graph.nodes) {
    if (n.op == "GRUStack") {
      EXPECT_FALSE(n.has_attr("head_activation"));
    }
  }
  auto e = Engine::load(bytes.value());
  ASSERT_TRUE(e) << e.status().to_string();
  std::vector<HostTensor> in{random_tensor({4, 6, c.in}, 11, 1.5f), random_tensor({n_out, c.h}, 12, 0.5f)};
  auto want = run_graph(g, in);
  ASSERT_TRUE(want) << want.status().to_string();
  auto got = run_engine(*e.value(), in);
  ASSERT_TRUE(got) << got.status().to_string();
  ASSERT_EQ(int64_t(got.value()[0].size()), want.value()[0].numel());
  expect_close(got.value()[0].data(), want.value()[0].f(), want.value()[0].numel(), 1e-5f, 1e-6f, "output");
}

}  // namespace
}  // namespace ts::engine::testing
