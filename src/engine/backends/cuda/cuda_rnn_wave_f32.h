#pragma once
// Tactic "wave" of GRUStack / LSTMStack in FP32 plans (cuda_rnn_ops.cpp): both layers in ONE
// launch as a wavefront (cuda_rnn_wave_f32.cu), layer 2's step t beside layer 1's step t+1, so
// the critical path is T + 2 steps instead of 2·T, in strict fp32 (FFMA, expf/tanhf: the FP32
// contract of ≤ 1e-5 against the CPU backend; no TF32).
//
// A thread-block cluster of 6 CTAs per group of batch rows: 3 roles (layer 1's recurrence R1,
// layer 2's input projection W2·h1_t, layer 2's recurrence R2) × 2 halves of the hidden units.
// Each CTA keeps its half of one matrix in REGISTERS for all T steps (as tactic regs_b1 does for
// one layer); the halves swap h every step through distributed shared memory; the CTAs run in
// lockstep, one cluster barrier per step. Layer 1's input projection (X·W1ᵀ + bias) is one
// cuBLASLt GEMM before the launch (fp32, the caller's).
//
// Needs a Hopper-class device (clusters, sm_90): rnn_wave_f32_supported() is false elsewhere and
// the caller runs the layers one by one instead.
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

struct RnnWaveF32Params {
  // Layer 1's x·W1ᵀ + input bias (rnn_input_bias), fp32 [T·B][G·H]: row t·B + b, or b·T + t
  // when gx1_batch_first (X read batch-first).
  const float* gx1 = nullptr;
  bool gx1_batch_first = false;
  const float* w = nullptr;     // rnn_wave_f32_pack()
  const float* b2 = nullptr;    // layer 2's input bias [G·H] (rnn_input_bias)
  const float* rbh1 = nullptr;  // GRU: layer 1's Rb of the candidate gate [H] (linear_before_reset 1)
  const float* rbh2 = nullptr;  // GRU: layer 2's
  float* y = nullptr;           // layer 2's Y [T][1][B][H] or null
  float* yh = nullptr;          // layer 2's Y_h [1][B][H] or null
  float* yc = nullptr;          // LSTM: layer 2's Y_c [1][B][H] or null
  // Head (optional, head_w non-null): out[b][n] = act(Σ_u h2_T-1[b][u] · head_w[n][u] + head_b[n]).
  const float* head_w = nullptr;  // [head_n][H]
  const float* head_b = nullptr;  // [head_n] or null
  float* head_out = nullptr;      // [B][head_n]
  int head_n = 0;
  bool head_sigmoid = false;
  int t_len = 0, batch = 0, hidden = 0;
  bool lstm = false;
};

// Above this batch the FP32 "wave" runs its layers one by one (the clusters of 6 whole-SM CTAs
// then take several waves of T steps each).
constexpr int kRnnWaveF32MaxBatch = 256;

// Hidden 128 (the models' size: 512 threads per CTA, 48 (GRU) or 64 (LSTM) weight registers per
// thread), GRU with linear_before_reset = 1 (as PyTorch exports it); any input size (the
// projection is a GEMM).
bool rnn_wave_f32_shape_supported(int hidden, bool lstm, bool lbr);
// rnn_wave_f32_shape_supported() and a device with clusters (compute capability ≥ 9.0).
bool rnn_wave_f32_supported(int hidden, bool lstm, bool lbr);

// R1, W2, R2 ([G·H][H] each, ONNX layout of one direction) in the per-thread register order of
// the six CTAs.
std::vector<float> rnn_wave_f32_pack(const float* r1, const float* w2, const float* r2, int gates, int hidden);

Status launch_rnn_wave_f32(const RnnWaveF32Params& p, cudaStream_t stream);

}  // namespace ts::engine::cuda
