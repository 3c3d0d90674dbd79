// The stacked-GRU wavefront (GRUStack node, tactic "wave", cuda_rnn_wave.cu) against the CPU
// backend, and the fusions that make the node (passes/fuse_rnn_stack.cpp): the two layers, the
// model's input Transpose and its head.
//
// The pass tests run everywhere; the kernel tests are labelled `gpu` with the rest of the CUDA
// tests and skip with the reason where no CUDA device is present.
#include "engine/passes/passes.h"
#include "rnn_stack_test_util.h"

#ifdef TICKSENTRY_HAVE_CUDA
#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_executor.h"
#include "engine/backends/cuda/cuda_launch.h"
#endif

namespace ts::engine::testing {
namespace {

// X [T, B, I] → GRU₁ → Squeeze(axis 1) → GRU₂ → Y, Y_h, as PyTorch exports nn.GRU(num_layers=2).
Graph stacked_gru(int64_t h, int64_t in, int lbr, uint32_t seed) {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"seq", "batch", ""}, {0, 0, in}));
  const auto [w1, r1, b1, w2, r2, b2] = stack_weights(b, 3, h, in, seed);
  ValueId axes = b.constant_i64("axes", {1});
  ValueId y1 = b.value("y1"), yh1 = b.value("yh1"), y1s = b.value("y1s"), y = b.value("y"), yh = b.value("yh");
  Node& l1 = b.node("GRU", {x, w1, r1, b1}, {y1, yh1});
  l1.name = "/rnn/GRU";
  Node& sq = b.node("Squeeze", {y1, axes}, {y1s});
  sq.name = "/rnn/Squeeze";
  Node& l2 = b.node("GRU", {y1s, w2, r2, b2}, {y, yh});
  l2.name = "/rnn/GRU_1";
  for (Node* n : {&b.g.nodes[0], &b.g.nodes[2]}) {
    n->attrs["hidden_size"] = h;
    n->attrs["linear_before_reset"] = int64_t(lbr);
  }
  b.output(y);
  b.output(yh);
  return b.g;
}

Graph gru_with_io(int64_t h, int64_t in, int64_t outs, uint32_t seed, bool also_out = false) {
  return stack_classifier("GRU", h, in, outs, seed, also_out);
}

// --- the pass (no device) ---------------------------------------------------------------------

TEST(FuseRnnStack, TwoStackedGrusBecomeOneNodeWhereTheBackendRunsIt) {
  Graph g = stacked_gru(64, 20, 1, 3);
  PassLog log;
  EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "GRUStack");
  EXPECT_EQ(f.name, "/rnn/GRU");
  EXPECT_EQ(f.fused_from, (std::vector<std::string>{"/rnn/GRU", "/rnn/Squeeze", "/rnn/GRU_1"}));
  ASSERT_EQ(f.inputs.size(), 7u);
  EXPECT_EQ(g.value(f.inputs[0]).name, "x");
  EXPECT_EQ(g.value(f.inputs[4]).name, "W2");
  EXPECT_EQ(g.value(f.outputs[0]).name, "y");
  EXPECT_EQ(f.attr_i("hidden_size", 0), 64);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("GRUStack /rnn/GRU"), std::string::npos) << log.lines[0];
}

TEST(FuseRnnStack, LeavesLayersAloneWhenTheyCannotBeFused) {
  auto fused = [](Graph g) {
    PassLog log;
    return fuse_rnn_stack(g, log, [](const Node&) { return true; });
  };
  {  // the backend does not run GRUStack (the CPU backend)
    Graph g = stacked_gru(64, 20, 1, 3);
    PassLog log;
    EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return false; }), 0);
    EXPECT_EQ(count_op(g, "GRU"), 2);
  }
  {  // layer 1's Y is also a graph output
    Graph g = stacked_gru(64, 20, 1, 3);
    g.outputs.push_back(g.nodes[0].outputs[0]);
    EXPECT_EQ(fused(g), 0);
  }
  {  // layer 1's Y_h is used
    Graph g = stacked_gru(64, 20, 1, 3);
    g.outputs.push_back(g.nodes[0].outputs[1]);
    EXPECT_EQ(fused(g), 0);
  }
  {  // the layers differ in an attribute
    Graph g = stacked_gru(64, 20, 1, 3);
    g.nodes[2].attrs["linear_before_reset"] = int64_t(0);
    EXPECT_EQ(fused(g), 0);
  }
  {  // different tactics forced on the two layers
    Graph g = stacked_gru(64, 20, 1, 3);
    g.nodes[0].tactic = "mma";
    g.nodes[2].tactic = "regs_b1";
    EXPECT_EQ(fused(g), 0);
  }
  {  // the same per-layer tactic carries over as "layers:<t>"
    Graph g = stacked_gru(64, 20, 1, 3);
    g.nodes[0].tactic = g.nodes[2].tactic = "mma";
    PassLog log;
    ASSERT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
    EXPECT_EQ(g.nodes[0].tactic, "layers:mma");
  }
}

