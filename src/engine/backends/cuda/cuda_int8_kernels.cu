// The INT8 GEMM kernel (cuda_int8.h): 64×64 output tiles, 256 threads each computing 4×4
// outputs, K in steps of 32 (8 packed words) through shared memory, dp4a accumulation.
#include "engine/backends/cuda/cuda_int8.h"

namespace ts::engine::cuda {
namespace {

constexpr int kTileM = 64, kTileN = 64, kTileWords = 8, kThreads = 256;

__device__ __forceinline__ float int8_act(float v, CudaAct act) {
  switch (act) {
    case CudaAct::kRelu: return v > 0.0f ? v : 0.0f;
    case CudaAct::kSigmoid: return 1.0f / (1.0f + expf(-v));
    case CudaAct::kTanh: return tanhf(v);
    case CudaAct::kGelu: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case CudaAct::kNone: break;
  }
  return v;
}

__device__ __forceinline__ int quantize_code(float v, float inv_scale) {
  int q = __float2int_rn(v * inv_scale);
  return max(-127, min(127, q));
}

// Rows ty + 16·i and columns tx + 16·j of the tile: the B reads of a warp and the y stores hit
// consecutive addresses. Shared arrays are padded by one word against bank conflicts in the
// loads (consecutive threads write the 8 words of one row).
__global__ void __launch_bounds__(kThreads) int8_gemm_kernel(const float* __restrict__ x, int64_t m, int k,
                                                             const int* __restrict__ wq, int k_words, int n,
                                                             float inv_scale, const float* __restrict__ dequant,
                                                             const float* __restrict__ bias, CudaAct act,
                                                             float* __restrict__ y) {
  __shared__ int as[kTileWords][kTileM + 1];
  __shared__ int bs[kTileWords][kTileN + 1];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t row0 = int64_t(blockIdx.x) * kTileM;
  const int col0 = int(blockIdx.y) * kTileN;
  int acc[4][4] = {};
  for (int w0 = 0; w0 < k_words; w0 += kTileWords) {
    for (int e = tid; e < kTileM * kTileWords; e += kThreads) {
      const int r = e / kTileWords, wd = e % kTileWords;
      const int64_t gr = row0 + r;
      const int gk = (w0 + wd) * 4;
      unsigned packed = 0;
      if (gr < m && gk < k) {
        const float* xp = x + gr * k + gk;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int q = gk + j < k ? quantize_code(xp[j], inv_scale) : 0;
          packed |= (unsigned(q) & 0xFFu) << (8 * j);
        }
      }
      as[wd][r] = int(packed);
    }
    for (int e = tid; e < kTileN * kTileWords; e += kThreads) {
      const int c = e / kTileWords, wd = e % kTileWords;
      const int gc = col0 + c;
      bs[wd][c] = gc < n && w0 + wd < k_words ? wq[int64_t(gc) * k_words + w0 + wd] : 0;
    }
    __syncthreads();
#pragma unroll
    for (int wd = 0; wd < kTileWords; ++wd) {
      int a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = as[wd][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = bs[wd][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __dp4a(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t r = row0 + ty + 16 * i;
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = col0 + tx + 16 * j;
      if (c >= n) continue;
      float v = float(acc[i][j]) * dequant[c];
      if (bias) v += bias[c];
      y[r * n + c] = int8_act(v, act);
    }
  }
}

}  // namespace

Status launch_int8_gemm(const float* x, int64_t m, int64_t k, const int32_t* wq, int64_t k_words, int64_t n,
                        float inv_in_scale, const float* dequant, const float* bias, CudaAct act, float* y,
                        cudaStream_t stream) {
  if (m == 0 || n == 0) return Status::ok();
  const int64_t mb = (m + kTileM - 1) / kTileM, nb = (n + kTileN - 1) / kTileN;
  if (mb > 0x7FFFFFFF || nb > 65535 || k > 0x7FFFFFFF) {
    return Status(StatusCode::kOutOfRange, "int8 GEMM of " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                                               std::to_string(n) + " exceeds the kernel's grid");
  }
  int8_gemm_kernel<<<dim3(unsigned(mb), unsigned(nb)), kThreads, 0, stream>>>(
      x, m, int(k), reinterpret_cast<const int*>(wq), int(k_words), int(n), inv_in_scale, dequant, bias, act, y);
  TS_CUDA_LAUNCHED("int8_gemm");
  return Status::ok();
}

}  // namespace ts::engine::cuda
