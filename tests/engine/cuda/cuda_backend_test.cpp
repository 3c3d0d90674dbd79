// The CUDA backend against the CPU backend (the reference): GEMM, elementwise, shape and
// recurrent ops on random inputs at several shapes, whole GRU/LSTM/MLP fixture models at
// several batch/seq shapes, CUDA-graph replays, and the errors a user meets (no device, wrong
// GPU arch, int8, unsupported op, workspace limit); BF16 next to FP16 wherever FP16 is checked. The Transformer/TCN layers and models:
// cuda_layers_test.cpp. Tolerances: cuda_test_util.h.
//
// Labelled `gpu`: without a usable CUDA device every test that needs one skips with the
// reason ("no CUDA device: ..."); the no-device behaviour itself is tested there instead.
#include "cuda_test_util.h"

#ifdef TICKSENTRY_HAVE_CUDA
#include "engine/backends/cuda/cuda_block_cache.h"
#endif

namespace ts::engine::testing {
namespace {

// --- without a GPU too ---

TEST(CudaBackend, IsRegisteredAndReportsItsDevice) {
  if (!cuda()) GTEST_SKIP() << "this build has no cuda backend (nvcc not found at configure)";
  Status s = cuda()->available();
  if (!s) {
    EXPECT_EQ(s.message().rfind("no CUDA device", 0), 0u) << s.message();
    auto r = build_from_graph(Graph{}, PassLog{}, options("cuda"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message().rfind("building: no CUDA device", 0), 0u) << r.status().message();
  } else {
    EXPECT_EQ(cuda()->target_arch().rfind("sm_", 0), 0u) << cuda()->target_arch();
  }
}

TEST(CudaBackend, LoadingACudaPlanWithoutTheRightDeviceIsRefused) {
  if (!cuda()) GTEST_SKIP() << "this build has no cuda backend (nvcc not found at configure)";
  GraphBuilder b;
  ValueId x = b.input("x", known({2, 3}));
  ValueId y = b.value("y");
  b.node("Relu", {x}, {y});
  b.output(y);
  Plan p;
  p.backend = "cuda";
  p.target_arch = "sm_12";  // no such GPU
  p.graph = b.g;
  auto e = Engine::load(serialize_plan(p));
  ASSERT_FALSE(e);
  const std::string& m = e.status().message();
  if (have_gpu()) {
    EXPECT_NE(m.find("plan was built for cuda arch sm_12, this machine is " + cuda()->target_arch()), std::string::npos) << m;
  } else {
    EXPECT_NE(m.find("no CUDA device"), std::string::npos) << m;
  }
}

// --- on the GPU ---

TEST(CudaBackend, RefusesInt8WithoutCalibrationData) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  ValueId x = b.input("x", known({2, 3}));
  ValueId y = b.value("y");
  b.node("Relu", {x}, {y});
  b.output(y);
  auto r = build_from_graph(b.g, PassLog{}, options("cuda", Precision::kINT8));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("int8 needs calibration data: give --calib"), std::string::npos) << r.status().message();
}

TEST(CudaBackend, UnsupportedOpNamesTheNode) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  ValueId x = b.input("x", known({2, 8}));
  ValueId y = b.value("y");
  b.node("HardSwish", {x}, {y});
  b.output(y);
  auto r = build_from_graph(b.g, PassLog{}, options("cuda"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("op HardSwish is not supported by the cuda backend"), std::string::npos)
      << r.status().message();
}

OpCase gemm_case(const std::string& act, bool trans_b, bool bias, int64_t k, int64_t n) {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"n", ""}, {0, k}));
  ValueId w = b.constant("w", trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, random_vec(size_t(k * n), 3, 0.3f));
  std::vector<ValueId> ins{x, w};
  if (bias) ins.push_back(b.constant("bias", {n}, random_vec(size_t(n), 4)));
  ValueId y = b.value("y");
  Node& nd = b.node("FusedGemm", ins, {y});
  nd.attrs["trans_b"] = int64_t(trans_b);
  nd.attrs["activation"] = act;
  b.output(y);
  return {"FusedGemm " + act + (trans_b ? " trans_b" : "") + (bias ? " bias" : ""), b.g, {{{1, k}}, {{7, k}}, {{300, k}}}};
}

TEST(CudaOps, FusedGemmEveryActivationMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (const char* act : {"none", "relu", "sigmoid", "tanh", "gelu"}) {
    for (bool tb : {false, true}) {
      OpCase c = gemm_case(act, tb, true, 48, 20);
      check_case(c, kFp32);
      check_case(c, kTf32, Precision::kFP32, true);
      check_case(c, kFp16, Precision::kFP16);
      check_case(c, kBf16, Precision::kBF16);
    }
  }
  check_case(gemm_case("relu", true, false, 128, 4), kFp32);
}