// The model's input Transpose and head (last step → Gemm → Sigmoid) go into the GRUStack node.
TEST(FuseRnnStack, TakesInTheInputTransposeAndTheHead) {
  Graph g = gru_with_io(64, 20, 1, 3);
  PassLog log;
  ASSERT_TRUE(run_passes(g, log));
  EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
  ASSERT_EQ(g.nodes.size(), 1u) << "nodes left: " << g.nodes.size();
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "GRUStack");
  ASSERT_EQ(f.inputs.size(), 9u);
  EXPECT_EQ(g.value(f.inputs[0]).name, "x");
  EXPECT_EQ(g.value(f.inputs[7]).name, "HW");
  EXPECT_EQ(g.value(f.inputs[8]).name, "HB");
  EXPECT_EQ(f.attr_i("x_batch_first", 0), 1);
  EXPECT_EQ(f.attr_i("head_trans_b", 0), 1);
  EXPECT_EQ(f.attr_s("head_activation", ""), "sigmoid");
  ASSERT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(g.value(f.outputs[0]).name, "out");
  EXPECT_EQ(f.fused_from.size(), 8u);  // GRU, Squeeze, GRU, Transpose, Squeeze, Transpose, Gather, Gemm+Sigmoid
}

// Where the transposed Y is also a graph output the head stays (the input Transpose still goes).
TEST(FuseRnnStack, KeepsTheHeadWhenItsValuesAreUsedElsewhere) {
  Graph g = gru_with_io(64, 20, 1, 3, true);
  PassLog log;
  ASSERT_TRUE(run_passes(g, log));
  EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
  EXPECT_EQ(count_op(g, "GRUStack"), 1);
  EXPECT_EQ(count_op(g, "FusedGemm"), 1);
  EXPECT_EQ(count_op(g, "Transpose"), 1);  // Y's, not X's
  for (const Node& n : g.nodes) {
    if (n.op != "GRUStack") continue;
    EXPECT_EQ(n.inputs.size(), 7u);
    EXPECT_EQ(n.attr_i("x_batch_first", 0), 1);
    EXPECT_EQ(g.value(n.inputs[0]).name, "x");
  }
}

// Shape inference knows the fused node: the stack alone ([T, 1, B, H], Y_h), with the input
// Transpose taken in, and with the head ([B, N]) give the shapes the unfused layers had, symbols
// kept; a head whose W does not take the hidden size is refused naming the node.
TEST(FuseRnnStack, FusedStacksHaveTheUnfusedLayersShapes) {
  auto shapes_of = [](Graph g, bool fuse, const std::vector<std::string>& names) {
    PassLog log;
    EXPECT_TRUE(run_passes(g, log));
    if (fuse) {
      EXPECT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
    }
    Status s = infer_shapes(g, log);
    EXPECT_TRUE(s.is_ok()) << s.message();
    std::vector<std::string> out;
    for (const auto& n : names) out.push_back(shape_to_string(g.value(g.find_value(n)).shape));
    return out;
  };
  EXPECT_EQ(shapes_of(stacked_gru(64, 20, 1, 3), true, {"y", "yh"}), shapes_of(stacked_gru(64, 20, 1, 3), false, {"y", "yh"}));
  EXPECT_EQ(shapes_of(stacked_gru(64, 20, 1, 3), true, {"y"})[0], "[seq,1,batch,64]");
  EXPECT_EQ(shapes_of(gru_with_io(64, 20, 3, 3), true, {"out"})[0], "[batch,3]");
  EXPECT_EQ(shapes_of(stack_classifier("LSTM", 48, 20, 2, 3), true, {"out"})[0], "[batch,2]");
  {
    Graph g = gru_with_io(64, 20, 3, 3);
    PassLog log;
    ASSERT_TRUE(run_passes(g, log));
    ASSERT_EQ(fuse_rnn_stack(g, log, [](const Node&) { return true; }), 1);
    Node& f = g.nodes[0];
    ASSERT_EQ(f.op, "GRUStack");
    f.attrs["head_trans_b"] = int64_t(0);  // W [3, 64] read as [K=3, N=64]: K is not the hidden size
    Status s = infer_shapes(g, log);
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("head W"), std::string::npos) << s.message();
  }
}

