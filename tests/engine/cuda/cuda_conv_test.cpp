// TCNs as PyTorch exports them (Transpose → [Conv → Slice to x.shape[1] → Relu (→ Add)]·L) and
// their fusion into FusedConv1d (passes/fuse_conv1d.cpp; pass cases run everywhere), and the
// fused node on the device against the CPU backend (label gpu: skipped without a CUDA device)
// for each tactic forced by name ("igemm", "igemm_wide": tensor cores / FP32 tiles; "direct",
// "direct_warp") at FP32, FP16 and BF16, on the sweep's TCN-3×71 and a seeded random sample of
// shapes not tuned for.
#include <random>

#include "cuda_test_util.h"
#include "engine/passes/passes.h"

namespace ts::engine::testing {
namespace {

struct TcnSpec {
  int64_t features, channels, kernel, levels;
  bool residual;
  int last = 0;  // the model's output: 0 every step; 1 h[:, :, -1] (scalar index); 2 h[:, :, [-1]]
  bool block = false;  // the usual TCN block instead: chomp h[:, :, :-pad], relu(out + h)
};

std::string spec_name(const TcnSpec& s) {
  return "tcn-" + std::to_string(s.levels) + "x" + std::to_string(s.channels) + "k" + std::to_string(s.kernel) +
         (s.residual ? "-res" : "") + "-f" + std::to_string(s.features) + (s.last ? "-last" + std::to_string(s.last) : "") +
         (s.block ? "-block" : "");
}

// `relu(conv(h)[:, :, :x.shape[1]])` per level, dilation 2^i, padding (k−1)·d both sides, as
// bench/shape_sweep/cases.py's Tcn exports it; `end_minus_one` trims to x.shape[1] − 1 instead
// (not a causal trim). Output: the last level's [n, channels, t], or its last step (s.last).
Graph tcn_graph(const TcnSpec& s, uint32_t seed, bool end_minus_one = false) {
  GraphBuilder b;
  const DType i64 = DType::kI64;
  ValueId x = b.input("x", sym({"n", "t", ""}, {0, 0, s.features}));
  ValueId h = b.value("xt");
  b.node("Transpose", {x}, {h}).attrs["perm"] = std::vector<int64_t>{0, 2, 1};
  ValueId shp = b.value("shape", i64), len = b.value("len", i64);
  b.node("Shape", {x}, {shp});
  b.node("Gather", {shp, b.constant_i64("one", {1})}, {len}).attrs["axis"] = int64_t(0);
  if (end_minus_one) {
    ValueId l1 = b.value("len1", i64);
    b.node("Sub", {len, b.constant_i64("one_again", {1})}, {l1});
    len = l1;
  }
  int64_t cin = s.features;
  for (int64_t i = 0; i < s.levels; ++i) {
    const int64_t d = int64_t(1) << i, pad = (s.kernel - 1) * d;
    const std::string l = std::to_string(i);
    ValueId c = b.value("conv" + l), t = b.value("trim" + l), r = b.value("relu" + l);
    Node& conv = b.node("Conv",
                        {h, b.constant("w" + l, {s.channels, cin, s.kernel},
                                       random_vec(size_t(s.channels * cin * s.kernel), seed + uint32_t(3 * i), 1.0f / std::sqrt(float(cin * s.kernel)))),
                         b.constant("b" + l, {s.channels}, random_vec(size_t(s.channels), seed + uint32_t(3 * i + 1), 0.2f))},
                        {c});
    conv.attrs["kernel_shape"] = std::vector<int64_t>{s.kernel};
    conv.attrs["dilations"] = std::vector<int64_t>{d};
    conv.attrs["pads"] = std::vector<int64_t>{pad, pad};
    conv.attrs["strides"] = std::vector<int64_t>{1};
    conv.attrs["group"] = int64_t(1);
    ValueId end = s.block ? b.constant_i64("e" + l, {-pad}) : len;
    b.node("Slice", {c, b.constant_i64("s" + l, {0}), end, b.constant_i64("a" + l, {2}), b.constant_i64("st" + l, {1})}, {t});
    b.node("Relu", {t}, {r});
    if (s.residual && i > 0) {
      ValueId a = b.value("add" + l);
      b.node("Add", {r, h}, {a});
      h = a;
      if (s.block) {
        ValueId ar = b.value("add_relu" + l);
        b.node("Relu", {a}, {ar});
        h = ar;
      }
    } else {
      h = r;
    }
    cin = s.channels;
  }
  if (s.last) {
    ValueId idx = b.g.add_value(make_constant_i64("last", s.last == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{1}, {-1}));
    ValueId y = b.value("y");
    b.node("Gather", {h, idx}, {y}).attrs["axis"] = int64_t(2);
    h = y;
  }
  b.output(h);
  return b.g;
}

int count_op(const Graph& g, const std::string& op) {
  int k = 0;
  for (const Node& n : g.nodes) k += n.op == op;
  return k;
}

Graph fused(Graph g) {
  PassLog log;
  EXPECT_TRUE(run_passes(g, log));
  fuse_conv1d(g, log, [](const Node&) { return true; });
  return g;
}

// --- the pass (no device needed) ---

TEST(FuseConv1d, TcnBecomesOneNodePerLevel) {
  const Graph g = fused(tcn_graph({61, 71, 4, 3, true, 1}, 1));
  ASSERT_EQ(count_op(g, "FusedConv1d"), 3);
  EXPECT_EQ(g.nodes.size(), 3u) << "Transpose, Slice, Relu, Add, the last-step Gather and the Shape → Gather chain are absorbed or dead";
  const Node& first = g.nodes[0];
  EXPECT_EQ(first.inputs[0], g.inputs[0]) << "the input Transpose is folded: X read time-major";
  EXPECT_EQ(first.attr_i("x_time_major", 0), 1);
  EXPECT_EQ(first.inputs.size(), 3u) << "level 0 has no residual";
  for (int64_t i = 0; i < 3; ++i) {
    const Node& n = g.nodes[size_t(i)];
    EXPECT_EQ(n.attr_i("trim", 0), 1);
    EXPECT_EQ(n.attr_s("activation", ""), "relu");
    EXPECT_EQ(n.attr_i("dilation", 0), int64_t(1) << i);
    EXPECT_EQ(n.attr_i("pad_begin", -1), 3 << i);
    if (i > 0) {
      ASSERT_EQ(n.inputs.size(), 4u) << "levels 1, 2 add the residual";
      EXPECT_EQ(n.inputs[3], g.nodes[size_t(i - 1)].outputs[0]);
      EXPECT_EQ(n.attr_i("x_time_major", 1), 0);
    }
  }
  EXPECT_EQ(g.nodes[0].attr_i("last_step", 0), 0);
  EXPECT_EQ(g.nodes[2].attr_i("last_step", 0), 1) << "h[:, :, -1] is folded into the last level";
  EXPECT_EQ(g.nodes.back().outputs[0], g.outputs[0]);
  EXPECT_EQ(shape_to_string(g.value(g.outputs[0]).shape), "[n,71]");
  EXPECT_EQ(shape_to_string(g.value(g.nodes[1].outputs[0]).shape), "[n,71,t]") << "the trim keeps the input's length";
}

// The usual TCN block (locuslab's TemporalBlock, one conv a level here): the chomp
// h[:, :, :-pad] is the same causal trim, and relu(out + res) folds in.
TEST(FuseConv1d, ChompAndReluAfterTheResidualFold) {
  TcnSpec s{8, 16, 3, 3, true};
  s.block = true;
  const Graph g = fused(tcn_graph(s, 8));
  ASSERT_EQ(count_op(g, "FusedConv1d"), 3);
  EXPECT_EQ(g.nodes.size(), 3u) << "Slice, Relu, Add and the block's last Relu are absorbed";
  for (const Node& n : g.nodes) {
    EXPECT_EQ(n.attr_i("trim", 0), 1) << n.name;
    EXPECT_EQ(n.attr_s("residual_activation", "none"), n.inputs.size() == 4 ? "relu" : "none") << n.name;
  }
  EXPECT_EQ(shape_to_string(g.value(g.outputs[0]).shape), "[n,16,t]");
}

TEST(FuseConv1d, SliceThatIsNotTheCausalTrimStays) {
  const Graph g = fused(tcn_graph({8, 16, 3, 1, false}, 2, /*end_minus_one=*/true));
  ASSERT_EQ(count_op(g, "FusedConv1d"), 1);
  EXPECT_EQ(count_op(g, "Slice"), 1) << "x.shape[1] − 1 is not the input's length";
  for (const Node& n : g.nodes) {
    if (n.op == "FusedConv1d") {
      EXPECT_EQ(n.attr_i("trim", 1), 0);
      EXPECT_EQ(n.attr_s("activation", ""), "none") << "the Relu after the Slice is not the conv's";
    }
  }
}

// A value the fused node would hide that someone else reads (a graph output), and an Add that
// broadcasts, stay outside the fused node.
TEST(FuseConv1d, GlueReadElsewhereOrBroadcastStaysOutside) {
  Graph g = tcn_graph({8, 16, 3, 2, true}, 5);
  ValueId relu1 = g.find_value("relu1");
  ASSERT_NE(relu1, kNoValue);
  g.outputs.push_back(relu1);  // level 1's ReLU output is also a model output
  {
    GraphBuilder b;
    b.g = g;
    ValueId shift = b.constant("shift", {1, 16, 1}, random_vec(16, 9));
    ValueId z = b.value("shifted");
    b.node("Add", {g.outputs[0], shift}, {z});  // broadcast: [n, 16, t] + [1, 16, 1]
    b.g.outputs[0] = z;
    g = b.g;
  }
  const Graph f = fused(g);
  ASSERT_EQ(count_op(f, "FusedConv1d"), 2);
  EXPECT_EQ(count_op(f, "Add"), 2) << "the residual Add reads a value that is a model output; the broadcast Add is no residual";
  for (const Node& n : f.nodes) {
    if (n.op == "FusedConv1d") {
      EXPECT_EQ(n.inputs.size(), 3u) << n.name << " took a residual";
    }
  }
}

// One Conv [n, 8, t] → [n, 16, ·], kernel 3, pads 1, 1: fused as it is (the same-length conv of
// the fixture TCN), not with stride 2 or in 2 groups, which the fused kernels do not compute.
TEST(FuseConv1d, StridedOrGroupedConvIsNotFused) {
  for (int64_t variant = 0; variant < 3; ++variant) {
    const int64_t group = variant == 2 ? 2 : 1, stride = variant == 1 ? 2 : 1;
    GraphBuilder b;
    ValueId x = b.input("x", sym({"n", "", "t"}, {0, 8, 0}));
    ValueId y = b.value("y");
    Node& n = b.node("Conv", {x, b.constant("w", {16, 8 / group, 3}, random_vec(size_t(16 * 8 / group * 3), 7))}, {y});
    n.attrs["pads"] = std::vector<int64_t>{1, 1};
    n.attrs["strides"] = std::vector<int64_t>{stride};
    n.attrs["group"] = group;
    b.output(y);
    const Graph f = fused(b.g);
    EXPECT_EQ(count_op(f, "FusedConv1d"), variant == 0 ? 1 : 0) << "stride " << stride << " group " << group;
  }
}

TEST(FuseConv1d, BackendWithoutTheOpKeepsTheGraph) {
  Graph g = tcn_graph({8, 16, 3, 2, true}, 3);
  PassLog log;
  ASSERT_TRUE(run_passes(g, log));
  const size_t before = g.nodes.size();
  EXPECT_EQ(fuse_conv1d(g, log, [](const Node&) { return false; }), 0);
  EXPECT_EQ(g.nodes.size(), before);
  EXPECT_EQ(count_op(g, "Conv"), 2);
}

TEST(FuseConv1d, CpuPlanKeepsTheConvs) {
  const Graph g = tcn_graph({8, 16, 3, 2, true}, 4);
  auto plan = build_from_graph(g, PassLog{}, options("cpu"));
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  EXPECT_EQ(count_op(pl.value().graph, "FusedConv1d"), 0);
  EXPECT_EQ(count_op(pl.value().graph, "Conv"), 2);
}

// --- on the device ---

constexpr int64_t kMaxBatch = 4500;

BuildOptions tcn_options(const std::string& backend, int64_t features, Precision p = Precision::kFP32) {
  BuildOptions o = options(backend, p);
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 1, features}, {8, 60, features}, {kMaxBatch, 120, features}};
  o.profiles = {prof};
  return o;
}