#ifdef TICKSENTRY_HAVE_CUDA
// A destroyed context's device and staging memory goes to the block cache, and the next context
// of the same shapes takes it instead of allocating (a hot swap then allocates and frees nothing,
// cuda_block_cache.h); the results do not change.
TEST(CudaBackend, ADestroyedContextsMemoryIsTakenByTheNextContext) {
  SKIP_WITHOUT_GPU();
  using cuda::BlockKind;
  OpCase c = gemm_case("relu", true, true, 48, 20);
  auto cpu_e = build_graph(c.g, options("cpu"));
  auto gpu_e = build_graph(c.g, options("cuda"));
  ASSERT_TRUE(cpu_e && gpu_e) << (cpu_e ? gpu_e.status() : cpu_e.status()).to_string();
  std::vector<HostTensor> in = {random_tensor({7, 48}, 11, 1.f)};
  const auto dev0 = cuda::block_cache_stats(BlockKind::kDevice);
  const auto host0 = cuda::block_cache_stats(BlockKind::kMappedHost);
  expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), in, 1e-5, "first context");  // made, run, destroyed
  const auto dev1 = cuda::block_cache_stats(BlockKind::kDevice);
  const auto host1 = cuda::block_cache_stats(BlockKind::kMappedHost);
  EXPECT_GT(dev1.gives, dev0.gives) << "the destroyed context's device buffers are cached";
  EXPECT_GT(host1.gives, host0.gives) << "and its page-locked staging";
  EXPECT_GT(dev1.cached_bytes, 0u);
  expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), in, 1e-5, "second context");
  const auto dev2 = cuda::block_cache_stats(BlockKind::kDevice);
  const auto host2 = cuda::block_cache_stats(BlockKind::kMappedHost);
  EXPECT_GT(dev2.takes, dev1.takes) << "the next context takes cached device buffers";
  EXPECT_GT(host2.takes, host1.takes) << "and cached staging";
}
#endif

TEST(CudaOps, GemmAndMatMulWithConstantWeights) {
  SKIP_WITHOUT_GPU();
  {
    GraphBuilder b;
    ValueId x = b.input("x", sym({"n", ""}, {0, 16}));
    ValueId w = b.constant("w", {5, 16}, random_vec(80, 5));
    ValueId c = b.constant("c", {5}, random_vec(5, 6));
    ValueId y = b.value("y");
    b.node("Gemm", {x, w, c}, {y}).attrs["transB"] = int64_t(1);
    b.output(y);
    check_case({"Gemm transB", b.g, {{{1, 16}}, {{33, 16}}}}, kFp32);
  }
  {
    GraphBuilder b;
    ValueId x = b.input("x", sym({"n", "", ""}, {0, 6, 16}));
    ValueId w = b.constant("w", {16, 9}, random_vec(144, 7));
    ValueId y = b.value("y");
    b.node("MatMul", {x, w}, {y});
    b.output(y);
    check_case({"MatMul rank 3", b.g, {{{1, 6, 16}}, {{5, 6, 16}}}}, kFp32);
  }
}

TEST(CudaOps, ElementwiseAndSoftmaxMatchCpu) {
  SKIP_WITHOUT_GPU();
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg"}) {
    GraphBuilder b;
    ValueId x = b.input("x", sym({"n", ""}, {0, 37}));
    ValueId y = b.value("y");
    b.node(op, {x}, {y});
    b.output(y);
    check_case({op, b.g, {{{1, 37}}, {{129, 37}}}}, kFp32);
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    GraphBuilder b;
    ValueId x = b.input("x", sym({"n", "", ""}, {0, 3, 8}));
    ValueId c = b.constant("c", {8}, random_vec(8, 9, 1.0f));
    ValueId t = b.value("t"), y = b.value("y");
    b.node(op, {x, c}, {t});
    b.node(op, {t, x}, {y});
    b.output(y);
    check_case({std::string(op) + " broadcast", b.g, {{{1, 3, 8}}, {{17, 3, 8}}}}, kFp32);
  }
  {
    GraphBuilder b;
    ValueId x = b.input("x", sym({"n", ""}, {0, 3}));
    ValueId y = b.value("y");
    b.node("Softmax", {x}, {y}).attrs["axis"] = int64_t(-1);
    b.output(y);
    check_case({"Softmax", b.g, {{{1, 3}}, {{500, 3}}}}, kFp32);
  }
}

