#pragma once
// The fused Transformer encoder layer in strict FP32 (FP32 plans): the layer of cuda_encoder.h
// (optional input projection, self-attention, LayerNorm₁, FF, LayerNorm₂, optional head) with
// fp32 weights and FFMA products, expf / erff / IEEE division: no TF32, no fp16 (the FP32
// contract is ≤ 1e-5 relative against the CPU backend).
//
// One CTA per sequence. It runs every shape encoder_check() accepts (the FP16 kernel's, so the
// backend's check of the node holds for both precisions): where the sequence's fp32 working set
// fits the shared memory the CTA keeps it there; where it does not (d_model 128 with long
// sequences or a wide FF) it keeps it in a global scratch of encoder_f32_scratch_bytes() per
// launch, the grid then one CTA per SM looping over the sequences.
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

// Device pointers; weights fp32 transposed, [K][N] (encoder_f32_pack_weight() of PyTorch's
// [N][K] Linear layout), biases and LayerNorm parameters fp32.
struct EncoderF32Params {
  const float* x = nullptr;     // [batch][t_len][pre_k when w_pre, else D]
  float* y = nullptr;           // [batch][t_len][D]
  int batch = 0, t_len = 0, ff = 0, pre_k = 0;
  int d_model = 64, head_dim = 16;  // D; heads = D / head_dim
  int warps = 0;                // warps per CTA (8 or 16); 0: encoder_f32_warps() chooses by batch
  const float* w_pre = nullptr;   // [pre_k rounded up to 4][D] (zero rows past pre_k) or null
  const float* b_pre = nullptr;   // [D] or null
  const float* w_in = nullptr;    // [D][3D]: q, k, v columns
  const float* b_in = nullptr;    // [3D]
  const float* w_out = nullptr;   // [D][D]
  const float* b_out = nullptr;   // [D]
  const float* ln1_s = nullptr;   // [D]
  const float* ln1_b = nullptr;   // [D]
  const float* w_ff1 = nullptr;   // [D][ff]
  const float* b_ff1 = nullptr;   // [ff]
  const float* w_ff2 = nullptr;   // [ff][D]
  const float* b_ff2 = nullptr;   // [D]
  const float* ln2_s = nullptr;   // [D]
  const float* ln2_b = nullptr;   // [D]
  float eps1 = 1e-5f, eps2 = 1e-5f;
  float scale = 0.25f;          // softmax(scale · q·kᵀ)
  // The model's head (head_w non-null), as EncoderParams: only the last row's output is
  // computed, head_out[b][n] = act(Σ_c y[b][T-1][c] · head_w[n][c] + head_b[n]); y is not written.
  const float* head_w = nullptr;  // [head_n][D]
  const float* head_b = nullptr;  // [head_n] or null
  float* head_out = nullptr;      // [batch][head_n]
  int head_n = 0;
  bool head_sigmoid = false;
  bool gelu = false;            // FF activation: erf GELU, else ReLU
  bool norm_first = false;      // pre-norm, as EncoderParams::norm_first
  bool causal = false;          // query i attends to keys 0..i only
  // Global scratch of encoder_f32_scratch_bytes() (16-byte aligned) where that is not 0, else null.
  float* scratch = nullptr;
};

// W [n][k] (row-major) as [k_pad][n] (k_pad ≥ k, 0: k), rows k..k_pad-1 zero.
std::vector<float> encoder_f32_pack_weight(const float* w_nk, int n, int k, int k_pad = 0);
// Warps per CTA at `batch`: `warps` when 8 or 16, else 16 where each CTA has an SM to itself
// (batch ≤ the SM count), 8 above.
int encoder_f32_warps(int batch, int warps = 0);
// Bytes of global scratch a launch of `p`'s shape needs: 0 where a sequence fits shared memory.
size_t encoder_f32_scratch_bytes(const EncoderF32Params& p);
// The shape limits are encoder_check()'s; kInvalidArgument as launch_encoder_layer.
Status launch_encoder_layer_f32(const EncoderF32Params& p, cudaStream_t stream);

}  // namespace ts::engine::cuda
