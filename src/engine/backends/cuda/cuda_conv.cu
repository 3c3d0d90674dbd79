// 1-D convolution on the device, the direct kernels: one thread per output element, consecutive
// threads along the output time axis, so x reads coalesce (channel-major X) and the weight reads
// of a warp (one output channel) are broadcasts; or one warp per output, its lanes splitting K.
// Bias, ReLU and a residual add fused; X read channel-major [n, c, len] or time-major
// [n, len, c] (a folded input Transpose).
//
// PERF NOTE: the TCN fixture's convs are 32 → 32 channels, kernel 3 (96 multiply-adds per
// output); its weights (12 KB) stay in L1 across a block. Wider TCNs (71 channels, kernel 4:
// 284 per output) and large batches run the implicit GEMM of cuda_conv_igemm.cu instead
// (the builder times both for every fused conv node).
#include "engine/backends/cuda/cuda_conv.h"
#include "engine/backends/cuda/cuda_layers.h"

namespace ts::engine::cuda {
namespace {

constexpr int kThreads = 256;

// The epilogue of output idx = (n, m, l): ReLU, then the residual (its own length and offset
// where only the last step is computed: ConvEpilogue), then ReLU again where asked.
__device__ __forceinline__ float finish(float acc, const Conv1dGeom& g, const ConvEpilogue& e, int64_t idx, int64_t n,
                                        int64_t m, int64_t l) {
  if (e.relu) acc = fmaxf(acc, 0.0f);
  if (e.residual) acc += e.residual[e.res_len ? (n * g.m + m) * e.res_len + l + e.res_t0 : idx];
  if (e.relu_after_residual) acc = fmaxf(acc, 0.0f);
  return acc;
}

__global__ void conv1d_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                              Conv1dGeom g, bool x_time_major, ConvEpilogue e, int64_t total) {
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  // Element (channel c, time t) of sample n is at x_n[c · cs + t · ts].
  const int64_t cs = x_time_major ? 1 : g.len_in, ts = x_time_major ? g.c : 1;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = idx % g.len_out;
    const int64_t m = (idx / g.len_out) % g.m;
    const int64_t n = idx / (g.len_out * g.m);
    const int64_t c0 = (m / mg) * cg;
    const int64_t start = l * g.stride - g.pad_begin;
    float acc = e.bias ? e.bias[m] : 0.0f;
    const float* wm = w + m * cg * g.kw;
    const float* xn = x + n * g.c * g.len_in;
    for (int64_t c = 0; c < cg; ++c) {
      const float* xr = xn + (c0 + c) * cs;
      const float* wr = wm + c * g.kw;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t t = start + j * g.dilation;
        if (t >= 0 && t < g.len_in) acc = fmaf(wr[j], xr[t * ts], acc);
      }
    }
    y[idx] = finish(acc, g, e, idx, n, m, l);
  }
}

// Warp per output: the lanes split K = c·kw (k = c·kw + j, W's own order, so weight reads
// coalesce) and reduce by shuffles; bias and the epilogue after the reduction. For few outputs
// (batch 1: 60 steps × m channels), where one thread's K-long dependent chain is the latency.
__global__ void conv1d_warp_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                                   Conv1dGeom g, bool x_time_major, ConvEpilogue e, int64_t total) {
  const int64_t cg = g.c / g.group, mg = g.m / g.group, kk = cg * g.kw;
  const int64_t cs = x_time_major ? 1 : g.len_in, ts = x_time_major ? g.c : 1;
  const int lane = int(threadIdx.x) & 31;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  // idx is the same on every lane of a warp: the loop and the shuffles are warp-uniform.
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; idx < total; idx += warps) {
    const int64_t l = idx % g.len_out;
    const int64_t m = (idx / g.len_out) % g.m;
    const int64_t n = idx / (g.len_out * g.m);
    const int64_t c0 = (m / mg) * cg;
    const int64_t start = l * g.stride - g.pad_begin;
    const float* wm = w + m * kk;
    const float* xn = x + n * g.c * g.len_in;
    float acc = 0.0f;
    for (int64_t k = lane; k < kk; k += 32) {
      const int64_t c = k / g.kw, t = start + (k - c * g.kw) * g.dilation;
      if (t >= 0 && t < g.len_in) acc = fmaf(wm[k], xn[(c0 + c) * cs + t * ts], acc);
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) y[idx] = finish(acc + (e.bias ? e.bias[m] : 0.0f), g, e, idx, n, m, l);
  }
}

Status launch(const float* x, const float* w, float* y, const Conv1dGeom& g, bool x_time_major, const ConvEpilogue& e,
              bool warp_per_output, cudaStream_t stream) {
  const int64_t total = g.n * g.m * g.len_out;
  if (total == 0) return Status::ok();
  const int64_t per_block = warp_per_output ? kThreads / 32 : kThreads;
  int64_t blocks = (total + per_block - 1) / per_block;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  if (warp_per_output) {
    conv1d_warp_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(x, w, y, g, x_time_major, e, total);
  } else {
    conv1d_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(x, w, y, g, x_time_major, e, total);
  }
  TS_CUDA_LAUNCHED("conv1d");
  return Status::ok();
}

}  // namespace

Status launch_conv1d(const float* x, const float* w, const float* bias, float* y, const Conv1dGeom& g,
                     cudaStream_t stream) {
  ConvEpilogue e;
  e.bias = bias;
  return launch(x, w, y, g, false, e, false, stream);
}

Status launch_conv1d_direct(const float* x, const float* w, float* y, const ConvFusedGeom& f, const ConvEpilogue& e,
                            bool warp_per_output, cudaStream_t stream) {
  const Conv1dGeom g{f.n, f.c, f.m, /*group=*/1, f.len_in, f.len_out, f.kw, /*stride=*/1, f.dilation, f.pad_begin};
  return launch(x, w, y, g, f.x_time_major, e, warp_per_output, stream);
}

}  // namespace ts::engine::cuda