TEST(CudaOps, ShapeOpsMatchCpu) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  ValueId x = b.input("x", sym({"n", "t", ""}, {0, 0, 4}));
  ValueId t1 = b.value("t1"), u = b.value("u"), s = b.value("s"), gth = b.value("g"), f = b.value("f"), r = b.value("r");
  b.node("Transpose", {x}, {t1}).attrs["perm"] = std::vector<int64_t>{1, 0, 2};   // [t, n, 4]
  b.node("Unsqueeze", {t1, b.constant_i64("ax", {1})}, {u});                       // [t, 1, n, 4]
  b.node("Squeeze", {u, b.constant_i64("ax2", {1})}, {s});                         // [t, n, 4]
  ValueId idx = b.constant_i64("idx", {-1});
  b.node("Gather", {s, idx}, {gth}).attrs["axis"] = int64_t(0);                    // [1, n, 4]
  b.node("Flatten", {gth}, {f}).attrs["axis"] = int64_t(2);                        // [n, 4]
  b.node("Reshape", {f, b.constant_i64("shape", {-1, 2})}, {r});                   // [2n, 2]
  b.output(r);
  b.output(t1);
  check_case({"Transpose/Unsqueeze/Squeeze/Gather/Flatten/Reshape", b.g, {{{1, 5, 4}}, {{9, 3, 4}}}}, kFp32);
}

TEST(CudaOps, GruAndLstmMatchCpuAtSeveralShapes) {
  SKIP_WITHOUT_GPU();
  // batch 300 > 2 × SMs takes the 8-rows-per-CTA path; H 13 is not a multiple of 32.
  for (int64_t h : {13, 32, 128}) {
    std::vector<std::vector<std::vector<int64_t>>> runs{{{1, 1, 24}}, {{5, 3, 24}}, {{30, 300, 24}}, {{60, 1, 24}}};
    for (int lbr : {1, 0}) {
      OpCase c{"GRU H=" + std::to_string(h) + " lbr=" + std::to_string(lbr), rnn_graph(false, h, 24, lbr, false, false, 11), runs};
      check_case(c, kFp32);
      check_case(c, kFp16, Precision::kFP16);
      check_case(c, kBf16, Precision::kBF16);
    }
    for (bool peep : {false, true}) {
      OpCase c{"LSTM H=" + std::to_string(h) + (peep ? " peepholes" : ""), rnn_graph(true, h, 24, 0, peep, false, 21), runs};
      check_case(c, kFp32);
      check_case(c, kFp16, Precision::kFP16);
      check_case(c, kBf16, Precision::kBF16);
    }
  }
}