// CPU (unfused, FP32) against CUDA with `tactic` forced on every FusedConv1d, at each [n, t].
void check_tcn(const TcnSpec& s, const std::string& tactic, Precision p, Tol tol,
               const std::vector<std::pair<int64_t, int64_t>>& nt) {
  SCOPED_TRACE(spec_name(s) + " " + tol.name + " tactic " + tactic);
  const Graph g = tcn_graph(s, 11);
  auto cpu_e = build_graph(g, tcn_options("cpu", s.features));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = fused(g);
  for (Node& n : gg.nodes) n.tactic = n.op == "FusedConv1d" ? tactic : "";
  BuildOptions go = tcn_options("cuda", s.features, p);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, PassLog{}, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  ASSERT_EQ(count_op(pl.value().graph, "FusedConv1d"), int(s.levels));
  for (const Node& n : pl.value().graph.nodes) EXPECT_EQ(n.tactic, tactic);
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  uint32_t seed = 31;
  for (auto [n, t] : nt) {
    std::vector<HostTensor> in{random_tensor({n, t, s.features}, seed++, 1.5f)};
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), in, tol.rel,
                           "at [n, t] = [" + std::to_string(n) + ", " + std::to_string(t) + "]",
                           size_t(n * (s.last ? 1 : t) * s.channels));
  }
}

