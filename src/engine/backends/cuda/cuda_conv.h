#pragma once
// Internal to the CUDA backend: 1-D convolution kernels for TCNs as PyTorch exports them
// (passes/fuse_conv1d.cpp): Conv1d (stride 1, group 1, any dilation and padding) with the causal
// trim, bias, ReLU and a residual add fused into the epilogue, reading X channel-major
// [n, c, len] or time-major [n, len, c] (the model input's Transpose folded in). Y is always
// [n, m, len_out]; all tensors f32 (FP16/BF16 plans convert X to 16 bits as it is tiled).
#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

struct ConvFusedGeom {
  int64_t n = 0, c = 0, m = 0, len_in = 0, len_out = 0, kw = 0;
  // y[t] reads x[t + j·dilation − pad_begin], 0 outside [0, len_in); pad_begin < 0 where only the
  // last steps are computed (a folded Gather of the last step: len_out 1).
  int64_t dilation = 1, pad_begin = 0;
  bool x_time_major = false;            // X is [n, len_in, c] instead of [n, c, len_in]
};

// What the epilogue adds to each output: y = act(conv + bias) + residual, then ReLU again with
// relu_after_residual. bias [m] and the residual may be null; the residual is [n, m, res_len]
// and y[n, m, t] adds residual[n, m, t + res_t0] (res_len 0: y's own shape, res_t0 0).
struct ConvEpilogue {
  const float* bias = nullptr;
  const float* residual = nullptr;
  bool relu = false, relu_after_residual = false;
  int64_t res_len = 0, res_t0 = 0;
};

// The implicit-GEMM tiles: rows = n·len_out output positions, columns = m, K = c·kw ordered as
// PyTorch's weight [m, c, kw] flattens. Weights are packed once as [k_pad, m_pad] (zeros past c·kw
// and m) by conv_pack_weights, k_pad = c·kw rounded up to the tile's K step.
constexpr int64_t kConvTileM = 64;
inline int64_t conv_m_pad(int64_t m) { return (m + kConvTileM - 1) / kConvTileM * kConvTileM; }

enum class ConvMath : int { kF32 = 0, kF16, kBF16 };

// K per step of the implicit GEMM's tiles: 32, or with wide_k 128 (16-bit) / 64 (FP32, whose
// tiles are twice the bytes).
inline int64_t conv_k_step(ConvMath math, bool wide_k) { return wide_k ? (math == ConvMath::kF32 ? 64 : 128) : 32; }
inline int64_t conv_k_pad(int64_t c, int64_t kw, int64_t k_step) { return (c * kw + k_step - 1) / k_step * k_step; }

// Host: W [m, c, kw] f32 → the packed layout [k_pad, m_pad] in `math`'s element type (4 or 2
// bytes each), k_pad = conv_k_pad(c, kw, conv_k_step(math, wide_k)) of the tiles that read it.
std::vector<uint8_t> conv_pack_weights(const float* w, int64_t m, int64_t c, int64_t kw, ConvMath math, bool wide_k);

// Implicit GEMM: FP16/BF16 tensor cores (wmma 16×16×16, FP32 accumulate) or, for kF32, FP32
// FFMA tiles (every product and sum in FP32, as PyTorch's FP32 conv). w_packed from
// conv_pack_weights for the same math. wide_k: 128 (FP32 64) of K per step instead of 32, fewer
// dependent steps for small batches (the builder times both).
Status launch_conv1d_igemm(const float* x, const void* w_packed, ConvMath math, bool wide_k, float* y,
                           const ConvFusedGeom& g, const ConvEpilogue& e, cudaStream_t stream);

// The direct kernels (FP32; W [m, c, kw] as given): one thread per output, or with
// warp_per_output one warp per output, its lanes splitting K (few outputs: batch 1). The general
// path the builder times against the implicit GEMM.
Status launch_conv1d_direct(const float* x, const float* w, float* y, const ConvFusedGeom& g, const ConvEpilogue& e,
                            bool warp_per_output, cudaStream_t stream);

}  // namespace ts::engine::cuda
