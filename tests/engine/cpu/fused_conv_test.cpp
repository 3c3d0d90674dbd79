// FusedConv1d on the CPU backend (cpu_fused_conv.cpp) against the same TCN run unfused (Conv,
// Slice, Relu, Add, Gather node by node): the stacks PyTorch exports (input Transpose, causal
// chomp, ReLU, residual add with and without a ReLU after it, last-step Gather), batches that
// span several GEMM chunks, and the steps_needed marks fuse_conv1d puts on inner levels (only the
// receptive field is computed). FP32 within 1e-5. Also: an inner level read by the graph's output
// computes every step, and a bad X is refused with a message naming the channels.
#include <cmath>

#include "engine/passes/passes.h"
#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

struct Tcn {
  int64_t features = 7, channels = 9, kernel = 3, levels = 2;
  bool residual = true, relu_after_add = false, last_step = true, time_major = true;
  bool inner_output = false;  // level 0's output is a graph output too
};

// x [n, T, F] (or [n, F, T]) → Transpose → (Conv(d = 2^i, pads (k−1)d) → Slice(:−(k−1)d) → Relu
// [→ Add(h) [→ Relu]])* → [Gather(axis 2, −1)].
Graph tcn_graph(const Tcn& c, int64_t n, int64_t t) {
  GraphBuilder b;
  ValueId x = b.input("x", c.time_major ? known({n, t, c.features}) : known({n, c.features, t}));
  ValueId h = x;
  if (c.time_major) {
    h = b.value("xt");
    b.node("Transpose", {x}, {h}).attrs["perm"] = std::vector<int64_t>{0, 2, 1};
  }
  int64_t cin = c.features;
  for (int64_t i = 0; i < c.levels; ++i) {
    const int64_t d = int64_t(1) << i, pad = (c.kernel - 1) * d;
    ValueId w = b.constant("w" + std::to_string(i), {c.channels, cin, c.kernel},
                           random_vec(size_t(c.channels * cin * c.kernel), 100 + uint32_t(i), 0.4f));
    ValueId bias =
        b.constant("b" + std::to_string(i), {c.channels}, random_vec(size_t(c.channels), 200 + uint32_t(i), 0.2f));
    ValueId y = b.value("conv" + std::to_string(i));
    Node& conv = b.node("Conv", {h, w, bias}, {y});
    conv.attrs["kernel_shape"] = std::vector<int64_t>{c.kernel};
    conv.attrs["dilations"] = std::vector<int64_t>{d};
    conv.attrs["pads"] = std::vector<int64_t>{pad, pad};
    ValueId s = b.value("trim" + std::to_string(i));
    b.node("Slice",
           {y, b.constant_i64("s0_" + std::to_string(i), {0}), b.constant_i64("s1_" + std::to_string(i), {-pad}),
            b.constant_i64("s2_" + std::to_string(i), {2})},
           {s});
    ValueId r = b.value("relu" + std::to_string(i));
    b.node("Relu", {s}, {r});
    if (c.residual && i > 0) {
      ValueId sum = b.value("add" + std::to_string(i));
      b.node("Add", {r, h}, {sum});
      r = sum;
      if (c.relu_after_add) {
        ValueId rr = b.value("relu_add" + std::to_string(i));
        b.node("Relu", {sum}, {rr});
        r = rr;
      }
    }
    if (i == 0 && c.inner_output) b.output(r);
    h = r;
    cin = c.channels;
  }
  if (c.last_step) {
    ValueId iv = last_step_index(b);
    ValueId last = b.value("last_step");
    b.node("Gather", {h, iv}, {last}).attrs["axis"] = int64_t(2);
    h = last;
  }
  b.output(h);
  return b.g;
}

// The graph fused as the builder does on the cpu backend.
Graph fused(Graph g, std::vector<std::string>* log_lines) {
  PassLog shapes, log;
  EXPECT_TRUE(infer_shapes(g, shapes).is_ok());
  const Backend& be = cpu_backend();
  fuse_conv1d(g, log, [&](const Node& n) { return be.check_supported(g, n).is_ok(); });
  *log_lines = log.lines;
  return g;
}

