#pragma once
// The fused Transformer encoder layer (op "TransformerEncoderLayer", made by
// passes/fuse_encoder.cpp from what PyTorch exports for nn.TransformerEncoderLayer; post-norm
// below, pre-norm and a causal mask as EncoderParams::norm_first and ::causal say):
//
//   x  = [x·Wpreᵀ + bpre]                         (optional: the input projection before layer 0)
//   a  = MultiHeadSelfAttention(x)                (in_proj, softmax(scale·q·kᵀ)·v per head, out_proj)
//   x1 = LayerNorm₁(x + a)
//   y  = LayerNorm₂(x1 + act(x1·W1ᵀ + b1)·W2ᵀ + b2)
//
// One CTA runs one whole sequence with every intermediate in shared memory: FP16 tensor-core
// tiles (mma.sync m16n8k16, FP32 accumulate), the residual stream, softmax and LayerNorm in FP32.
// Shapes it runs: d_model 32, 64 or 128, any head count whose head dim is a multiple of 8, FF a
// multiple of 32 up to 512, a folded input projection with any K up to 64 (zero-padded to a
// multiple of 16), T ≤ kEncoderMaxSeq, within kEncoderMaxSmemBytes of shared memory.
// Variants by warps per CTA: 8 (up to 4 CTAs per SM) and 16/24 (one sequence's latency is
// shorter; chosen where batch ≤ the SM count).
#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

constexpr int kEncoderMaxFF = 512;
constexpr int kEncoderMaxPreK = 64;
constexpr int kEncoderMaxSeq = 128;
constexpr int kEncoderMaxHead = 16;
constexpr size_t kEncoderMaxSmemBytes = 227 * 1024;  // sm_90's per-block dynamic limit

// Device pointers; weights fp16 in mma fragment order (encoder_pack_weight() of the [N][K]
// matrix, PyTorch's Linear layout), biases and LayerNorm parameters fp32.
struct EncoderParams {
  const float* x = nullptr;     // [batch][t_len][pre_k when w_pre, else D]
  float* y = nullptr;           // [batch][t_len][D]
  int batch = 0, t_len = 0, ff = 0, pre_k = 0;
  int d_model = 64, head_dim = 16;  // D; heads = D / head_dim
  int warps = 0;                // warps per CTA (8, 16, 24, 32); 0: encoder_warps() chooses by batch
  const __half* w_pre = nullptr;  // [D][pre_k padded to 16] or null
  const float* b_pre = nullptr;   // [D] or null
  const __half* w_in = nullptr;   // [3D][D]: q, k, v rows
  const float* b_in = nullptr;    // [3D]
  const __half* w_out = nullptr;  // [D][D]
  const float* b_out = nullptr;   // [D]
  const float* ln1_s = nullptr;   // [D]
  const float* ln1_b = nullptr;   // [D]
  const __half* w_ff1 = nullptr;  // [ff][D]
  const float* b_ff1 = nullptr;   // [ff]
  const __half* w_ff2 = nullptr;  // [D][ff]
  const float* b_ff2 = nullptr;   // [D]
  const float* ln2_s = nullptr;   // [D]
  const float* ln2_b = nullptr;   // [D]
  float eps1 = 1e-5f, eps2 = 1e-5f;
  float scale = 0.25f;          // softmax(scale · q·kᵀ)
  // The model's head after the layer (optional, head_w non-null): only the last row's output
  // is computed, and head_out[b][n] = act(Σ_c y[b][T-1][c] · head_w[n][c] + head_b[n]), act =
  // sigmoid when head_sigmoid; y is then not written.
  const float* head_w = nullptr;  // [head_n][D] fp32
  const float* head_b = nullptr;  // [head_n] or null
  float* head_out = nullptr;      // [batch][head_n]
  int head_n = 0;
  bool head_sigmoid = false;
  bool gelu = false;            // FF activation: erf GELU, else ReLU
  // Pre-norm (PyTorch's norm_first): h = x + attn(LN₁(x)), y = h + FF(LN₂(h)), no LayerNorm on y.
  bool norm_first = false;
  bool causal = false;          // query i attends to keys 0..i only
};

// W [n][k] (row-major fp32; n a multiple of 16) as the kernel reads it, k zero-padded to k_pad
// (a multiple of 16, ≥ k; 0: k itself): for k step ks, n-tile pair np and lane l, the 4 words
// (b0, b1 of n-tile 2·np, then of 2·np + 1) of an m16n8k16 B fragment at ((ks·n/16 + np)·32 + l)·4.
std::vector<__half> encoder_pack_weight(const float* w_nk, int n, int k, int k_pad = 0);

// Checks the shape limits above (pre_k 0: no input projection); kInvalidArgument naming the one
// that is over.
Status encoder_check(int64_t d_model, int64_t heads, int64_t t_len, int64_t ff, int64_t pre_k);
// Bytes of dynamic shared memory for d_model d, TP rows (T rounded up to 32/64/128), FF ff and
// input projection K pre_k (0: none).
size_t encoder_smem_bytes(int d, int tp, int ff, int pre_k);
// The most warps per CTA a launch may use: 32 where T ≤ 64 and d_model > 32, else 16.
int encoder_max_warps(int d, int t_len);
// The warps per CTA a launch at `batch` uses: `warps` when a valid forced count (a multiple of 8
// up to encoder_max_warps), else 8 above the device's SM count and, where each CTA has an SM to
// itself, 24 (when 32 are allowed) or 16.
int encoder_warps(int batch, int d, int t_len, int warps = 0);
Status launch_encoder_layer(const EncoderParams& p, cudaStream_t stream);

// The op table entry (cuda_encoder_ops.cpp), added by add_layer_ops().
struct CudaOpInfo;
void add_encoder_ops(std::vector<CudaOpInfo>& ops);

}  // namespace ts::engine::cuda