// --- the kernel (H200) -------------------------------------------------------------------------

// The stack of two GRU layers with `tactic` forced, against the CPU backend (rnn_stack_test_util.h).
void check_gru_stack(const std::string& name, const Graph& g, int64_t h, int64_t in, const std::vector<std::pair<int64_t, int64_t>>& tb,
                     Tol tol, Precision p, const std::string& tactic) {
  check_stack(name, g, "GRU", "GRUStack", h, in, tb, tol, p, tactic, 23);
}

// Batch 1, 2, 7 (one partial 8-row cluster), 64, 300 (partial last cluster), 2000 (more
// clusters than fit the GPU at once), 4096 (above kRnnWaveMaxBatch: the layers one by one); T 5,
// 60, 120; H 128 (input 32, the models' size) and 64 (input 20: a partly empty k tile); FP16 and
// BF16.
TEST(CudaRnnWave, WavefrontMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {5, 2}, {120, 7}, {60, 64}, {120, 300}, {5, 2000}, {60, 2000}, {5, 4096}};
  check_gru_stack("GRU-2x128 I=32", stacked_gru(128, 32, 1, 201), 128, 32, tb, kFp16, Precision::kFP16, "wave");
  check_gru_stack("GRU-2x128 I=32", stacked_gru(128, 32, 1, 201), 128, 32, {{60, 1}, {120, 7}, {60, 300}}, kBf16,
              Precision::kBF16, "wave");
  check_gru_stack("GRU-2x64 I=20", stacked_gru(64, 20, 1, 211), 64, 20, {{60, 1}, {5, 2}, {120, 7}, {60, 64}, {120, 300}, {5, 2000}},
              kFp16, Precision::kFP16, "wave");
  check_gru_stack("GRU-2x128 I=64", stacked_gru(128, 64, 1, 221), 128, 64, {{60, 1}, {120, 300}}, kFp16, Precision::kFP16, "wave");
}

// The node with the model's input Transpose and head absorbed (tactic wave forced) vs the CPU
// backend on the unfused graph: the wavefront up to 2,048 rows, the layers one by one (a
// transpose, the layers, the head kernel) above; one and three head outputs.
void check_stack_io(const std::string& name, const Graph& g, int64_t in, const std::vector<std::pair<int64_t, int64_t>>& bt,
                    Precision p) {
  SCOPED_TRACE(name);
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
    if (n.op == "GRU") n.tactic = "wave";
  BuildOptions go = opts("cuda", p);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, log, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  ASSERT_EQ(pl.value().graph.nodes.size(), 1u) << "the plan should be the one GRUStack node";
  EXPECT_EQ(pl.value().graph.nodes[0].op, "GRUStack");
  EXPECT_EQ(pl.value().graph.nodes[0].inputs.size(), 9u);
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  uint32_t seed = 31;
  for (auto [b, t] : bt) {
    std::vector<HostTensor> ins{random_tensor({b, t, in}, seed++, 1.5f)};
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), ins, kFp16.rel,
                           "at [B, T] = [" + std::to_string(b) + ", " + std::to_string(t) + "]");
  }
}

TEST(CudaRnnWave, FusedInputTransposeAndHeadMatchCpu) {
  SKIP_WITHOUT_GPU();
  check_stack_io("GRU-2x128 I=32 head 1", gru_with_io(128, 32, 1, 251), 32, {{1, 60}, {7, 120}, {300, 60}, {2000, 5}, {4096, 5}},
                 Precision::kFP16);
  check_stack_io("GRU-2x64 I=20 head 3", gru_with_io(64, 20, 3, 261), 20, {{1, 60}, {37, 30}, {4096, 5}}, Precision::kFP16);
  check_stack_io("GRU-2x128 I=32 head 1 bf16", gru_with_io(128, 32, 1, 251), 32, {{1, 60}, {300, 60}}, Precision::kBF16);
}

