// The tensor-core recurrence (tactic "mma", cuda_rnn_mma.cu) against the CPU backend: GRU
// (linear_before_reset 0 and 1) and LSTM (± peepholes) at H = 128, batch 1 … 4500 (16- and
// 32-row tiles, partial tiles), T = 30/60/120, FP16 and BF16 (≤ 1e-2); hidden sizes it does not
// take (13, 136) and FP32 plans run its fallback and still match. The tactic is forced by name
// (the builder's timing off) so that these shapes always run it.
//
// Labelled `gpu` (engine_cuda_test): skipped with the reason where no CUDA device is present.
#include "cuda_test_util.h"

namespace ts::engine::testing {
namespace {

constexpr int64_t kMaxBatch = 4608;

// One profile up to kMaxBatch (the default stops at 1024).
BuildOptions mma_options(const Graph& g, const std::string& backend, Precision p) {
  return rnn_options(g, backend, p, 30, 64, kMaxBatch);
}

// CUDA with tactic "mma" forced vs CPU, at each run's [T, B] (inputs random, seeded).
void check_mma(const std::string& name, const Graph& g, const std::vector<std::pair<int64_t, int64_t>>& tb, Tol tol,
               Precision p, const std::string& tactic = "mma") {
  SCOPED_TRACE(name + " " + tol.name + " tactic " + tactic);
  auto cpu_e = build_graph(g, mma_options(g, "cpu", Precision::kFP32));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = g;
  for (Node& n : gg.nodes)
    if (n.op == "GRU" || n.op == "LSTM") n.tactic = tactic;
  BuildOptions go = mma_options(gg, "cuda", p);
  go.time_tactics = false;
  auto plan = build_from_graph(gg, PassLog{}, go);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto pl = deserialize_plan(plan.value());
  ASSERT_TRUE(pl) << pl.status().to_string();
  for (const Node& n : pl.value().graph.nodes) {
    if (n.op == "GRU" || n.op == "LSTM") {
      EXPECT_EQ(n.tactic, tactic);
    }
  }
  auto gpu_e = Engine::load(plan.value());
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  const int64_t in = g.value(g.inputs[0]).shape[2].value;
  uint32_t seed = 17;
  for (auto [t, b] : tb) {
    std::vector<HostTensor> ins{random_tensor({t, b, in}, seed++, 1.5f)};
    int64_t h = 0;
    for (const Node& n : g.nodes)
      if (n.op == "GRU" || n.op == "LSTM") h = n.attr_i("hidden_size", 0);
    if (g.inputs.size() > 1) ins.push_back(random_tensor({1, b, h}, seed++, 1.0f));
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), ins, tol.rel,
                           "at [T, B] = [" + std::to_string(t) + ", " + std::to_string(b) + "]", size_t(t * b * h));
  }
}

// H = 128, the models' size: batch 1 and 7 (one partial 16-row tile), 64, 300 (partial last
// tile), 4096 (LSTM: 32-row tiles, 128 CTAs) and 4500 (GRU too: more 16-row CTAs than fit).
TEST(CudaRnnMma, GruAndLstmMatchCpuAtH128) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{30, 1}, {60, 7}, {120, 64}, {60, 300}, {30, 4096}, {30, 4500}};
  for (int lbr : {1, 0}) {
    Graph g = rnn_graph(false, 128, 32, lbr, false, false, 51);
    check_mma("GRU H=128 lbr=" + std::to_string(lbr), g, tb, kFp16, Precision::kFP16);
    check_mma("GRU H=128 lbr=" + std::to_string(lbr), g, tb, kBf16, Precision::kBF16);
  }
  for (bool peep : {false, true}) {
    Graph g = rnn_graph(true, 128, 32, 0, peep, false, 61);
    check_mma(std::string("LSTM H=128") + (peep ? " peepholes" : ""), g, tb, kFp16, Precision::kFP16);
    check_mma(std::string("LSTM H=128") + (peep ? " peepholes" : ""), g, tb, kBf16, Precision::kBF16);
  }
}