TEST(CudaConv1d, SweepTcnEveryTacticMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const TcnSpec s{61, 71, 4, 3, true};  // bench/shape_sweep's 07-tcn-3x71k4-res-f61 (every step out)
  for (const char* tactic : {"igemm", "igemm_wide", "direct", "direct_warp"}) {
    check_tcn(s, tactic, Precision::kFP32, kFp32, {{1, 60}, {7, 30}, {300, 60}});
    check_tcn(s, tactic, Precision::kFP16, kFp16, {{1, 60}, {300, 60}});
    TcnSpec sb = s;
    sb.block = true;
    check_tcn(sb, tactic, Precision::kFP32, kFp32, {{1, 60}, {7, 30}});
    check_tcn(sb, tactic, Precision::kFP16, kFp16, {{300, 60}});
    for (int last : {1, 2}) {  // as the sweep's model reads it: h[:, :, -1] (and h[:, :, [-1]])
      TcnSpec sl = s;
      sl.last = last;
      check_tcn(sl, tactic, Precision::kFP32, kFp32, {{1, 60}, {7, 5}, {300, 60}});
      check_tcn(sl, tactic, Precision::kFP16, kFp16, {{1, 60}, {300, 60}});
    }
  }
  check_tcn(s, "igemm", Precision::kBF16, kBf16, {{1, 60}, {33, 120}});
  check_tcn(s, "igemm_wide", Precision::kBF16, kBf16, {{1, 60}, {33, 120}});
  check_tcn(s, "igemm", Precision::kFP16, kFp16, {{kMaxBatch, 60}});  // 270,000 rows: a partial last tile
}