// Tactic "wave_split" (each recurrence and layer 2's input side over two CTAs of a 6-CTA
// cluster, up to kRnnWaveSplitMaxBatch rows; the 3-CTA wavefront above, the layers above
// kRnnWaveMaxBatch) forced on the fused node vs the CPU backend on the unfused graph. The pass
// carries only "wave" from the layers, so the test fuses (and, with `passes`, runs the graph
// passes first, as an ONNX build does: the head is absorbed) and sets the node's tactic itself.
void check_split(const std::string& name, const Graph& g, bool batch_first, int64_t in, bool passes,
                 const std::vector<std::pair<int64_t, int64_t>>& tb, Tol tol, Precision p) {
  SCOPED_TRACE(name + " " + tol.name);
  auto opts = [&](const std::string& backend, Precision pr) {
    BuildOptions o = options(backend, pr);
    OptimizationProfile prof;
    prof.inputs["x"] = batch_first ? ShapeRange{{1, 1, in}, {8, 60, in}, {kStackMaxBatch, 120, in}}
                                   : ShapeRange{{1, 1, in}, {60, 8, in}, {120, kStackMaxBatch, in}};
    o.profiles = {prof};
    return o;
  };
  auto cpu_e = build_graph(g, opts("cpu", Precision::kFP32));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = g;
  PassLog log;
  if (passes) {
    ASSERT_TRUE(run_passes(gg, log));
  }
  ASSERT_EQ(fuse_rnn_stack(gg, log, [](const Node&) { return true; }), 1);
  for (Node& n : gg.nodes)
    if (n.op == "GRUStack") n.tactic = "wave_split";
  BuildOptions go = opts("cuda", p);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, log, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  ASSERT_EQ(count_op(pl.value().graph, "GRUStack"), 1);
  for (const Node& n : pl.value().graph.nodes) {
    if (n.op == "GRUStack") {
      EXPECT_EQ(n.tactic, "wave_split");
    }
  }
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  uint32_t seed = 41;
  for (auto [t, b] : tb) {
    std::vector<HostTensor> ins{random_tensor(batch_first ? std::vector<int64_t>{b, t, in} : std::vector<int64_t>{t, b, in}, seed++, 1.5f)};
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), ins, tol.rel,
                           "at [T, B] = [" + std::to_string(t) + ", " + std::to_string(b) + "]", size_t(t * b * 128));
  }
}

// Batch 1, 7 (a partial cluster), 64, 176 (the split's last batch), 300 and 2000 (the 3-CTA
// wavefront), 4096 (the layers); T 1, 2, 5, 60, 120; Y and Y_h, and the fused head; FP16 and
// BF16; hidden 64 (runs as "wave") and input 64 (four k tiles of x).
TEST(CudaRnnWave, SplitWavefrontMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {1, 1}, {2, 3}, {5, 7}, {120, 7}, {60, 64}, {60, 100}, {60, 128}, {120, 176},
                                                    {120, 300}, {5, 2000}, {60, 2000}, {5, 4096}};
  check_split("GRU-2x128 I=32", stacked_gru(128, 32, 1, 201), false, 32, false, tb, kFp16, Precision::kFP16);
  check_split("GRU-2x128 I=32", stacked_gru(128, 32, 1, 201), false, 32, false, {{60, 1}, {120, 7}, {60, 300}}, kBf16,
              Precision::kBF16);
  check_split("GRU-2x128 I=64", stacked_gru(128, 64, 1, 221), false, 64, false, {{60, 1}, {120, 9}}, kFp16, Precision::kFP16);
  check_split("GRU-2x64 I=20", stacked_gru(64, 20, 1, 211), false, 20, false, {{60, 1}, {5, 7}}, kFp16, Precision::kFP16);
  // [T, B] of a batch-first input [B, T, I]; the head of 1 and of 3 outputs.
  check_split("GRU-2x128 I=32 head 1", gru_with_io(128, 32, 1, 251), true, 32, true,
              {{60, 1}, {120, 7}, {5, 1}, {60, 176}, {60, 300}, {5, 2000}, {5, 4096}}, kFp16, Precision::kFP16);
  check_split("GRU-2x128 I=32 head 3 bf16", gru_with_io(128, 32, 3, 261), true, 32, true, {{60, 1}, {30, 37}}, kBf16,
              Precision::kBF16);
}

