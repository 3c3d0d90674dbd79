#pragma once
// Tactics "cluster2", "cluster4", "cluster8", "cluster16" of GRU / LSTM (cuda_rnn_cluster.cu): the recurrence
// of a group of batch rows split by hidden unit over the C CTAs of one thread-block cluster
// (sm_90). Each CTA keeps the rows of Rᵀ of its units in shared memory for all T steps and
// computes their gates; the new h of its units goes to every CTA of the cluster through
// distributed shared memory, one cluster barrier per step. For hidden sizes whose R does not fit
// one CTA (GRU H=379: 864 KB in fp16), where the one-CTA persistent kernel (cuda_rnn.cu) reads R
// from L2 every step. x·Wᵀ + bias of all steps is the GEMM before it, as for that kernel.
//
// Runs GRU linear_before_reset 1 and LSTM (peepholes, initial states) without sequence_lens;
// elsewhere launch_rnn_recurrence() runs the persistent kernel (rnn_cluster_runnable() false).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_rnn.h"

namespace ts::engine::cuda {

constexpr int kRnnClusterMaxUnits = 64;  // hidden units per CTA (2 per warp, 32 warps)
constexpr int kRnnClusterMaxRows = 4;     // batch rows per cluster

// How hidden size `hidden` (G gates, R stored in elements of `elem_bytes`) splits over `ctas`
// CTAs with `rows` batch rows per cluster. Host arithmetic only (unit-tested without a device).
struct RnnClusterShape {
  int ctas = 0;           // CTAs per cluster; 0: this split does not fit (see rnn_cluster_shape)
  int units = 0;          // hidden units per CTA (the last CTAs may own fewer, or none)
  int warps = 0;          // warps per CTA: each warp owns ceil(units / warps) units
  size_t r_bytes = 0;     // one CTA's slice of Rᵀ in bytes, a multiple of 16
  size_t smem_bytes = 0;  // one CTA's dynamic shared memory (R slice, h double buffer, LSTM c)
};
// ctas = 0 where a CTA would own more than kRnnClusterMaxUnits units, ctas is not 2, 4, 8 or 16,
// or smem_bytes would exceed smem_limit_bytes.
RnnClusterShape rnn_cluster_shape(int hidden, int gates, int elem_bytes, int ctas, int rows, size_t smem_limit_bytes);
// Batch rows per cluster (1, 2 or 4) for `batch` rows: the fewest with which every cluster is
// resident at once, given how many clusters the device holds at once (cudaOccupancyMaxActiveClusters:
// clusters are placed within a GPC, so fewer than SMs / CTAs), else kRnnClusterMaxRows.
int rnn_cluster_rows(int batch, int resident_clusters);

// R [G·H][H] (fp32, ONNX layout of one direction) as the `ctas` slices the kernel copies into
// shared memory: slice c holds units [c·U, c·U + U) (U = shape.units) as [unit][gate][k pair][2]
// elements (fp16 where half, bf16 where bf16, else fp32), zeros past H; slice c starts at byte
// c · shape.r_bytes.
std::vector<uint8_t> rnn_cluster_pack(const float* r, int gates, int hidden, const RnnClusterShape& shape, bool half,
                                      bool bf16);

// The device's opt-in shared memory per block in bytes (0 where it cannot be read).
size_t rnn_cluster_smem_limit();
// True where launch_rnn_cluster() runs p: p.cluster set and p.r_cluster packed for it, GRU
// linear_before_reset 1 or LSTM, no sequence_lens, an sm_90 device on which a cluster of that
// size and shared memory can be resident.
bool rnn_cluster_runnable(const RnnStepParams& p);
Status launch_rnn_cluster(const RnnStepParams& p, cudaStream_t stream);

}  // namespace ts::engine::cuda
