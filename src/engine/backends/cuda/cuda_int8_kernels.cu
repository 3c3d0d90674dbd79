// The INT8 GEMM kernel (cuda_int8.h), dp4a accumulation, in two shapes of one template:
//   large M: 64×64 output tiles, 256 threads each computing 4×4 outputs, K in steps of 32
//            (8 packed words) through shared memory;
//   small M (fewer 64-row tiles than multiprocessors, K ≤ 256): 16×64 tiles, 1×4 outputs per
//            thread, the whole K loaded in one step.
// PERF NOTE: the first GPU run had only the large shape: at batch 1 (M = 60 rows) each GEMM
// was one or a few CTAs walking K in dependent 32-wide steps, and transformer-2x64 INT8 was
// slower than FP16 (bench/results/engine-cuda-int8-h200-20261130-1636.json); the small-M shape
// brought it level (-1640.json).
#include "engine/backends/cuda/cuda_int8.h"

namespace ts::engine::cuda {
namespace {

constexpr int kTileN = 64, kThreads = 256;
constexpr int kSmallMaxWords = 64;  // K ≤ 256 for the small-M shape

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

// Rows ty + 16·i (i < RM) and columns tx + 16·j of the tile: the B reads of a warp and the y
// stores hit consecutive addresses. Shared arrays are padded by one word against bank
// conflicts in the loads (consecutive threads write consecutive words of one row).
template <int RM, int TW>
__global__ void __launch_bounds__(kThreads) int8_gemm_kernel(const float* __restrict__ x, int64_t m, int k,
                                                             const int* __restrict__ wq, int k_words, int n,
                                                             float inv_scale, const float* __restrict__ dequant,
                                                             const float* __restrict__ bias, CudaAct act,
                                                             float* __restrict__ y) {
  constexpr int kTileM = 16 * RM;
  __shared__ int as[TW][kTileM + 1];
  __shared__ int bs[TW][kTileN + 1];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t row0 = int64_t(blockIdx.x) * kTileM;
  const int col0 = int(blockIdx.y) * kTileN;
  int acc[RM][4] = {};
  for (int w0 = 0; w0 < k_words; w0 += TW) {
    const int words = min(TW, k_words - w0);
    for (int e = tid; e < kTileM * words; e += kThreads) {
      const int r = e / words, wd = e % words;
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
    for (int e = tid; e < kTileN * words; e += kThreads) {
      const int c = e / words, wd = e % words;
      const int gc = col0 + c;
      bs[wd][c] = gc < n ? wq[int64_t(gc) * k_words + w0 + wd] : 0;
    }
    __syncthreads();
#pragma unroll 8
    for (int wd = 0; wd < words; ++wd) {
      int a[RM], b[4];
#pragma unroll
      for (int i = 0; i < RM; ++i) a[i] = as[wd][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = bs[wd][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < RM; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __dp4a(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < RM; ++i) {
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
  const int64_t nb = (n + kTileN - 1) / kTileN;
  const int sms = device_sm_count() > 0 ? device_sm_count() : 100;
  const bool small = k_words <= kSmallMaxWords && ((m + 63) / 64) * nb < sms;
  const int64_t tile_m = small ? 16 : 64, mb = (m + tile_m - 1) / tile_m;
  if (mb > 0x7FFFFFFF || nb > 65535 || k > 0x7FFFFFFF) {
    return Status(StatusCode::kOutOfRange, "int8 GEMM of " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                                               std::to_string(n) + " exceeds the kernel's grid");
  }
  const dim3 grid{static_cast<unsigned>(mb), static_cast<unsigned>(nb)};
  const int* w = reinterpret_cast<const int*>(wq);
  if (small) {
    int8_gemm_kernel<1, kSmallMaxWords><<<grid, kThreads, 0, stream>>>(x, m, int(k), w, int(k_words), int(n), inv_in_scale,
                                                                       dequant, bias, act, y);
  } else {
    int8_gemm_kernel<4, 8><<<grid, kThreads, 0, stream>>>(x, m, int(k), w, int(k_words), int(n), inv_in_scale, dequant,
                                                          bias, act, y);
  }
  TS_CUDA_LAUNCHED("int8_gemm");
  return Status::ok();
}

}  // namespace ts::engine::cuda