// Where the wavefront does not apply the node runs its layers one by one: linear_before_reset
// = 0, and tactic "layers:<t>" (layer 1's Y in the scratch region, layer 2's projection after it).
TEST(CudaRnnWave, LayerByLayerTacticsAndFallbackMatchCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {120, 7}, {60, 300}};
  check_gru_stack("GRU-2x128 lbr=0", stacked_gru(128, 32, 0, 231), 128, 32, tb, kFp16, Precision::kFP16, "wave");
  check_gru_stack("GRU-2x128", stacked_gru(128, 32, 1, 201), 128, 32, tb, kFp16, Precision::kFP16, "mma_x2");
  check_gru_stack("GRU-2x128", stacked_gru(128, 32, 1, 201), 128, 32, tb, kFp16, Precision::kFP16, "persistent_ks4");
}

// The builder times "wave" against the per-layer tactics and records its choice; FP32 plans fuse
// the stack too (its FP32 wavefront: cuda_rnn_wave_f32_test.cpp).
TEST(CudaRnnWave, BuilderTimesTheStackAndFp32FusesItToo) {
  SKIP_WITHOUT_GPU();
  Graph g = stacked_gru(128, 32, 1, 201);
  auto fp16 = build_from_graph(g, PassLog{}, wave_options("cuda", Precision::kFP16, 32));
  ASSERT_TRUE(fp16) << fp16.status().to_string();
  auto p16 = deserialize_plan(fp16.value());
  ASSERT_TRUE(p16);
  ASSERT_EQ(count_op(p16.value().graph, "GRUStack"), 1);
  bool timed = false;
  for (const std::string& l : p16.value().pass_log) timed = timed || l.find("(GRUStack) →") != std::string::npos;
  EXPECT_TRUE(timed) << "no tactic line for the GRUStack node in the plan's pass log";
  auto fp32 = build_from_graph(g, PassLog{}, wave_options("cuda", Precision::kFP32, 32));
  ASSERT_TRUE(fp32) << fp32.status().to_string();
  auto p32 = deserialize_plan(fp32.value());
  ASSERT_TRUE(p32);
  EXPECT_EQ(count_op(p32.value().graph, "GRUStack"), 1);
  EXPECT_EQ(count_op(p32.value().graph, "GRU"), 0);
}

#ifdef TICKSENTRY_HAVE_CUDA

// Where run()'s zero-copy copy-in reads (host logic, runs everywhere): the caller's page-locked
// rows when their device address and size suit the copy kernel's element size, never more bytes
// than the caller's (a bucket's padding rows lie past the caller's buffer); else the staging's
// whole bucket, with the caller's rows memcpy'd there first.
TEST(CudaZeroCopy, CopyInReadsTheCallersRowsOrTheWholeStaging) {
  alignas(16) static char caller[4096], staging[8192];
  using cuda::copy_in_source;
  cuda::CopyInSource s = copy_in_source(caller, 3 * 1920, 8, staging, 4 * 1920);  // batch 3 in bucket 4
  EXPECT_EQ(s.src, caller);
  EXPECT_EQ(s.bytes, 3u * 1920);
  EXPECT_FALSE(s.staged);
  s = copy_in_source(nullptr, 3 * 1920, 8, staging, 4 * 1920);  // pageable: no device address
  EXPECT_EQ(s.src, staging);
  EXPECT_EQ(s.bytes, 4u * 1920);
  EXPECT_TRUE(s.staged);
  s = copy_in_source(caller + 4, 1920, 8, staging, 1920);  // not 8-byte aligned for an 8-byte copy kernel
  EXPECT_EQ(s.src, staging);
  EXPECT_TRUE(s.staged);
  s = copy_in_source(caller + 4, 1920, 4, staging, 1920);  // but fine for a 4-byte one
  EXPECT_EQ(s.src, caller + 4);
  EXPECT_FALSE(s.staged);
  s = copy_in_source(caller, 12, 8, staging, 16);  // 12 bytes are not whole 8-byte elements
  EXPECT_EQ(s.src, staging);
  EXPECT_EQ(s.bytes, 16u);
  s = copy_in_source(caller, 32, 8, staging, 16);  // more than the bucket: never
  EXPECT_EQ(s.src, staging);
  s = copy_in_source(caller, 0, 8, staging, 16);  // nothing to read
  EXPECT_TRUE(s.staged);
}

