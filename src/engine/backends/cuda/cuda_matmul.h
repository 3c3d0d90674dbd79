#pragma once
// Internal to the CUDA backend: MatMul with both operands computed at run time (cuda_matmul.cu),
// e.g. attention scores q·kᵀ where a mask keeps the fusion from making a FusedAttention.
#include <cstdint>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

// Batch dims of the output and, per dim, the stride (in whole matrices) each operand advances
// by; 0 where the operand broadcasts along it. At most kMatmulMaxBatchRank dims.
constexpr int kMatmulMaxBatchRank = 6;
struct MatmulBatch {
  int rank = 0;
  int64_t dims[kMatmulMaxBatchRank] = {};
  int64_t a_stride[kMatmulMaxBatchRank] = {};
  int64_t b_stride[kMatmulMaxBatchRank] = {};
};

// y[i] = a[i] · b[i] for each batch index i (a [m, k], b [k, n], y [m, n] row-major, FP32 with
// FP32 accumulation), queued on `stream`.
Status launch_batched_matmul(const float* a, const float* b, float* y, int64_t m, int64_t n, int64_t k,
                             const MatmulBatch& batch, cudaStream_t stream);

}  // namespace ts::engine::cuda