void expect_fused_matches(const Tcn& c, int64_t n, int64_t t, uint32_t seed) {
  SCOPED_TRACE("levels " + std::to_string(c.levels) + " k " + std::to_string(c.kernel) + " n " + std::to_string(n) + " t " +
               std::to_string(t));
  Graph g = tcn_graph(c, n, t);
  std::vector<HostTensor> in{
      random_tensor(c.time_major ? std::vector<int64_t>{n, t, c.features} : std::vector<int64_t>{n, c.features, t}, seed)};
  auto want = run_graph(g, in);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  std::vector<std::string> log;
  Graph f = fused(g, &log);
  int convs = 0;
  for (const Node& node : f.nodes) {
    EXPECT_NE(node.op, "Conv") << "every level is fused";
    convs += node.op == "FusedConv1d";
  }
  EXPECT_EQ(convs, c.levels);
  auto got = run_graph(f, in);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got.value().size(), want.value().size());
  for (size_t o = 0; o < want.value().size(); ++o) {
    ASSERT_EQ(got.value()[o].dims, want.value()[o].dims);
    expect_close(got.value()[o].f(), want.value()[o].f(), want.value()[o].numel(), 1e-5f, 1e-6f,
                 "output " + std::to_string(o));
  }
}

TEST(CpuFusedConv, MatchesTheUnfusedStackAcrossShapes) {
  Tcn c;
  for (int64_t k : {2, 3, 5})
    for (int64_t levels : {1, 2, 3})
      for (bool res : {false, true}) {
        c.kernel = k;
        c.levels = levels;
        c.residual = res;
        c.relu_after_add = res && k == 3;
        for (int64_t n : {1, 3, 40}) expect_fused_matches(c, n, 23, uint32_t(k * 100 + levels * 10 + n));
      }
}

TEST(CpuFusedConv, ChannelMajorInputFullOutputAndShortSequences) {
  Tcn c;
  c.time_major = false;
  c.last_step = false;  // the whole sequence is the output: every step computed
  expect_fused_matches(c, 5, 17, 7);
  c.time_major = true;
  c.last_step = true;
  c.levels = 3;
  c.kernel = 4;
  expect_fused_matches(c, 4, 3, 8);  // shorter than the receptive field: the padding's zeros
  expect_fused_matches(c, 2, 1, 9);
}

TEST(CpuFusedConv, InnerLevelsComputeOnlyTheReceptiveField) {
  Tcn c;
  c.levels = 3;
  c.kernel = 4;  // dilations 1, 2, 4: the last level reads 1 + 3·4 steps of level 1, level 1 13 + 3·2 of level 0
  std::vector<std::string> log;
  Graph f = fused(tcn_graph(c, 2, 60), &log);
  std::vector<int64_t> needed;
  for (const Node& node : f.nodes)
    if (node.op == "FusedConv1d") needed.push_back(node.attr_i("steps_needed", 0));
  EXPECT_EQ(needed, (std::vector<int64_t>{19, 13, 0}));
  expect_fused_matches(c, 2, 60, 11);
  expect_fused_matches(c, 130, 60, 12);  // several GEMM chunks of whole batch rows

  // Level 0's output read by the user as well: all of its steps are computed.
  c.inner_output = true;
  f = fused(tcn_graph(c, 2, 60), &log);
  needed.clear();
  for (const Node& node : f.nodes)
    if (node.op == "FusedConv1d") needed.push_back(node.attr_i("steps_needed", 0));
  EXPECT_EQ(needed, (std::vector<int64_t>{0, 13, 0}));
  expect_fused_matches(c, 3, 60, 13);
}

TEST(CpuFusedConv, WrongChannelCountIsRefusedWithTheShapes) {
  Tcn c;
  c.levels = 1;
  std::vector<std::string> log;
  Graph f = fused(tcn_graph(c, 2, 10), &log);
  std::vector<HostTensor> in{random_tensor({2, 10, c.features + 1}, 3)};
  auto got = run_graph(f, in);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("channels"), std::string::npos) << got.status().message();
}

}  // namespace
}  // namespace ts::engine::testing