// Programmatic dependent launch under stream capture only right after one kernel node (a
// programmatic graph edge joins two kernels); eagerly always, on sm_90.
TEST(CudaZeroCopy, ProgrammaticLaunchOnlyAfterAKernelNodeInACapture) {
  SKIP_WITHOUT_GPU();
  int dev = 0, major = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
  if (major < 9) GTEST_SKIP() << "programmatic dependent launch needs sm_90";
  const char* env = std::getenv("TS_CUDA_PDL");
  if (env && std::string(env) == "0") GTEST_SKIP() << "TS_CUDA_PDL=0 turns it off";
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  void* a = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 4096), cudaSuccess);
  EXPECT_TRUE(cuda::programmatic_launch_ok(s)) << "eager";
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const bool first = cuda::programmatic_launch_ok(s);  // no node before it
  cudaMemsetAsync(a, 0, 2048, s);
  const bool after_memset = cuda::programmatic_launch_ok(s);
  cuda::StridedDims d;
  d.rank = 1;
  d.dims[0] = 256;
  d.strides[0] = 1;
  const Status ls = cuda::launch_strided_copy(a, static_cast<char*>(a) + 2048, d, 8, s);
  const bool after_kernel = cuda::programmatic_launch_ok(s);
  const Status dep = cuda::launch_strided_copy_dependent(static_cast<char*>(a) + 2048, a, d, 8, s);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  EXPECT_TRUE(ls) << ls.to_string();
  EXPECT_TRUE(dep) << dep.to_string();
  EXPECT_FALSE(first);
  EXPECT_FALSE(after_memset);
  EXPECT_TRUE(after_kernel);
  cudaGraphExec_t x = nullptr;
  EXPECT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess) << "a captured programmatic edge instantiates";
  if (x) {
    EXPECT_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    cudaGraphExecDestroy(x);
  }
  cudaGraphDestroy(g);
  cudaFree(a);
  cudaStreamDestroy(s);
}

