#pragma once
// Tactics "wave" and "wave_split" of the GRUStack node (two stacked GRU layers, cuda_rnn_ops.cpp):
// both layers in ONE launch as a wavefront (cuda_rnn_wave.cu), so that layer 2's step t runs
// beside layer 1's step t+1 and the critical path is T + 2 steps instead of 2·T; "wave_split"
// runs each recurrence over two CTAs (half the mma per step, h swapped between them every step)
// for small batches.
//
// Needs a Hopper-class device (thread-block clusters and distributed shared memory, sm_90):
// rnn_wave_supported() is false elsewhere and the caller runs the layers one by one instead.
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

struct RnnWaveParams {
  const float* x = nullptr;         // layer 1's input, fp32: [T][B][input], or [B][T][input] when x_batch_first
  const uint32_t* frags = nullptr;  // rnn_wave_pack()
  const float* bias = nullptr;      // rnn_wave_bias(): [3 roles][4][H]
  float* y = nullptr;               // layer 2's Y [T][1][B][H] or null
  float* yh = nullptr;              // layer 2's Y_h [1][B][H] or null
  // Head (optional, head_w non-null): out[b][n] = act(Σ_u h2_T-1[b][u] · head_w[n][u] + head_b[n]),
  // act = sigmoid when head_sigmoid, else identity; n < head_n ≤ kRnnWaveMaxHead.
  const float* head_w = nullptr;    // [head_n][H] fp32
  const float* head_b = nullptr;    // [head_n] or null
  float* head_out = nullptr;        // [B][head_n]
  int head_n = 0;
  bool head_sigmoid = false;
  bool x_batch_first = false;
  int t_len = 0, batch = 0, hidden = 0, input = 0;
  bool bf16 = false;                // weights in bf16 (else fp16)
  // Tactic "wave_split": at hidden 128 and batch <= kRnnWaveSplitMaxBatch, each recurrence (and
  // layer 2's input projection) over two CTAs of a 6-CTA cluster; elsewhere as "wave".
  bool split = false;
};

// Batch rows per cluster (the mma's n = 8 columns).
constexpr int kRnnWaveRows = 8;
// Most head outputs per batch row the kernel computes (the GRUStack's fused Gemm).
constexpr int kRnnWaveMaxHead = 16;
// Above this batch tactic "wave" runs its layers one by one ("layers:mma_x2"), so that a dynamic
// profile timed at a small opt shape stays fast at large batches. PERF NOTE: GRU-2x128 FP16, T=60:
// the wavefront's time grows by one wave per ~40 clusters, the layers' (layers:mma_x2) more
// slowly; the two meet near 2,500 rows (bench/results/engine-cuda-h200-20261130-1931-wave.json,
// archive/rnn-wave-tactic-times-h200-20261130-1931.txt).
constexpr int kRnnWaveMaxBatch = 2048;
// Most batch rows tactic "wave_split" runs split; above it, the 3-CTA wavefront. PERF NOTE:
// GRU-2x128 FP16, T=60, kernel alone (gru2): the split is faster than the 3-CTA kernel up to 128
// rows and slower beyond, once its 6-CTA clusters no longer get an SM each
// (bench/results/archive/rnn-wave-gru2-h200-20261201-0148.txt, -0207.txt). A single stream gains up
// to 128 (gru-wave-variant-h200-20261201-0229-*.json), but the split takes twice the SMs per row,
// and serving runs several workers' batches at once: at the serving defaults the sustained rate
// with P99 ≤ 1 ms was lower with 128 than with 64 (serve-h200-20261201-0237-split128.json against
// serve-h200-20261201-0250-final.json), so 64 it is.
constexpr int kRnnWaveSplitMaxBatch = 64;

// Hidden 64 or 128, input 1..64, GRU linear_before_reset = 1 in both layers (as PyTorch exports
// it), FP16/BF16 weights; forward, no sequence_lens, zero initial states (checked by the caller).
bool rnn_wave_shape_supported(int hidden, int input, bool lbr1);
// rnn_wave_shape_supported() and a device with clusters (compute capability ≥ 9.0).
bool rnn_wave_supported(int hidden, int input, bool lbr1);

// W1 [3H][input], R1 [3H][H], W2 [3H][H], R2 [3H][H] (ONNX layout of one direction, gates z, r,
// h) as the three CTAs' A fragments (fp16 or bf16 pairs, in the per-thread register order; W1
// travels in role 0's block and is read by CTA 1).
std::vector<uint32_t> rnn_wave_pack(const float* w1, const float* r1, const float* w2, const float* r2, int hidden,
                                    int input, bool bf16);
// Each layer's B ([6H]: Wb then Rb, ONNX order) as the per-role biases the kernel starts its
// accumulators from: role 0 (layer 1) z, r, x-side n, h-side n; role 1 (layer 2's input side)
// z, r, x-side n; role 2 (layer 2's recurrence) h-side n.
std::vector<float> rnn_wave_bias(const std::vector<float>& b1, const std::vector<float>& b2, int hidden);

Status launch_rnn_wave(const RnnWaveParams& p, cudaStream_t stream);

// The head on its own (where the wavefront does not run: the layers one by one): out[b][n] =
// act(Σ_u h[b][u] · w[n][u] + bias[n]) for b < batch, n < outs; h [batch][hidden], w [outs][hidden],
// bias [outs], all fp32 on the device.
Status launch_rnn_head(const float* h, const float* w, const float* bias, float* out, int batch, int hidden, int outs,
                       bool sigmoid, cudaStream_t stream);

}  // namespace ts::engine::cuda
