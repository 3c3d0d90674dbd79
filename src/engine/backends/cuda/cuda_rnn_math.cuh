#pragma once
// Device helpers of the fp32-exact recurrences (cuda_rnn.cu, cuda_rnn_cluster.cu): the logistic
// function with expf (FP32 plans hold 1e-5 against the CPU backend), and one pair of consecutive
// k of Rᵀ (fp32, fp16 or bf16 storage) as two floats. Included only by .cu files of the CUDA
// backend.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>

namespace ts::engine::cuda::rnn_math {

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }
// Element pair i (two consecutive k of one unit and gate) of Rᵀ as floats.
__device__ __forceinline__ float2 load_pair(const float* r, size_t i) { return reinterpret_cast<const float2*>(r)[i]; }
__device__ __forceinline__ float2 load_pair(const __half* r, size_t i) {
  return __half22float2(reinterpret_cast<const __half2*>(r)[i]);
}
__device__ __forceinline__ float2 load_pair(const __nv_bfloat16* r, size_t i) {
  return __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(r)[i]);
}

}  // namespace ts::engine::cuda::rnn_math
