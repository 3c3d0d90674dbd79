#pragma once
// Internal to the CUDA backend: launchers of the Transformer and TCN layer kernels
// (cuda_norm.cu, cuda_attention.cu, cuda_conv.cu). All read and write FP32 device memory,
// queue work on `stream` (never synchronize: they may run under CUDA-graph capture) and return
// the launch status.
#include <cstdint>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

// LayerNormalization over rows of `len` floats: y = (x − mean) / √(var + eps) · scale + bias.
// scale/bias: null, one value (step 0) or `len` values (step 1). mean_out/inv_out: per-row
// mean and 1/√(var + eps), or null.
Status launch_layer_norm(const float* x, float* y, int64_t rows, int64_t len, const float* scale, int scale_step,
                         const float* bias, int bias_step, float eps, float* mean_out, float* inv_out,
                         cudaStream_t stream);

// Fused attention for each of `batch` (batch × heads) slices: o = softmax(scale · q·kᵀ) · v.
// q [batch, tq, d]; k [batch, tk, d] (k_transposed false) or kᵀ [batch, d, tk]; v [batch, tk,
// dv]; o [batch, tq, dv]. d, dv ≤ kAttentionMaxHeadDim; any tk (keys streamed through shared
// memory with an online softmax).
constexpr int kAttentionMaxHeadDim = 128;
Status launch_attention(const float* q, const float* k, const float* v, float* o, int64_t batch, int64_t tq,
                        int64_t tk, int64_t d, int64_t dv, float scale, bool k_transposed, cudaStream_t stream);

// 1-D convolution: x [n, c, len_in], w [m, c / group, kw], bias [m] or null, y [n, m, len_out],
// y[n, m, l] = bias[m] + Σ_{c in m's group, j} w[m, c, j] · x[n, c, l·stride + j·dilation − pad_begin]
// (zero outside x).
struct Conv1dGeom {
  int64_t n = 0, c = 0, m = 0, group = 1, len_in = 0, len_out = 0, kw = 0;
  int64_t stride = 1, dilation = 1, pad_begin = 0;
};
Status launch_conv1d(const float* x, const float* w, const float* bias, float* y, const Conv1dGeom& g,
                     cudaStream_t stream);

}  // namespace ts::engine::cuda
