// 1-D convolution as an implicit GEMM (cuda_conv.h): Y[(n, t), m] = Σ_k A[(n, t), k] · W[k, m]
// with A gathered from X on the fly (k = c·kw + j reads x[n, c, t + j·dilation − pad_begin], zero
// outside the input: the causal padding costs nothing). A CTA computes 64 output positions ×
// 64 output channels; K advances 32 at a time through shared memory. FP16/BF16: X converted as
// it is tiled, wmma 16×16×16 tensor-core tiles with FP32 accumulation (4 warps, 32×32 each).
// FP32: 256 threads, 4×4 outputs each, FFMA. Both stage the tile through shared memory for the
// epilogue (bias, ReLU, residual), which writes Y [n, m, len_out] along t, coalesced.
//
// PERF NOTE: TCN convs are small GEMMs with a long M (n·T rows: 245,760 at batch 4096, T 60)
// and K = c·kw of 36–640; the direct kernel re-reads every weight per output and runs at FP32
// FFMA speed without reuse (18.7 ms for TCN-3×71 at batch 4096 against cuDNN's 2.1 ms,
// shape-sweep-h200-20261202-1917-eng4.json). No im2col buffer: the gather from X hits L1/L2
// (each x element is read kw times by neighbouring rows of the same tile), and the extra pass
// over memory an im2col costs would be as large as the conv's own traffic.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cstring>
#include <vector>

#include "engine/backends/cuda/cuda_conv.h"

