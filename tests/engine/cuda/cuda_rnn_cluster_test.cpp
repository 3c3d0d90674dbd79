// GRU/LSTM recurrences for hidden sizes one CTA cannot hold (issue 26: GRU-2x379 ran 0.21× PyTorch
// at batch 1): tactic "cluster<C>" (cuda_rnn_cluster.cu: the hidden units split over a cluster of
// C CTAs, R resident in their shared memory) and "gemm_steps" in FP16/BF16 plans (one GEMM
// h·Rᵀ per step over the batch), each forced by name and compared with the CPU backend.
//
// The split arithmetic and the packing run everywhere (no device); the rest is labelled `gpu`
// and skips with the reason where no CUDA device is present.
#include <algorithm>
#include <cstring>

#include "cuda_test_util.h"
#include "engine/backends/cuda/cuda_rnn_cluster.h"

namespace ts::engine::testing {
namespace {

using cuda::kRnnClusterMaxRows;
using cuda::RnnClusterShape;
using cuda::rnn_cluster_pack;
using cuda::rnn_cluster_rows;
using cuda::rnn_cluster_shape;

constexpr size_t kH200SmemOptin = 232448;  // bytes per block, opt-in (sm_90)

// --- the split (host arithmetic) ---------------------------------------------------------------

// GRU H=379 in fp16 over 8 CTAs: 48 units each (the last 43), two units per warp, R slices of
// 109,440 bytes; in fp32 the slice needs 16 CTAs; a split with more than 64 units per CTA, a
// cluster size that is no power of two up to 16, or a slice above the limit is refused.
TEST(RnnClusterShape, SplitsTheHiddenUnitsAndRefusesWhatDoesNotFit) {
  RnnClusterShape s = rnn_cluster_shape(379, 3, 2, 8, 1, kH200SmemOptin);
  EXPECT_EQ(s.ctas, 8);
  EXPECT_EQ(s.units, 48);
  EXPECT_EQ(s.warps, 24);
  EXPECT_EQ(s.r_bytes, size_t(48) * 3 * 190 * 2 * 2);
  EXPECT_EQ(s.smem_bytes, s.r_bytes + size_t(2) * 380 * 4);
  EXPECT_EQ(s.r_bytes % 16, 0u);
  EXPECT_EQ(rnn_cluster_shape(379, 3, 4, 16, 4, kH200SmemOptin).units, 24);
  EXPECT_EQ(rnn_cluster_shape(379, 3, 2, 4, 1, kH200SmemOptin).ctas, 0) << "95 units per CTA is above 64";
  EXPECT_EQ(rnn_cluster_shape(512, 4, 4, 8, 1, kH200SmemOptin).ctas, 0) << "a 256 KB slice does not fit";
  EXPECT_EQ(rnn_cluster_shape(512, 4, 2, 16, 4, kH200SmemOptin).ctas, 16);
  EXPECT_EQ(rnn_cluster_shape(100, 3, 2, 3, 1, kH200SmemOptin).ctas, 0);
  EXPECT_EQ(rnn_cluster_shape(100, 3, 2, 32, 1, kH200SmemOptin).ctas, 0);
  EXPECT_EQ(rnn_cluster_shape(379, 3, 2, 8, 1, 100000).ctas, 0) << "above the shared-memory limit";
  // LSTM: c of the CTA's units for every row as well.
  RnnClusterShape l = rnn_cluster_shape(200, 4, 2, 8, 4, kH200SmemOptin);
  EXPECT_EQ(l.units, 25);
  EXPECT_EQ(l.smem_bytes, l.r_bytes + size_t(2) * 4 * 200 * 4 + size_t(4) * 25 * 4);
}

// One row per cluster while every cluster is resident at once (as many as the device holds), then
// 2, then 4.
TEST(RnnClusterShape, RowsPerClusterGrowOnlyWhenTheClustersDoNotFit) {
  EXPECT_EQ(rnn_cluster_rows(1, 7), 1);
  EXPECT_EQ(rnn_cluster_rows(7, 7), 1);
  EXPECT_EQ(rnn_cluster_rows(8, 7), 2);
  EXPECT_EQ(rnn_cluster_rows(16, 7), 4);
  EXPECT_EQ(rnn_cluster_rows(16, 16), 1);
  EXPECT_EQ(rnn_cluster_rows(4096, 16), kRnnClusterMaxRows);
  EXPECT_EQ(rnn_cluster_rows(64, 0), kRnnClusterMaxRows);
}

// Slice c holds units c·U … as [unit][gate][k pair][2]; units past H and the pad k are zero.
TEST(RnnClusterShape, PackPutsEachUnitsRowsInItsCtasSlice) {
  const int h = 5, g = 3;
  std::vector<float> r(size_t(g * h * h));
  for (size_t i = 0; i < r.size(); ++i) r[i] = float(i + 1);
  const RnnClusterShape s = rnn_cluster_shape(h, g, 4, 2, 1, kH200SmemOptin);
  ASSERT_EQ(s.units, 3);
  const std::vector<uint8_t> p = rnn_cluster_pack(r.data(), g, h, s, false, false);
  ASSERT_EQ(p.size(), 2 * s.r_bytes);
  auto at = [&](int c, int j, int gate, int k) {
    float v;
    std::memcpy(&v, p.data() + size_t(c) * s.r_bytes + ((size_t(j) * g + gate) * 6 + size_t(k)) * 4, 4);
    return v;
  };
  EXPECT_EQ(at(0, 0, 0, 0), r[0]);
  EXPECT_EQ(at(0, 2, 1, 3), r[size_t((1 * h + 2) * h + 3)]);
  EXPECT_EQ(at(1, 0, 2, 4), r[size_t((2 * h + 3) * h + 4)]);  // unit 3 is CTA 1's first
  EXPECT_EQ(at(1, 1, 0, 1), r[size_t((0 * h + 4) * h + 1)]);
  EXPECT_EQ(at(1, 1, 0, 5), 0.0f) << "the pad k of an odd H";
  EXPECT_EQ(at(1, 2, 0, 0), 0.0f) << "unit 5 is past H";
}

// The builder times the new tactics for every GRU/LSTM node and, as "layers:<t>", for every stack
// (host: the backend's tactic lists need no device); persistent_ks4 stays the default (first).
TEST(RnnClusterShape, TheBuilderTimesTheNewTactics) {
  const Backend* be = cuda();
  if (!be) GTEST_SKIP() << "no cuda backend in this build";
  Graph g = rnn_graph(false, 379, 64, 1, false, false, 1);
  for (const std::string op : {"GRU", "LSTM", "GRUStack", "LSTMStack"}) {
    Node n;
    n.op = op;
    const std::vector<std::string> t = be->tactics(g, n);
    SCOPED_TRACE(op);
    ASSERT_FALSE(t.empty());
    const std::string pre = op.size() > 4 ? "layers:" : "";
    EXPECT_EQ(t.front(), pre + "persistent_ks4");
    for (const char* want : {"cluster2", "cluster4", "cluster8", "cluster16", "gemm_steps"}) {
      EXPECT_NE(std::find(t.begin(), t.end(), pre + want), t.end()) << pre + want;
    }
  }
}

// --- on the device ------------------------------------------------------------------------------

constexpr int64_t kMaxBatch = 4096;

BuildOptions cluster_options(const Graph& g, const std::string& backend, Precision p) {
  return rnn_options(g, backend, p, 30, 16, kMaxBatch);
}

// CUDA with `tactic` forced vs CPU FP32, at each run's [T, B].
void check_tactic(const std::string& name, const Graph& g, const std::string& tactic, Precision p, Tol tol,
                  const std::vector<std::pair<int64_t, int64_t>>& tb) {
  SCOPED_TRACE(name + " " + tol.name + " tactic " + tactic);
  auto cpu_e = build_graph(g, cluster_options(g, "cpu", Precision::kFP32));
  ASSERT_TRUE(cpu_e) << cpu_e.status().to_string();
  Graph gg = g;
  int64_t h = 0;
  for (Node& n : gg.nodes) {
    if (n.op == "GRU" || n.op == "LSTM") {
      n.tactic = tactic;
      h = n.attr_i("hidden_size", 0);
    }
  }
  BuildOptions go = cluster_options(gg, "cuda", p);
  go.time_tactics = false;
  auto gpu_e = build_graph(gg, go);
  ASSERT_TRUE(gpu_e) << gpu_e.status().to_string();
  const int64_t in = g.value(g.inputs[0]).shape[2].value;
  uint32_t seed = 29;
  for (auto [t, b] : tb) {
    std::vector<HostTensor> ins{random_tensor({t, b, in}, seed++, 1.5f)};
    if (g.inputs.size() > 1) ins.push_back(random_tensor({1, b, h}, seed++, 1.0f));
    expect_gpu_matches_cpu(*cpu_e.value(), *gpu_e.value(), ins, tol.rel,
                           "at [T, B] = [" + std::to_string(t) + ", " + std::to_string(b) + "]", size_t(t * b * h));
  }
}

// The shapes the tests below force do run clustered on this device (not the persistent kernel
// launch_rnn_recurrence() falls back to): one row, 16 rows (16 clusters of 8), 300 rows (4 per
// cluster, more clusters than fit at once).
TEST(CudaRnnCluster, TheSweepsShapesRunClustered) {
  SKIP_WITHOUT_GPU();
  const int dummy = 0;
  for (int batch : {1, 16, 300}) {
    cuda::RnnStepParams p;
    p.hidden = 379;
    p.batch = batch;
    p.t_len = 60;
    p.lbr = true;
    p.r_half = true;
    p.cluster = 8;
    p.r_cluster = &dummy;
    EXPECT_TRUE(cuda::rnn_cluster_runnable(p)) << "GRU H=379 fp16, 8 CTAs, batch " << batch;
    p.r_half = false;
    p.cluster = 16;
    EXPECT_TRUE(cuda::rnn_cluster_runnable(p)) << "GRU H=379 fp32, 16 CTAs, batch " << batch;
    p.lbr = false;
    EXPECT_FALSE(cuda::rnn_cluster_runnable(p)) << "GRU linear_before_reset 0 is not taken";
  }
}

// GRU (linear_before_reset 1) at H = 379 and 194, LSTM (peepholes) at 200 and with initial_h at
// 97: FP16, BF16 and FP32; batch 1, 7 (rows past the batch in a cluster of 2), 300 (4 rows per
// cluster, several waves of clusters); the 4 cluster sizes each where they fit.
TEST(CudaRnnCluster, ClusterTacticsMatchCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<int64_t, int64_t>> tb{{60, 1}, {60, 7}, {30, 300}};
  Graph g379 = rnn_graph(false, 379, 64, 1, false, false, 201);
  check_tactic("GRU H=379", g379, "cluster8", Precision::kFP16, kFp16, tb);
  check_tactic("GRU H=379", g379, "cluster16", Precision::kFP16, kFp16, tb);
  check_tactic("GRU H=379", g379, "cluster16", Precision::kFP32, kFp32, tb);
  Graph g194 = rnn_graph(false, 194, 62, 1, false, false, 211);
  check_tactic("GRU H=194", g194, "cluster4", Precision::kFP16, kFp16, tb);
  check_tactic("GRU H=194", g194, "cluster8", Precision::kBF16, kBf16, {{60, 1}, {30, 300}});
  Graph l200 = rnn_graph(true, 200, 31, 0, true, false, 221);
  check_tactic("LSTM H=200 peepholes", l200, "cluster8", Precision::kFP16, kFp16, tb);
  check_tactic("LSTM H=200 peepholes", l200, "cluster8", Precision::kFP32, kFp32, {{60, 1}, {30, 300}});
  Graph l97 = rnn_graph(true, 97, 20, 0, false, true, 231);
  check_tactic("LSTM H=97 initial_h", l97, "cluster2", Precision::kFP16, kFp16, {{60, 1}, {60, 7}});
  check_tactic("LSTM H=97 initial_h", l97, "cluster4", Precision::kFP16, kFp16, {{60, 1}, {30, 300}});
}

// "gemm_steps" in 16-bit plans: h cast for each step's GEMM (its own scratch per step), at the
// batches where it pays and at one where it does not.
TEST(CudaRnnCluster, GemmStepsIn16BitPlansMatchCpu) {
  SKIP_WITHOUT_GPU();
  check_tactic("GRU H=379", rnn_graph(false, 379, 64, 1, false, false, 241), "gemm_steps", Precision::kFP16, kFp16,
               {{60, 1}, {30, 300}, {5, 4096}});
  check_tactic("LSTM H=78", rnn_graph(true, 78, 31, 0, false, true, 251), "gemm_steps", Precision::kFP16, kFp16,
               {{60, 7}, {30, 300}});
  check_tactic("GRU H=194", rnn_graph(false, 194, 62, 1, false, false, 261), "gemm_steps", Precision::kBF16, kBf16,
               {{30, 300}});
}

}  // namespace
}  // namespace ts::engine::testing