// Other hidden sizes: 8 and 64 (one k tile half empty / 4 k tiles), 13 and 136 (not taken:
// the persistent kernel runs); initial_h; an FP32 plan (not taken) at FP32's tolerance.
TEST(CudaRnnMma, OtherSizesInitialStateAndFallbacksMatchCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{5, 3}, {30, 64}, {60, 300}};
  for (int64_t h : {8, 64, 13, 136}) {
    for (int lbr : {1, 0})
      check_mma("GRU H=" + std::to_string(h) + " lbr=" + std::to_string(lbr), rnn_graph(false, h, 24, lbr, false, false, 71), tb,
                kFp16, Precision::kFP16);
    check_mma("LSTM H=" + std::to_string(h), rnn_graph(true, h, 24, 0, true, false, 81), tb, kFp16, Precision::kFP16);
  }
  Graph g0 = rnn_graph(false, 128, 8, 1, false, true, 91);
  check_mma("GRU initial_h", g0, {{7, 4}, {60, 300}, {30, 2000}}, kFp16, Precision::kFP16);
  check_mma("GRU initial_h", g0, {{7, 4}, {60, 300}}, kBf16, Precision::kBF16);
  check_mma("GRU FP32 plan", rnn_graph(false, 128, 24, 0, false, false, 95), {{30, 64}}, kFp32, Precision::kFP32);
}

// Tactic "mma_x" (x·Wᵀ inside the kernel): inputs of 32 and 128 (a stacked layer's input), GRU
// lbr 0/1 and LSTM (input 128: W and R do not fit shared memory together, "mma" runs), an input
// size that is no multiple of 4 (22 → "mma"), initial_h; FP16 and BF16. At batch ≤ 2 × SMs an
// FP16 plan runs the regs_b1 kernel (cuda_rnn.h: rnn_regs_preferred), BF16 the tensor-core one.
TEST(CudaRnnMma, FusedInputProjectionMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{30, 1}, {60, 7}, {60, 300}, {30, 4500}};
  for (int64_t in : {32, 128}) {
    for (int lbr : {1, 0}) {
      Graph g = rnn_graph(false, 128, in, lbr, false, false, 101);
      const std::string name = "GRU H=128 I=" + std::to_string(in) + " lbr=" + std::to_string(lbr);
      check_mma(name, g, tb, kFp16, Precision::kFP16, "mma_x");
      check_mma(name, g, tb, kBf16, Precision::kBF16, "mma_x");
    }
    check_mma("LSTM H=128 I=" + std::to_string(in), rnn_graph(true, 128, in, 0, true, false, 111), tb, kFp16, Precision::kFP16,
              "mma_x");
  }
  check_mma("GRU H=64 I=36", rnn_graph(false, 64, 36, 1, false, false, 121), {{5, 3}, {30, 64}}, kFp16, Precision::kFP16, "mma_x");
  check_mma("GRU H=64 I=22", rnn_graph(false, 64, 22, 0, false, false, 131), {{5, 3}, {30, 64}}, kFp16, Precision::kFP16, "mma_x");
  check_mma("GRU initial_h", rnn_graph(false, 128, 8, 1, false, true, 91), {{7, 4}, {60, 300}}, kFp16, Precision::kFP16, "mma_x");
  // "mma_x2" (the k-tile loops unrolled by 2): odd k-tile counts (I = 8, 36) and the 32-row tiles.
  // FP16 GRU (lbr 1) and LSTM at H = 128 with I = 32 or 128 run the kernels compiled for those
  // sizes (a 2-layer stack's layers 1 and 2), the others the kernel that takes them at run time.
  const std::vector<std::pair<int64_t, int64_t>> tb2{{30, 1}, {60, 300}, {30, 4500}};
  check_mma("GRU H=128 I=32 lbr=1", rnn_graph(false, 128, 32, 1, false, false, 103), tb2, kFp16, Precision::kFP16, "mma_x2");
  check_mma("GRU H=128 I=128 lbr=1", rnn_graph(false, 128, 128, 1, false, false, 101), tb2, kFp16, Precision::kFP16, "mma_x2");
  check_mma("GRU H=128 I=36 lbr=0", rnn_graph(false, 128, 36, 0, false, false, 141), tb2, kBf16, Precision::kBF16, "mma_x2");
  check_mma("LSTM H=128 I=32", rnn_graph(true, 128, 32, 0, true, false, 111), tb2, kFp16, Precision::kFP16, "mma_x2");
  check_mma("GRU H=8 I=8", rnn_graph(false, 8, 8, 1, false, true, 151), {{5, 3}, {30, 64}}, kFp16, Precision::kFP16, "mma_x2");
}

}  // namespace
}  // namespace ts::engine::testing