namespace ts::engine::cuda {
namespace {

constexpr int kBM = 64;                // output positions per CTA
constexpr int kBN = int(kConvTileM);   // output channels per CTA
constexpr int kLdC = kBM + 4;          // the accumulator tile, column-major [kBN][kLdC] floats
constexpr int kTileCBytes = kBN * kLdC * 4;

// Where each row (output position) of the tile reads and writes; rows past n·len_out get a t0
// that puts every tap outside the input and y_off −1.
struct RowTable {
  int64_t x_off[kBM];  // sample n's first element in x
  int64_t y_off[kBM];  // y[n, 0, t]
  int64_t r_off[kBM];  // residual[n, 0, t + res_t0]
  int t0[kBM];         // t − pad_begin
};
// The step's K columns: input channel (−1 past c·kw) and time offset j·dilation.
template <int BK>
struct ColTable {
  int ci[BK];
  int dt[BK];
};

__device__ void fill_rows(RowTable& rt, const ConvFusedGeom& g, const ConvEpilogue& e, int64_t p0) {
  const int64_t rows = g.n * g.len_out;
  for (int r = threadIdx.x; r < kBM; r += blockDim.x) {
    const int64_t p = p0 + r;
    if (p < rows) {
      const int64_t n = p / g.len_out, t = p - n * g.len_out;
      rt.x_off[r] = n * g.c * g.len_in;
      rt.y_off[r] = n * g.m * g.len_out + t;
      rt.r_off[r] = e.res_len ? n * g.m * e.res_len + t + e.res_t0 : rt.y_off[r];
      rt.t0[r] = int(t - g.pad_begin);
    } else {
      rt.x_off[r] = 0;
      rt.y_off[r] = -1;
      rt.r_off[r] = 0;
      rt.t0[r] = -(1 << 30);
    }
  }
}

template <int BK>
__device__ void fill_cols(ColTable<BK>& ct, const ConvFusedGeom& g, int k0) {
  const int kw = int(g.kw), kk = int(g.c) * kw;
  for (int i = threadIdx.x; i < BK; i += blockDim.x) {
    const int k = k0 + i;
    const int ci = k / kw;
    ct.ci[i] = k < kk ? ci : -1;
    ct.dt[i] = (k - ci * kw) * int(g.dilation);
  }
}

// A[r, kk] of the tile (0 outside the input or past K).
template <int BK>
__device__ __forceinline__ float gather_a(const float* __restrict__ x, const ConvFusedGeom& g, const RowTable& rt,
                                          const ColTable<BK>& ct, int r, int kk) {
  const int ci = ct.ci[kk];
  const int ti = rt.t0[r] + ct.dt[kk];
  if (ci < 0 || ti < 0 || ti >= g.len_in) return 0.0f;
  const int64_t off = g.x_time_major ? int64_t(ti) * g.c + ci : int64_t(ci) * g.len_in + ti;
  return __ldg(x + rt.x_off[r] + off);
}

// (r, kk) of element `idx` of the A tile: along r (t) for channel-major X, along k for time-major.
template <int BK>
__device__ __forceinline__ void a_coord(bool time_major, int idx, int* r, int* kk) {
  if (time_major) {
    *kk = idx % BK;
    *r = idx / BK;
  } else {
    *r = idx % kBM;
    *kk = idx / kBM;
  }
}

// The epilogue from the column-major accumulator tile cs.
__device__ void store_tile(const float* cs, const RowTable& rt, int m0, const ConvFusedGeom& g, const ConvEpilogue& e,
                           float* __restrict__ y) {
  for (int idx = threadIdx.x; idx < kBM * kBN; idx += blockDim.x) {
    const int r = idx % kBM, col = idx / kBM;
    const int m = m0 + col;
    if (m >= g.m || rt.y_off[r] < 0) continue;
    float v = cs[col * kLdC + r];
    if (e.bias) v += __ldg(e.bias + m);
    if (e.relu) v = fmaxf(v, 0.0f);
    if (e.residual) v += e.residual[rt.r_off[r] + int64_t(m) * (e.res_len ? e.res_len : g.len_out)];
    if (e.relu_after_residual) v = fmaxf(v, 0.0f);
    y[rt.y_off[r] + int64_t(m) * g.len_out] = v;
  }
}

template <typename T> __device__ __forceinline__ T to_16(float v);
template <> __device__ __forceinline__ __half to_16<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 to_16<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

constexpr int kMmaThreads = 128;
constexpr int kLdB = kBN + 8;  // halves; rows stay 32-byte aligned for wmma

// BK: K per step (32; 128 for few rows, where each step's latency is the cost: 3 steps instead
// of 9 for K = 284). k_end: c·kw rounded up to BK (the packed k_pad).
template <typename T, int BK>
__global__ void __launch_bounds__(kMmaThreads) conv_igemm_mma(const float* __restrict__ x, const T* __restrict__ w,
                                                              int64_t m_pad, int64_t k_end, ConvFusedGeom g,
                                                              ConvEpilogue e, float* __restrict__ y) {
  using namespace nvcuda;
  constexpr int kLdA = BK + 8;
  constexpr int kAB = (kBM * kLdA + BK * kLdB) * int(sizeof(T));
  __shared__ __align__(128) unsigned char smem[kAB > kTileCBytes ? kAB : kTileCBytes];
  __shared__ RowTable rt;
  __shared__ ColTable<BK> ct;
  T* as = reinterpret_cast<T*>(smem);  // [kBM][kLdA]
  T* bs = as + kBM * kLdA;             // [BK][kLdB]
  const int tid = threadIdx.x, warp = tid / 32;
  const int64_t p0 = int64_t(blockIdx.x) * kBM;
  const int m0 = int(blockIdx.y) * kBN;
  const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  fill_rows(rt, g, e, p0);
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int64_t k0 = 0; k0 < k_end; k0 += BK) {
    fill_cols(ct, g, int(k0));
    __syncthreads();  // tables written; the previous step's fragments read
#pragma unroll 16
    for (int idx = tid; idx < kBM * BK; idx += kMmaThreads) {
      int r, kk;
      a_coord<BK>(g.x_time_major, idx, &r, &kk);
      as[r * kLdA + kk] = to_16<T>(gather_a(x, g, rt, ct, r, kk));
    }
    for (int idx = tid; idx < BK * kBN / 8; idx += kMmaThreads) {  // 8 values per 16-byte load
      const int row = idx / (kBN / 8), col = (idx % (kBN / 8)) * 8;
      *reinterpret_cast<uint4*>(bs + row * kLdB + col) =
          __ldg(reinterpret_cast<const uint4*>(w + (k0 + row) * m_pad + m0 + col));
    }
    __syncthreads();
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[2];
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], as + (wm + 16 * i) * kLdA + kk, kLdA);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], bs + kk * kLdB + wn + 16 * j, kLdB);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }
  __syncthreads();  // the A/B tiles are dead: the accumulator tile reuses their memory
  float* cs = reinterpret_cast<float*>(smem);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(cs + (wn + 16 * j) * kLdC + wm + 16 * i, acc[i][j], kLdC, wmma::mem_col_major);
  __syncthreads();
  store_tile(cs, rt, m0, g, e, y);
}

constexpr int kF32Threads = 256;  // 16 × 16 threads, 4 × 4 outputs each