// The recurrence tactic forced by name (the builder's timing off), so that a tactic the
// timing would not pick at these shapes is still checked against the CPU backend.
void check_rnn_tactic(const OpCase& c, const std::string& tactic, Tol tol, Precision p) {
  Graph g = c.g;
  for (Node& n : g.nodes)
    if (n.op == "GRU" || n.op == "LSTM") n.tactic = tactic;
  BuildOptions go = options("cuda", p);
  go.time_tactics = false;
  auto plan = build_from_graph(g, PassLog{}, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  int rnn_nodes = 0;
  for (const Node& n : pl.value().graph.nodes) {
    if (n.op != "GRU" && n.op != "LSTM") continue;
    ++rnn_nodes;
    EXPECT_EQ(n.tactic, tactic) << c.name;
  }
  EXPECT_EQ(rnn_nodes, 1) << c.name;
  check_case(c, tol, p, false, &g, false);
}

// Tactic regs_b1 (R in registers, cuda_rnn_regs.cu): every unit count path (H 13 → 1 k-slice,
// 64 → 2, 128 → 4), GRU lbr 0/1, LSTM ± peepholes, FP32 and FP16; batch 300 > 2 × SMs and
// FP32 LSTM at H=128 run its fallback (the persistent_ks4_rows1 kernel).
TEST(CudaOps, RegsB1TacticMatchesCpu) {
  SKIP_WITHOUT_GPU();
  std::vector<std::vector<std::vector<int64_t>>> runs{{{1, 1, 24}}, {{5, 3, 24}}, {{60, 1, 24}}, {{60, 16, 24}}, {{30, 300, 24}}};
  for (int64_t h : {13, 64, 128}) {
    for (int lbr : {1, 0}) {
      OpCase c{"regs_b1 GRU H=" + std::to_string(h) + " lbr=" + std::to_string(lbr), rnn_graph(false, h, 24, lbr, false, false, 11), runs};
      check_rnn_tactic(c, "regs_b1", kFp32, Precision::kFP32);
      check_rnn_tactic(c, "regs_b1", kFp16, Precision::kFP16);
    }
    for (bool peep : {false, true}) {
      OpCase c{"regs_b1 LSTM H=" + std::to_string(h) + (peep ? " peepholes" : ""), rnn_graph(true, h, 24, 0, peep, false, 21), runs};
      check_rnn_tactic(c, "regs_b1", kFp32, Precision::kFP32);
      check_rnn_tactic(c, "regs_b1", kFp16, Precision::kFP16);
    }
  }
  OpCase c{"regs_b1 GRU initial_h", rnn_graph(false, 128, 8, 1, false, true, 31), {{{7, 4, 8}, {1, 4, 128}}, {{60, 1, 8}, {1, 1, 128}}}};
  check_rnn_tactic(c, "regs_b1", kFp32, Precision::kFP32);
}

TEST(CudaOps, UnknownRecurrenceTacticIsRefusedNamingIt) {
  SKIP_WITHOUT_GPU();
  Graph g = rnn_graph(false, 32, 8, 1, false, false, 5);
  for (Node& n : g.nodes)
    if (n.op == "GRU") n.tactic = "regs_b9";
  BuildOptions go = options("cuda");
  go.time_tactics = false;
  auto plan = build_from_graph(g, PassLog{}, go);
  Status s = plan.status();
  if (plan) {  // refused at load at the latest
    auto e = Engine::load(plan.value());
    ASSERT_FALSE(e);
    s = e.status();
  }
  EXPECT_NE(s.message().find("has no tactic 'regs_b9' in the cuda backend"), std::string::npos) << s.message();
}

TEST(CudaOps, GruWithInitialState) {
  SKIP_WITHOUT_GPU();
  OpCase c{"GRU initial_h", rnn_graph(false, 64, 8, 1, false, true, 31), {{{7, 4, 8}, {1, 4, 64}}, {{3, 290, 8}, {1, 290, 64}}}};
  check_case(c, kFp32);
}

TEST(CudaOps, WorkspaceLimitIsHonouredWithAClearError) {
  SKIP_WITHOUT_GPU();
  BuildOptions o = options("cuda");
  o.workspace_bytes = int64_t(2) << 20;
  auto e = build_graph(rnn_graph(false, 128, 24, 1, false, false, 41), o);
  ASSERT_TRUE(e) << e.status().to_string();
  std::vector<HostTensor> small{random_tensor({4, 2, 24}, 1)};
  auto ok = run(*e.value(), small);
  EXPECT_TRUE(ok) << ok.status().to_string();
  std::vector<HostTensor> big{random_tensor({60, 300, 24}, 2)};  // 60·300·384 floats of gates = 27.6 MB
  auto r = run(*e.value(), big);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("over the workspace limit of 2097152 bytes"), std::string::npos) << r.status().message();
}

// The builder times tactics at the shape the executor will run: the opt batch rounded up to its
// shape bucket (300 → 512 rows), not the opt batch itself.
TEST(CudaBackend, TacticsAreTimedAtTheOptBatchsBucket) {
  SKIP_WITHOUT_GPU();
  const fs::path onnx = model_fixtures() / "gru_1x32" / "model.onnx";
  if (!fs::exists(onnx)) GTEST_SKIP() << onnx << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)";
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 30, 32}, {300, 60, 32}, {4096, 120, 32}};
  BuildOptions go = options("cuda");
  go.profiles = {prof};
  auto plan = build(read_bytes(onnx), go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  int lines = 0;
  for (const std::string& l : pl.value().pass_log) {
    if (l.rfind("tactic: ", 0) != 0) continue;
    ++lines;
    EXPECT_NE(l.find("512"), std::string::npos) << "not timed at the opt batch's bucket: " << l;
    EXPECT_EQ(l.find("300"), std::string::npos) << "timed at the opt batch itself: " << l;
  }
  EXPECT_GT(lines, 0) << "no timed node in the plan's pass log";
}

// --- whole models (fixtures from models/fixtures.py) ---

class CudaModels : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaModels, Fp32MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kFP32, false, kFp32);
}
TEST_P(CudaModels, Tf32MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kFP32, true, kTf32);
}
TEST_P(CudaModels, Fp16MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kFP16, false, kFp16);
}
TEST_P(CudaModels, Bf16MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kBF16, false, kBf16);
}
INSTANTIATE_TEST_SUITE_P(Fixtures, CudaModels,
                         ::testing::Values("gru_1x32", "gru_1x128", "gru_2x128", "lstm_2x128", "mlp_softmax"));

}  // namespace
}  // namespace ts::engine::testing