// execute() on the models' GRU-2x128 shape (batch-first x [B, 60, 32], head 1, FP16, wave_split)
// with the caller's input in page-locked memory (Engine::allocate_host: the zero-copy graph's
// copy-in reads it directly, re-pointed per call), in pageable memory (memcpy into the staging),
// the same page-locked buffer twice with new rows, and another one, over each bucket's eager,
// capture and replay calls at batches 1, 3 (bucket 4), 13 (bucket 16: the copy-in reads the
// caller's 13 rows, the padding rows keep what the tensor held), 16 and 64. Every call matches
// the CPU backend and, exactly, a second context that only ever sees pageable memory (the staging
// path); nothing past the caller's rows of the output is written.
TEST(CudaZeroCopy, PinnedCallerInputsMatchTheCpuAndTheStagingPath) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kT = 60, kIn = 32, kMax = 64;
  const Graph g = gru_with_io(128, kIn, 1, 251);
  auto opts = [&](const std::string& backend, Precision pr) {
    BuildOptions o = options(backend, pr);
    OptimizationProfile prof;
    prof.inputs["x"] = ShapeRange{{1, kT, kIn}, {1, kT, kIn}, {kMax, kT, kIn}};
    o.profiles = {prof};
    return o;
  };
  auto cpu_e = build_graph(g, opts("cpu", Precision::kFP32));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = g;
  PassLog log;
  ASSERT_TRUE(run_passes(gg, log));
  ASSERT_EQ(fuse_rnn_stack(gg, log, [](const Node&) { return true; }), 1);
  for (Node& n : gg.nodes)
    if (n.op == "GRUStack") n.tactic = "wave_split";
  BuildOptions go = opts("cuda", Precision::kFP16);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, log, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  auto ctx = gpu_e.value()->create_context();
  auto staged = gpu_e.value()->create_context();
  auto cpu = cpu_e.value()->create_context();
  ASSERT_TRUE(ctx && staged && cpu);
  const size_t in_bytes = size_t(kMax * kT * kIn) * 4;
  auto pin_a = gpu_e.value()->allocate_host(in_bytes), pin_b = gpu_e.value()->allocate_host(in_bytes);
  ASSERT_TRUE(pin_a && pin_b);
  auto run_into = [](ExecutionContext& c, const TensorView& x, int64_t batch) {
    std::vector<float> y(size_t(kMax) + 16, NAN);
    std::vector<TensorView> in{x}, out(1);
    out[0].data = y.data();
    out[0].capacity_bytes = y.size() * sizeof(float);
    Status s = c.execute(in, out);
    EXPECT_TRUE(s) << s.to_string();
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{batch, 1}));
    for (size_t i = size_t(batch); i < y.size(); ++i) {
      if (!std::isnan(y[i])) {
        ADD_FAILURE() << "output element " << i << " past the caller's " << batch << " rows was written";
        break;
      }
    }
    y.resize(size_t(batch));
    return y;
  };
  enum class Mem { kPinA, kPinB, kPageable };
  uint32_t seed = 700;
  for (int64_t batch : {1, 3, 13, 16, 64}) {
    int call = 0;
    for (Mem m : {Mem::kPinA, Mem::kPinA, Mem::kPinB, Mem::kPageable, Mem::kPinA, Mem::kPinB, Mem::kPinB}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " call " + std::to_string(++call));
      HostTensor x = random_tensor({batch, kT, kIn}, seed++, 1.5f);
      TensorView xv = x.view();
      if (m != Mem::kPageable) {
        void* pin = m == Mem::kPinA ? pin_a.get() : pin_b.get();
        std::memcpy(pin, x.bytes.data(), x.bytes.size());
        xv.data = pin;
      }
      const std::vector<float> got = run_into(*ctx.value(), xv, batch);
      const std::vector<float> want_gpu = run_into(*staged.value(), x.view(), batch);
      const std::vector<float> want_cpu = run_into(*cpu.value(), x.view(), batch);
      EXPECT_EQ(compare(got, want_gpu, 1e-6), "") << "against the staging path";
      EXPECT_EQ(compare(got, want_cpu, kFp16.rel), "") << "against the cpu backend";
    }
  }
  // The caller's-stream path on the same context after the zero-copy graphs (whose wavefront
  // wrote its head straight into the mapped staging): its kernels-only graph writes the device
  // output, copied to the caller's page-locked buffer; execute() in between still agrees.
  {
    cudaStream_t st = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
    auto out_pin = gpu_e.value()->allocate_host(size_t(kMax) * 4);
    ASSERT_TRUE(out_pin);
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE("enqueue_on_stream call " + std::to_string(call + 1));
      HostTensor x = random_tensor({1, kT, kIn}, seed++, 1.5f);
      std::memcpy(pin_a.get(), x.bytes.data(), x.bytes.size());
      const std::vector<float> want = run_into(*cpu.value(), x.view(), 1);
      std::vector<TensorView> in{TensorView{DType::kF32, x.dims, pin_a.get()}}, out(1);
      out[0].dtype = DType::kF32;
      out[0].data = out_pin.get();
      out[0].capacity_bytes = size_t(kMax) * 4;
      Status s = ctx.value()->enqueue_on_stream(in, out, DeviceStream{st});
      ASSERT_TRUE(s) << s.to_string();
      ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
      const float* o = static_cast<const float*>(out_pin.get());
      EXPECT_EQ(compare(std::vector<float>(o, o + 1), want, kFp16.rel), "") << "enqueue_on_stream";
      EXPECT_EQ(compare(run_into(*ctx.value(), in[0], 1), want, kFp16.rel), "") << "execute() after it";
    }
    cudaStreamDestroy(st);
  }
  // Where a bucket chose zero-copy (measured at capture) and its input is staged and at least
  // kZeroCopyCallerMinBytes (bucket 16's 123 KB; not buckets 1 and 4, whose memcpy is cheaper,
  // nor bucket 64's 491 KB, copied from the caller's memory outside the graph), its copy-in node
  // is re-pointed at the caller's page-locked input.
  const std::string d = ctx.value()->describe();
  for (const char* bucket : {"run [1,60,32]: ", "run [4,60,32]: ", "run [16,60,32]: ", "run [64,60,32]: "}) {
    const size_t at = d.find(bucket);
    ASSERT_NE(at, std::string::npos) << d;
    const std::string line = d.substr(at, d.find('\n', at) - at);
    const bool zero_copy = line.find("-> zero-copy") != std::string::npos;
    const bool direct = line.find("copy-in reads page-locked caller inputs directly (1 re-pointable") != std::string::npos;
    EXPECT_EQ(direct, zero_copy && std::string(bucket) == "run [16,60,32]: ") << line;
  }
}

#endif  // TICKSENTRY_HAVE_CUDA

}  // namespace
}  // namespace ts::engine::testing
