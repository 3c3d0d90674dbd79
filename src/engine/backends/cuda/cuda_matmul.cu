// MatMul with both operands computed at run time: a 16×16 shared-memory tiled FP32 kernel, one
// grid z slice per batch matrix (looping when there are more than the grid allows), batch dims
// broadcast through per-operand strides (cuda_matmul.h).
//
// PERF NOTE: written to be right on any shape (the causal-mask attention of a Transformer whose
// mask keeps fuse_attention from matching); it is not a tensor-core kernel. The fused attention
// (cuda_attention.cu) remains the fast path where the pattern matches.
#include "engine/backends/cuda/cuda_matmul.h"

namespace ts::engine::cuda {
namespace {

constexpr int kTile = 16;

__global__ void batched_matmul_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                                      int64_t m, int64_t n, int64_t k, int64_t total, MatmulBatch bm) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = int64_t(blockIdx.y) * kTile + ty, col = int64_t(blockIdx.x) * kTile + tx;
  for (int64_t batch = blockIdx.z; batch < total; batch += gridDim.z) {
    int64_t rem = batch, ao = 0, bo = 0;
    for (int d = bm.rank - 1; d >= 0; --d) {
      const int64_t i = rem % bm.dims[d];
      rem /= bm.dims[d];
      ao += i * bm.a_stride[d];
      bo += i * bm.b_stride[d];
    }
    const float* ab = a + ao * m * k;
    const float* bb = b + bo * k * n;
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
      as[ty][tx] = row < m && k0 + tx < k ? ab[row * k + k0 + tx] : 0.0f;
      bs[ty][tx] = k0 + ty < k && col < n ? bb[(k0 + ty) * n + col] : 0.0f;
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();
    }
    if (row < m && col < n) y[batch * m * n + row * n + col] = acc;
  }
}

}  // namespace

Status launch_batched_matmul(const float* a, const float* b, float* y, int64_t m, int64_t n, int64_t k,
                             const MatmulBatch& batch, cudaStream_t stream) {
  int64_t total = 1;
  for (int d = 0; d < batch.rank; ++d) total *= batch.dims[d];
  if (total == 0 || m == 0 || n == 0) return Status::ok();
  const dim3 block(kTile, kTile);
  const dim3 grid(unsigned((n + kTile - 1) / kTile), unsigned((m + kTile - 1) / kTile),
                  unsigned(total < 65535 ? total : 65535));
  if (grid.y > 65535) return Status(StatusCode::kInvalidArgument, "MatMul: " + std::to_string(m) + " rows is too many");
  batched_matmul_kernel<<<grid, block, 0, stream>>>(a, b, y, m, n, k, total, batch);
  TS_CUDA_LAUNCHED("batched matmul");
  return Status::ok();
}

}  // namespace ts::engine::cuda
