// LayerNormalization on the device: one warp per row, two passes over the row (mean, then the
// variance of x − mean, as the CPU backend computes it), fp32 throughout.
//
// PERF NOTE: the Transformer fixtures normalize rows of 64 floats (d_model), 2 per lane; a
// block per row would leave 30 of 32 lanes of every warp but one idle. Eight rows per
// 256-thread block. Rows of 32·N floats (N = 1, 2, 4, 8) are held in registers: one global
// read per element instead of three (ncu of the three-read version at Transformer batch 4096,
// 245,760 rows of 64: bench/results/archive/ncu-transformer-b4096-h200-20261130-1237.txt).
#include "engine/backends/cuda/cuda_layers.h"

namespace ts::engine::cuda {
namespace {

constexpr int kRowsPerBlock = 8;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void layer_norm_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t len,
                                  const float* __restrict__ scale, int scale_step, const float* __restrict__ bias,
                                  int bias_step, float eps, float* mean_out, float* inv_out) {
  const int64_t row = blockIdx.x * int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* p = x + row * len;
  float* q = y + row * len;
  float s = 0.0f;
  for (int64_t c = lane; c < len; c += 32) s += p[c];
  const float mean = warp_sum(s) / float(len);
  float v = 0.0f;
  for (int64_t c = lane; c < len; c += 32) {
    float d = p[c] - mean;
    v += d * d;
  }
  const float inv = 1.0f / sqrtf(warp_sum(v) / float(len) + eps);
  for (int64_t c = lane; c < len; c += 32) {
    float r = (p[c] - mean) * inv;
    if (scale) r *= scale[c * scale_step];
    if (bias) r += bias[c * bias_step];
    q[c] = r;
  }
  if (lane == 0) {
    if (mean_out) mean_out[row] = mean;
    if (inv_out) inv_out[row] = inv;
  }
}

template <int N>
__global__ void layer_norm_regs_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                                       const float* __restrict__ scale, int scale_step, const float* __restrict__ bias,
                                       int bias_step, float eps, float* mean_out, float* inv_out) {
  constexpr int kLen = 32 * N;
  const int64_t row = blockIdx.x * int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* p = x + row * kLen;
  float v[N];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    v[i] = p[lane + 32 * i];
    s += v[i];
  }
  const float mean = warp_sum(s) / float(kLen);
  float q = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    v[i] -= mean;
    q += v[i] * v[i];
  }
  const float inv = 1.0f / sqrtf(warp_sum(q) / float(kLen) + eps);
  float* o = y + row * kLen;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = lane + 32 * i;
    float r = v[i] * inv;
    if (scale) r *= scale[c * scale_step];
    if (bias) r += bias[c * bias_step];
    o[c] = r;
  }
  if (lane == 0) {
    if (mean_out) mean_out[row] = mean;
    if (inv_out) inv_out[row] = inv;
  }
}

}  // namespace

Status launch_layer_norm(const float* x, float* y, int64_t rows, int64_t len, const float* scale, int scale_step,
                         const float* bias, int bias_step, float eps, float* mean_out, float* inv_out,
                         cudaStream_t stream) {
  if (rows == 0 || len == 0) return Status::ok();
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const unsigned g = unsigned(blocks), t = kRowsPerBlock * 32;
  switch (len) {
    case 32: layer_norm_regs_kernel<1><<<g, t, 0, stream>>>(x, y, rows, scale, scale_step, bias, bias_step, eps, mean_out, inv_out); break;
    case 64: layer_norm_regs_kernel<2><<<g, t, 0, stream>>>(x, y, rows, scale, scale_step, bias, bias_step, eps, mean_out, inv_out); break;
    case 128: layer_norm_regs_kernel<4><<<g, t, 0, stream>>>(x, y, rows, scale, scale_step, bias, bias_step, eps, mean_out, inv_out); break;
    case 256: layer_norm_regs_kernel<8><<<g, t, 0, stream>>>(x, y, rows, scale, scale_step, bias, bias_step, eps, mean_out, inv_out); break;
    default:
      layer_norm_kernel<<<unsigned(blocks), kRowsPerBlock * 32, 0, stream>>>(x, y, rows, len, scale, scale_step, bias,
                                                                         bias_step, eps, mean_out, inv_out);
  }
  TS_CUDA_LAUNCHED("layer norm");
  return Status::ok();
}

}  // namespace ts::engine::cuda
