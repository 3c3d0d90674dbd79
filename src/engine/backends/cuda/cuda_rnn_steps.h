#pragma once
// Tactic "gemm_steps" of GRU / LSTM (and "layers:gemm_steps" of their stacks) in FP32 plans
// (cuda_rnn_ops.cpp): per time step one cuBLASLt fp32 GEMM h_{t-1}·Rᵀ for the whole batch, then
// this file's cell kernel (gates, state update, Y). Many small launches (two per step and layer,
// inside the context's CUDA graph), so it pays only where the batch fills the device: there the
// step is one large GEMM at cuBLAS's FFMA rate instead of a persistent kernel's matrix-vector
// products. Strict fp32 (expf/tanhf, no TF32 in FP32 plans).
#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

struct RnnCellStepParams {
  const float* gx = nullptr;      // [B][G·H]: this step's x·Wᵀ + input bias (rnn_input_bias)
  const float* gh = nullptr;      // [B][G·H]: h_{t-1}·Rᵀ (no bias)
  const float* h_prev = nullptr;  // [B][H]
  const float* c_prev = nullptr;  // LSTM [B][H]
  float* h_next = nullptr;        // [B][H]
  float* c_next = nullptr;        // LSTM [B][H]
  float* y = nullptr;             // this step's Y [B][H] or null
  float* yh = nullptr;            // Y_h [B][H] (the last step) or null
  float* yc = nullptr;            // LSTM Y_c [B][H] (the last step) or null
  const float* rbh = nullptr;     // GRU linear_before_reset 1: Rb of the candidate gate [H]
  const float* peep = nullptr;    // LSTM peepholes [3H] (i, o, f) or null
  int batch = 0, hidden = 0;
  bool lstm = false;
};

// One step's cell for every (row, unit): GRU (linear_before_reset 1: n = tanh(gx_n + r ⊙ (gh_n +
// rbh))) or LSTM (ONNX gate order i, o, f, c).
Status launch_rnn_cell_step(const RnnCellStepParams& p, cudaStream_t stream);

}  // namespace ts::engine::cuda