template <int BK>
__global__ void __launch_bounds__(kF32Threads) conv_igemm_f32(const float* __restrict__ x, const float* __restrict__ w,
                                                              int64_t m_pad, int64_t k_end, ConvFusedGeom g,
                                                              ConvEpilogue e, float* __restrict__ y) {
  constexpr int kAB = (BK * kBM + BK * kBN) * 4;
  __shared__ __align__(128) unsigned char smem[kAB > kTileCBytes ? kAB : kTileCBytes];
  __shared__ RowTable rt;
  __shared__ ColTable<BK> ct;
  float* as = reinterpret_cast<float*>(smem);  // [BK][kBM]: k-major, so a thread reads 4 rows as a float4
  float* bs = as + BK * kBM;                   // [BK][kBN]
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t p0 = int64_t(blockIdx.x) * kBM;
  const int m0 = int(blockIdx.y) * kBN;
  fill_rows(rt, g, e, p0);
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < k_end; k0 += BK) {
    fill_cols(ct, g, int(k0));
    __syncthreads();
#pragma unroll 8
    for (int idx = tid; idx < kBM * BK; idx += kF32Threads) {
      int r, kk;
      a_coord<BK>(g.x_time_major, idx, &r, &kk);
      as[kk * kBM + r] = gather_a(x, g, rt, ct, r, kk);
    }
    for (int idx = tid; idx < BK * kBN / 4; idx += kF32Threads) {
      const int row = idx / (kBN / 4), col = (idx % (kBN / 4)) * 4;
      *reinterpret_cast<float4*>(bs + row * kBN + col) =
          __ldg(reinterpret_cast<const float4*>(w + (k0 + row) * m_pad + m0 + col));
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(as + kk * kBM + ty * 4);
      const float4 b = *reinterpret_cast<const float4*>(bs + kk * kBN + tx * 4);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }
  __syncthreads();
  float* cs = reinterpret_cast<float*>(smem);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) cs[(tx * 4 + j) * kLdC + ty * 4 + i] = acc[i][j];
  __syncthreads();
  store_tile(cs, rt, m0, g, e, y);
}

}  // namespace

std::vector<uint8_t> conv_pack_weights(const float* w, int64_t m, int64_t c, int64_t kw, ConvMath math, bool wide_k) {
  const int64_t k = c * kw, k_pad = conv_k_pad(c, kw, conv_k_step(math, wide_k)), m_pad = conv_m_pad(m);
  const size_t elem = math == ConvMath::kF32 ? 4 : 2;
  std::vector<uint8_t> out(size_t(k_pad * m_pad) * elem, 0);
  for (int64_t mi = 0; mi < m; ++mi) {
    for (int64_t ki = 0; ki < k; ++ki) {
      const float v = w[mi * k + ki];  // W [m, c, kw] flattened: ki = c·kw + j
      uint8_t* dst = out.data() + size_t(ki * m_pad + mi) * elem;
      if (math == ConvMath::kF32) {
        std::memcpy(dst, &v, 4);
      } else if (math == ConvMath::kF16) {
        const __half h = __float2half_rn(v);
        std::memcpy(dst, &h, 2);
      } else {
        const __nv_bfloat16 h = __float2bfloat16_rn(v);
        std::memcpy(dst, &h, 2);
      }
    }
  }
  return out;
}

Status launch_conv1d_igemm(const float* x, const void* w_packed, ConvMath math, bool wide_k, float* y,
                           const ConvFusedGeom& g, const ConvEpilogue& e, cudaStream_t stream) {
  const int64_t rows = g.n * g.len_out;
  if (rows == 0 || g.m == 0) return Status::ok();
  const int64_t m_pad = conv_m_pad(g.m);
  const dim3 grid(unsigned((rows + kBM - 1) / kBM), unsigned(m_pad / kBN));
  const int64_t k_end = conv_k_pad(g.c, g.kw, conv_k_step(math, wide_k));  // = the packed k_pad
  const auto* wf = static_cast<const float*>(w_packed);
  const auto* wh = static_cast<const __half*>(w_packed);
  const auto* wb = static_cast<const __nv_bfloat16*>(w_packed);
  switch (math) {
    case ConvMath::kF32:
      if (wide_k) conv_igemm_f32<64><<<grid, kF32Threads, 0, stream>>>(x, wf, m_pad, k_end, g, e, y);
      else conv_igemm_f32<32><<<grid, kF32Threads, 0, stream>>>(x, wf, m_pad, k_end, g, e, y);
      break;
    case ConvMath::kF16:
      if (wide_k) conv_igemm_mma<__half, 128><<<grid, kMmaThreads, 0, stream>>>(x, wh, m_pad, k_end, g, e, y);
      else conv_igemm_mma<__half, 32><<<grid, kMmaThreads, 0, stream>>>(x, wh, m_pad, k_end, g, e, y);
      break;
    case ConvMath::kBF16:
      if (wide_k) conv_igemm_mma<__nv_bfloat16, 128><<<grid, kMmaThreads, 0, stream>>>(x, wb, m_pad, k_end, g, e, y);
      else conv_igemm_mma<__nv_bfloat16, 32><<<grid, kMmaThreads, 0, stream>>>(x, wb, m_pad, k_end, g, e, y);
      break;
  }
  TS_CUDA_LAUNCHED("conv1d_igemm");
  return Status::ok();
}

}  // namespace ts::engine::cuda
