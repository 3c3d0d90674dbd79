#pragma once
// Tactics "wave", "wave3" and "wave_split" of the LSTMStack node (two stacked LSTM layers,
// cuda_rnn_ops.cpp): both layers in ONE launch as a wavefront over a thread-block cluster of four
// CTAs per 8 batch rows (cuda_lstm_wave.cu), so that layer 2's step t runs beside layer 1's step
// t+1 and the critical path is T + 3 steps instead of 2·T; "wave3" with three CTAs, "wave_split"
// with each role over two CTAs (half the mma per step; h swapped between them every step) for
// small batches. The GRU's counterpart is cuda_rnn_wave.h.
//
// Needs a Hopper-class device (thread-block clusters and distributed shared memory, sm_90):
// lstm_wave_supported() is false elsewhere and the caller runs the layers one by one instead.
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

struct LstmWaveParams {
  const float* x = nullptr;         // layer 1's input, fp32: [T][B][input], or [B][T][input] when x_batch_first
  const uint32_t* frags = nullptr;  // lstm_wave_pack()
  const float* bias = nullptr;      // lstm_wave_bias(): [2 layers][4 gates][H]
  float* y = nullptr;               // layer 2's Y [T][1][B][H] or null
  float* yh = nullptr;              // layer 2's Y_h [1][B][H] or null
  float* yc = nullptr;              // layer 2's Y_c [1][B][H] or null
  // Head (optional, head_w non-null), as the GRU wavefront's (cuda_rnn_wave.h): out[b][n] =
  // act(Σ_u h2_T-1[b][u] · head_w[n][u] + head_b[n]), act = sigmoid when head_sigmoid, else
  // identity; n < head_n ≤ kRnnWaveMaxHead.
  const float* head_w = nullptr;    // [head_n][H] fp32
  const float* head_b = nullptr;    // [head_n] or null
  float* head_out = nullptr;        // [B][head_n]
  int head_n = 0;
  bool head_sigmoid = false;
  bool x_batch_first = false;
  bool three_ctas = false;          // tactic "wave3" where lstm_wave3_shape_supported() (else four CTAs)
  // Tactic "wave_split": at hidden 128 and batch <= kLstmWaveSplitMaxBatch, each role over two
  // CTAs of an 8-CTA cluster; above that batch as "wave3" where lstm_wave3_shape_supported(),
  // else as "wave"; hidden 64 as "wave".
  bool split = false;
  // n tiles of 8 batch rows per cluster (hidden 128, not split): 0 = chosen by batch (the fewest
  // waves of clusters times the step's time; lstm_wave_n_tiles()), or 1, 2 or 4 (tests and
  // measurements). Hidden 64 and the split always run 1.
  int n_tiles = 0;
  int t_len = 0, batch = 0, hidden = 0, input = 0;
  bool bf16 = false;                // weights in bf16 (else fp16)
};

// Batch rows per n tile (the mma's n = 8 columns); a cluster serves 8·NN rows (n_tiles).
constexpr int kLstmWaveRows = 8;
// Above this batch tactic "wave" runs its layers one by one ("layers:mma_x2"), as the GRU's
// wavefront does (cuda_rnn_wave.h). PERF NOTE (LSTM-2x128 FP16 input 32, T=60): at 8 rows per
// cluster the wavefront ran in long waves of fewer than 32 clusters and lost to the layers above
// 1,280 rows (bench/results/archive/lstm-wave-tactic-times-h200-20261130-2254.txt); with the
// bank-conflict-free gate slots and two n tiles per cluster (lstmwide) "wave" beats the layers at
// 2,048 and 4,096 rows, kernel alone (archive/lstmwide-h200-20261201-0827-tests.log) and in the
// engine benchmark (lstmwide-h200-20261201-0827-bench.json against
// lstmwide-h200-20261201-0825-before-bench.json and engine-cuda-h200-20261201-0536-final.json).
// 4096 is the largest batch measured (the models' profiles end there).
constexpr int kLstmWaveMaxBatch = 4096;

// Tactic "wave3": a cluster of three CTAs per 8 batch rows instead of four — layer 1's CTA
// computes W1·x_t itself, W1's A fragments in its shared memory (the inbound gate ring it no
// longer has), so ~44 clusters fit a 132-SM device at once instead of fewer than 32 (352 rows in
// one wave instead of 248). Input 1..32 (W1 must fit that ring); the launch is as "wave".
bool lstm_wave3_shape_supported(int hidden, int input);

// Most batch rows tactic "wave_split" runs split (8 CTAs per 8 rows: 64 CTAs at 64 rows); above,
// the three-CTA wavefront. As the GRU's kRnnWaveSplitMaxBatch (cuda_rnn_wave.h): the
// split takes twice the SMs per row, which serving's concurrent batches pay for.
constexpr int kLstmWaveSplitMaxBatch = 64;

// Hidden 64 or 128, input 1..64, FP16/BF16 weights; forward, default activations, no clip,
// input_forget 0, no peepholes, no sequence_lens, zero initial states (checked by the caller).
bool lstm_wave_shape_supported(int hidden, int input);
// lstm_wave_shape_supported() and a device with clusters (compute capability ≥ 9.0).
bool lstm_wave_supported(int hidden, int input);

// W1 [4H][input], R1 [4H][H], W2 [4H][H], R2 [4H][H] (ONNX layout of one direction, gates i, o,
// f, c) as the four CTAs' A fragments (fp16 or bf16 pairs, in the per-thread register order).
std::vector<uint32_t> lstm_wave_pack(const float* w1, const float* r1, const float* w2, const float* r2, int hidden,
                                     int input, bool bf16);
// Each layer's B ([8H]: Wb then Rb, ONNX order) as one bias per gate (Wb + Rb): [2][4][H].
std::vector<float> lstm_wave_bias(const std::vector<float>& b1, const std::vector<float>& b2, int hidden);

// The n tiles per cluster a launch with `p` runs (0 where lstm_wave_supported() is false).
int lstm_wave_n_tiles(const LstmWaveParams& p);

Status launch_lstm_wave(const LstmWaveParams& p, cudaStream_t stream);

}  // namespace ts::engine::cuda
