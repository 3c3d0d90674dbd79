#pragma once
// The fused Transformer encoder layer (op "TransformerEncoderLayer", made by
// passes/fuse_encoder.cpp from what PyTorch exports for nn.TransformerEncoderLayer, post-norm):
//
//   x  = [x·Wpreᵀ + bpre]                         (optional: the input projection before layer 0)
//   a  = MultiHeadSelfAttention(x)                (in_proj, softmax(scale·q·kᵀ)·v per head, out_proj)
//   x1 = LayerNorm₁(x + a)
//   y  = LayerNorm₂(x1 + act(x1·W1ᵀ + b1)·W2ᵀ + b2)
//
// One CTA runs one whole sequence with every intermediate in shared memory: FP16 tensor-core
// tiles (mma.sync m16n8k16, FP32 accumulate), the residual stream, softmax and LayerNorm in FP32.
// Shapes it runs: d_model 64, head dim 16 (4 heads), FF a multiple of 32 up to 256, a folded
// input projection with K a multiple of 16 up to 64, T ≤ kEncoderMaxSeq.
#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

constexpr int kEncoderDModel = 64;
constexpr int kEncoderHeadDim = 16;
constexpr int kEncoderMaxFF = 256;
constexpr int kEncoderMaxPreK = 64;
constexpr int kEncoderMaxSeq = 128;
constexpr int kEncoderMaxHead = 16;

// Device pointers; weights fp16 in mma fragment order (encoder_pack_weight() of the [N][K]
// matrix, PyTorch's Linear layout), biases and LayerNorm parameters fp32.
struct EncoderParams {
  const float* x = nullptr;     // [batch][t_len][pre_k when w_pre, else 64]
  float* y = nullptr;           // [batch][t_len][64]
  int batch = 0, t_len = 0, ff = 0, pre_k = 0;
  const __half* w_pre = nullptr;  // [64][pre_k] or null
  const float* b_pre = nullptr;   // [64] or null
  const __half* w_in = nullptr;   // [192][64]: q, k, v rows
  const float* b_in = nullptr;    // [192]
  const __half* w_out = nullptr;  // [64][64]
  const float* b_out = nullptr;   // [64]
  const float* ln1_s = nullptr;   // [64]
  const float* ln1_b = nullptr;   // [64]
  const __half* w_ff1 = nullptr;  // [ff][64]
  const float* b_ff1 = nullptr;   // [ff]
  const __half* w_ff2 = nullptr;  // [64][ff]
  const float* b_ff2 = nullptr;   // [64]
  const float* ln2_s = nullptr;   // [64]
  const float* ln2_b = nullptr;   // [64]
  float eps1 = 1e-5f, eps2 = 1e-5f;
  float scale = 0.25f;          // softmax(scale · q·kᵀ)
  // The model's head after the layer (optional, head_w non-null): only the last row's output
  // is computed, and head_out[b][n] = act(Σ_c y[b][T-1][c] · head_w[n][c] + head_b[n]), act =
  // sigmoid when head_sigmoid; y is then not written.
  const float* head_w = nullptr;  // [head_n][64] fp32
  const float* head_b = nullptr;  // [head_n] or null
  float* head_out = nullptr;      // [batch][head_n]
  int head_n = 0;
  bool head_sigmoid = false;
  bool gelu = false;            // FF activation: erf GELU, else ReLU
};

// W [n][k] (row-major fp32; n and k multiples of 16) as the kernel reads it: for k step ks,
// n-tile pair np and lane l, the 4 words (b0, b1 of n-tile 2·np, then of 2·np + 1) of an
// m16n8k16 B fragment at ((ks·n/16 + np)·32 + l)·4.
std::vector<__half> encoder_pack_weight(const float* w_nk, int n, int k);

// Checks the shape limits above (pre_k 0: no input projection); kInvalidArgument naming the one
// that is over.
Status encoder_check(int64_t t_len, int64_t ff, int64_t pre_k);
Status launch_encoder_layer(const EncoderParams& p, cudaStream_t stream);

// The op table entry (cuda_encoder_ops.cpp), added by add_layer_ops().
struct CudaOpInfo;
void add_encoder_ops(std::vector<CudaOpInfo>& ops);

}  // namespace ts::engine::cuda