// A seeded sample of shapes the kernels were not tuned on: channels 5–130 (one and three column
// tiles, m padded), features 3–70, kernel 2–5, 1–3 levels, with and without residuals, every
// step or the last one out, t 1–120.
TEST(CudaConv1d, RandomTcnShapesMatchCpu) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(2026);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int k = 0; k < 5; ++k) {
    const TcnSpec s{pick(3, 70), pick(5, 130), pick(2, 5), pick(1, 3), pick(0, 1) == 1, int(pick(0, 2))};
    const std::vector<std::pair<int64_t, int64_t>> nt{{1, pick(1, 20)}, {pick(2, 40), pick(20, 120)}, {pick(200, 700), 60}};
    check_tcn(s, "igemm", Precision::kFP32, kFp32, nt);
    check_tcn(s, "igemm", Precision::kFP16, kFp16, nt);
    check_tcn(s, "igemm_wide", Precision::kFP32, kFp32, nt);
    check_tcn(s, "igemm_wide", Precision::kFP16, kFp16, nt);
    check_tcn(s, "direct", Precision::kFP32, kFp32, nt);
    check_tcn(s, "direct_warp", Precision::kFP32, kFp32, nt);
  }
}

// Built the ordinary way (tactics timed): the plan has one node per level and matches the CPU.
TEST(CudaConv1d, TimedPlanFusesAndMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const TcnSpec s{19, 22, 4, 2, true, 1};  // the sweep's 19-tcn-2x22k4-res-f19
  const Graph g = tcn_graph(s, 5);
  auto cpu_e = build_graph(g, tcn_options("cpu", s.features));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = g;  // as engine::build hands it over: after the ONNX passes (shape inference)
  PassLog log;
  ASSERT_TRUE(run_passes(gg, log));
  auto plan = build_from_graph(gg, log, tcn_options("cuda", s.features, Precision::kFP16));
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  EXPECT_EQ(pl.value().graph.nodes.size(), 2u) << "one FusedConv1d per level, nothing else";
  EXPECT_EQ(count_op(pl.value().graph, "FusedConv1d"), 2);
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  std::vector<HostTensor> in{random_tensor({64, 60, s.features}, 77, 1.5f)};
  expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), in, kFp16.rel, "timed plan", size_t(64 * s.channels));
}

}  // namespace
}  // namespace ts::engine::testing
