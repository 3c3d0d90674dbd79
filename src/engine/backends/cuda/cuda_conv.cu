// 1-D convolution on the device (Conv with one spatial dim: the TCN models): one thread per
// output element, consecutive threads along the output time axis, so x reads coalesce and the
// weight reads of a warp (one output channel) are broadcasts. Bias fused.
//
// PERF NOTE: the TCN fixture's convs are 32 → 32 channels, kernel 3 (96 multiply-adds per
// output); its weights (12 KB) stay in L1 across a block. No im2col + GEMM: at these sizes the
// extra pass over memory would cost more than the arithmetic it saves.
#include "engine/backends/cuda/cuda_layers.h"

namespace ts::engine::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void conv1d_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                              float* __restrict__ y, Conv1dGeom g, int64_t total) {
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = idx % g.len_out;
    const int64_t m = (idx / g.len_out) % g.m;
    const int64_t n = idx / (g.len_out * g.m);
    const int64_t c0 = (m / mg) * cg;
    const int64_t start = l * g.stride - g.pad_begin;
    float acc = bias ? bias[m] : 0.0f;
    const float* wm = w + m * cg * g.kw;
    for (int64_t c = 0; c < cg; ++c) {
      const float* xr = x + (n * g.c + c0 + c) * g.len_in;
      const float* wr = wm + c * g.kw;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t t = start + j * g.dilation;
        if (t >= 0 && t < g.len_in) acc = fmaf(wr[j], xr[t], acc);
      }
    }
    y[idx] = acc;
  }
}

}  // namespace

Status launch_conv1d(const float* x, const float* w, const float* bias, float* y, const Conv1dGeom& g,
                     cudaStream_t stream) {
  const int64_t total = g.n * g.m * g.len_out;
  if (total == 0) return Status::ok();
  int64_t blocks = (total + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  conv1d_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(x, w, bias, y, g, total);
  TS_CUDA_LAUNCHED("conv1d");
  return Status::ok();
}

}  // namespace ts::engine::cuda
