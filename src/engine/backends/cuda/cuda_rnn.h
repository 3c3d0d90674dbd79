#pragma once
// The GRU/LSTM recurrence on the device (cuda_rnn.cu). The input projection of all T steps is
// one cuBLASLt GEMM before it (cuda_rnn_ops.cpp); this kernel runs the T sequential steps.
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

struct RnnStepParams {
  const float* gx = nullptr;     // [T][B][G*H]: x·Wᵀ + input-side bias, per step and row
  const void* r = nullptr;       // Rᵀ as [Hp/2][G][H (unit)][2 (k, k+1)], float or half;
                                 // Hp = H rounded up to even, the pad k row is zero
  bool r_half = false;
  bool r_bf16 = false;           // R in bf16 (r_half false)
  const float* rbh = nullptr;    // GRU linear_before_reset=1: recurrent bias of the h gate [H]
  const float* peep = nullptr;   // LSTM peepholes [3H] (i, o, f) or null
  const float* h0 = nullptr;     // [B][H] or null (zeros)
  const float* c0 = nullptr;     // LSTM [B][H] or null
  const void* lens = nullptr;    // sequence_lens [B] (int32 or int64) or null
  bool lens_i64 = false;
  float* y = nullptr;            // [T][B][H] or null; rows past their length get zeros
  float* yh = nullptr;           // [B][H] or null: last valid h
  float* yc = nullptr;           // LSTM [B][H] or null
  int t_len = 0, batch = 0, hidden = 0;
  bool lstm = false;
  bool lbr = false;              // GRU linear_before_reset
  int max_ks = 4;                // most k-slices per unit (tactic "persistent_ks<N>")
  bool rows1 = false;            // one row per CTA at every batch (tactic "..._rows1")
  bool regs = false;             // tactic "regs_b1": R in registers (cuda_rnn_regs.cu) where
                                 // rnn_regs_supported(); above that batch the tensor-core kernel
                                 // where rnn_mma_supported(), else the persistent_ks4_rows1 kernel
  bool mma = false;              // tactic "mma": tensor cores (cuda_rnn_mma.cu) where
                                 // rnn_mma_supported(), else the persistent_ks4 kernel
  const void* r_mma = nullptr;   // R packed by rnn_mma_pack (FP16/BF16 plans), or null
  // Tactic "mma_x": the input projection inside the mma kernel (gx unused) where
  // rnn_mma_fused_supported(); else "mma" (GEMM first).
  const float* x = nullptr;      // X [T][B][input] fp32, or null (gx from the GEMM)
  const void* w_mma = nullptr;   // W packed by rnn_mma_pack, or null
  const float* in_bias = nullptr;  // [G·H]: the input-side bias (rnn_input_bias)
  int input = 0;
  bool mma_unroll = false;       // tactic "mma_x2": "mma_x" with its k-tile loops unrolled by 2
  // Tactic "cluster<C>" (cuda_rnn_cluster.h): C CTAs per cluster and R packed by
  // rnn_cluster_pack for them, or 0 / null.
  int cluster = 0;
  const void* r_cluster = nullptr;
};

// Tactic "regs_b1" (cuda_rnn_regs.cu): offered for H ≤ 128 and batch ≤ 2 × SMs (one row per
// CTA), not for FP32 LSTM at H > 64 (its weights do not fit the register file).
constexpr int kRnnRegsMaxHidden = 128;
constexpr int kRnnRegsMaxBatchPerSm = 2;
bool rnn_regs_supported(const RnnStepParams& p, int sms);
// rnn_regs_supported() on this device (false when its attributes cannot be read). Tactics "mma_x"
// and "mma_x2" run the regs_b1 kernel where this holds: at those batches it is the faster one
// (GRU-2x128 FP16 node times, bench/results/archive/rnn-tactic-times-h200-20261130-1635.txt), and
// one tactic serves every batch of a dynamic profile.
bool rnn_regs_preferred(const RnnStepParams& p);
Status launch_rnn_regs(const RnnStepParams& p, cudaStream_t stream);

// Tactic "mma" (cuda_rnn_mma.cu): mma.sync m16n8k16 tiles of 16 or 32 batch rows per CTA, R
// resident in shared memory, for FP16/BF16 plans with H ≤ 128 and H a multiple of 8.
// Tactic "mma_x": the same with x·Wᵀ as more mma k tiles in the kernel (W resident too, no GEMM
// and no [T][B][G·H] gate tensor in memory) where the input size is ≤ 128, a multiple of 4, and
// W and R fit shared memory together (GRU H=128: layer 1 and 2; LSTM H=128: layer 1 only).
constexpr int kRnnMmaMaxHidden = 128;
constexpr int kRnnMmaMaxInput = 128;
bool rnn_mma_packable(int hidden, bool half_or_bf16);
// M [G·H][kdim] (fp32, ONNX layout of W or R of one direction) as the kernel's B fragments
// (fp16 or bf16).
std::vector<uint32_t> rnn_mma_pack(const float* m, int gates, int hidden, int kdim, bool bf16);
bool rnn_mma_supported(const RnnStepParams& p);
bool rnn_mma_fused_supported(const RnnStepParams& p);
Status launch_rnn_mma(const RnnStepParams& p, cudaStream_t stream);

// Sets the kernels' shared-memory limits (once per process, at kernel creation).
Status rnn_prepare_device();
// Queues the recurrence. Picks the launch configuration from batch and hidden size (see the
// PERF NOTE in cuda_rnn.cu); R is kept in shared memory when it fits.
Status launch_rnn_recurrence(const RnnStepParams& p, cudaStream_t stream);

}  // namespace ts::engine::cuda
