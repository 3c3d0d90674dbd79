// The fused Transformer encoder layer (cuda_encoder.h): one CTA of W warps per sequence.
//
// Shared memory, D = d_model, TP = T rounded up to 32, 64 or 128 (rows T..TP-1 are zero on entry
// and stay finite; keys there are masked out of the softmax and no output row is written for them):
//   xf   fp32 [TP][D+8]  the residual stream (x, then x1, then x1 + ffn)
//   xh   fp16 [TP][D+8]  the A operand: x (in_proj), the heads' outputs (out_proj), LN₁(…) (FF1)
//   q, k fp16 [TP][D+8]  and vᵀ fp16 [D][TP+8] (the B operand of p·v wants keys contiguous)
//   hb   fp16 [TP][FF+8] the FF hidden layer, over q/k/vᵀ (dead by then); also the staging of
//        the raw input for the folded input projection ([TP][KP+8], K zero-padded to KP, a
//        multiple of 16).
// Rows are padded by 8 halves (16 bytes): a quad's 32-bit fragment loads of 8 rows then fall
// in 32 different banks.
//
// Every matrix product is a list of items (16 rows × 32 columns, 4 mma n-tiles) dealt round
// robin to the warps; B fragments (weights, [N][K] fp16) are read from global memory through
// the read-only cache, packed in fragment order (encoder_pack_weight): one coalesced 16-byte load
// per lane per k step and n-tile pair; 56 KB of weights per layer at D 64, shared by all CTAs of
// an SM. Attention: an item is one head × 16 query rows; the head dim (a multiple of 8) is a
// run-time loop of k16 steps (+ one k8 step) for q·kᵀ and of 8-column n-tiles for p·v.
//
// PERF NOTE: one CTA per sequence keeps every intermediate on chip; at batch 1 the layer is
// one CTA's latency (no inter-CTA sync), at large batch 4 CTAs (TP = 64, 8 warps) share an SM.
// Where every CTA has an SM to itself (batch ≤ the SM count) the same items go to more warps
// (24 at D 64/128 with T ≤ 64, else 16): at T 60, D 64, in_proj 3 → 1 round, attention 2 → 1,
// FF1 2 → 1, LayerNorm 8 → 3 rows per warp, so one sequence's latency through the layer is
// shorter: both layers of transformer-2x64 alone ran faster at batch 1 with 16 warps than with 8,
// and batch 16 as fast as batch 1 (bench/results/archive/gpu-tests-xfmr2-h200-20261201-0154.log, -0201.log;
// docs/performance.md, history row 8a07881).
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

#include "engine/backends/cuda/cuda_encoder.h"

namespace ts::engine::cuda {
namespace {

__device__ __forceinline__ uint32_t lds32(const __half* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __forceinline__ void sts32(__half* p, float lo, float hi) { *reinterpret_cast<uint32_t*>(p) = pack2(lo, hi); }

__device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma1688(float c[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(b0));
}

// A fragment of rows r0..r0+15, columns k0..k0+15 of a row-major fp16 matrix in shared memory.
__device__ __forceinline__ void load_a(uint32_t a[4], const __half* A, int lda, int r0, int k0, int g, int c) {
  const __half* p = A + (r0 + g) * lda + k0 + 2 * c;
  a[0] = lds32(p);
  a[1] = lds32(p + 8 * lda);
  a[2] = lds32(p + 8);
  a[3] = lds32(p + 8 * lda + 8);
}

// B fragments of W [N][K] as encoder_pack_weight() lays them out: for k step ks and n-tile pair
// np, lane l holds 4 words (b0, b1 of n-tile 2·np, then of 2·np + 1) at ((ks·N/16 + np)·32 + l)·4:
// one coalesced 16-byte load per lane feeds two mma.
__device__ __forceinline__ uint4 ldg_frag(const __half* __restrict__ W, int N, int ks, int np, int lane) {
  return __ldg(reinterpret_cast<const uint4*>(W) + (ks * (N / 16) + np) * 32 + lane);
}

// acc[j] (rows r0.., columns n0 + 8j..) = A[r0:r0+16, 0:K] · W[n0:n0+32, 0:K]ᵀ; KC: K when known at
// compile time (the k loop unrolls and every weight load is issued up front), else 0.
template <int KC>
__device__ __forceinline__ void gemm_item(float acc[4][4], const __half* A, int lda, const __half* __restrict__ W, int K,
                                          int N, int r0, int n0, int g, int c, int lane) {
#pragma unroll
  for (int j = 0; j < 4; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  if constexpr (KC > 0) {
    uint4 b[KC / 16][2];
#pragma unroll
    for (int ks = 0; ks < KC / 16; ++ks) {
      b[ks][0] = ldg_frag(W, N, ks, n0 / 16, lane);
      b[ks][1] = ldg_frag(W, N, ks, n0 / 16 + 1, lane);
    }
#pragma unroll
    for (int ks = 0; ks < KC / 16; ++ks) {
      uint32_t a[4];
      load_a(a, A, lda, r0, ks * 16, g, c);
      mma16816(acc[0], a, b[ks][0].x, b[ks][0].y);
      mma16816(acc[1], a, b[ks][0].z, b[ks][0].w);
      mma16816(acc[2], a, b[ks][1].x, b[ks][1].y);
      mma16816(acc[3], a, b[ks][1].z, b[ks][1].w);
    }
  } else {
    for (int ks = 0; ks < K / 16; ++ks) {
      const uint4 b0 = ldg_frag(W, N, ks, n0 / 16, lane), b1 = ldg_frag(W, N, ks, n0 / 16 + 1, lane);
      uint32_t a[4];
      load_a(a, A, lda, r0, ks * 16, g, c);
      mma16816(acc[0], a, b0.x, b0.y);
      mma16816(acc[1], a, b0.z, b0.w);
      mma16816(acc[2], a, b1.x, b1.y);
      mma16816(acc[3], a, b1.z, b1.w);
    }
  }
}

// Runs f(r, n, v0, v1) for each element pair (row r, columns n, n+1) of the product
// A[rows of tiles rt0 .. rt0+nrt-1 (16 each) × K] · W[N × K]ᵀ, the items dealt to the W warps in turn.
template <int KC = 0, typename F>
__device__ __forceinline__ void gemm_rows(int W, const __half* A, int lda, const __half* __restrict__ Wt, int K, int N, int rt0,
                                          int nrt, F f) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
  const int ncols = N / 32;
  for (int item = warp; item < nrt * ncols; item += W) {
    const int r0 = (rt0 + item / ncols) * 16, n0 = (item % ncols) * 32;
    float acc[4][4];
    gemm_item<KC>(acc, A, lda, Wt, K, N, r0, n0, g, c, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int n = n0 + 8 * j + 2 * c;
      f(r0 + g, n, acc[j][0], acc[j][1]);
      f(r0 + g + 8, n, acc[j][2], acc[j][3]);
    }
  }
}

// LayerNorm of xf's rows r_begin..r_end-1 of D (a warp per row, D/32 adjacent columns per lane):
// xf and xh get the result (xh alone with half_only: a pre-norm layer keeps its residual stream);
// with y set (the layer's output) only y's row r is written instead; with head_w set (one row: the
// last) the head's outputs act(y·W_headᵀ + b) go to head_out instead. s null: no normalization (a
// pre-norm layer's output is its residual stream as it is).
template <int D>
__device__ __forceinline__ void layer_norm_rows(int W, float* xf, __half* xh, const float* __restrict__ s,
                                                const float* __restrict__ b, float eps, float* y, int r_begin, int r_end,
                                                const float* __restrict__ head_w = nullptr,
                                                const float* __restrict__ head_b = nullptr, int head_n = 0,
                                                bool head_sigmoid = false, float* head_out = nullptr, bool half_only = false) {
  constexpr int kPer = D / 32, kLd = D + 8;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, c0 = lane * kPer;
  const bool norm = s != nullptr;
  float sc[kPer], bi[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    sc[i] = norm ? __ldg(s + c0 + i) : 1.f;
    bi[i] = norm ? __ldg(b + c0 + i) : 0.f;
  }
  for (int r = r_begin + warp; r < r_end; r += W) {
    float v[kPer];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kPer; ++i) sum += (v[i] = xf[r * kLd + c0 + i]);
    if (norm) {
#pragma unroll
      for (int o = 16; o; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      const float mean = sum * (1.f / D);
      float sq = 0.f;
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        v[i] -= mean;
        sq += v[i] * v[i];
      }
#pragma unroll
      for (int o = 16; o; o >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);
      const float inv = rsqrtf(sq * (1.f / D) + eps);
#pragma unroll
      for (int i = 0; i < kPer; ++i) v[i] = v[i] * inv * sc[i] + bi[i];
    }
    if (head_w) {
      for (int n = 0; n < head_n; ++n) {
        float acc = 0.f;
#pragma unroll
        for (int i = 0; i < kPer; ++i) acc += v[i] * __ldg(head_w + n * D + c0 + i);
#pragma unroll
        for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) {
          acc += head_b ? __ldg(head_b + n) : 0.f;
          head_out[n] = head_sigmoid ? 1.f / (1.f + __expf(-acc)) : acc;
        }
      }
    } else if (y) {
#pragma unroll
      for (int i = 0; i < kPer; ++i) y[size_t(r) * D + c0 + i] = v[i];
    } else {
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        if (!half_only) xf[r * kLd + c0 + i] = v[i];
        xh[r * kLd + c0 + i] = __float2half_rn(v[i]);
      }
    }
  }
}

// W = blockDim.x / 32 warps (a run-time value, so the variants are one kernel; up to
// encoder_max_warps(D, TP)). The register cap is 64 (TP ≤ 64: 4 CTAs of 8 warps per SM, or one
// of 32) but at D 32, where 64 spilled 250 bytes, and TP 128 (128 registers, 16 warps at most).
template <int D, int TP>
__global__ void __launch_bounds__(TP <= 64 && D > 32 ? 1024 : 512, 1) encoder_layer_kernel(EncoderParams p) {
  const int W = int(blockDim.x >> 5), kThreads = int(blockDim.x);
  constexpr int kLdX = D + 8;  // row stride (elements) of xf, xh, q, k
  constexpr int kLdV = TP + 8;
  extern __shared__ __align__(16) unsigned char smem[];
  float* xf = reinterpret_cast<float*>(smem);
  __half* xh = reinterpret_cast<__half*>(xf + TP * kLdX);
  __half* q = xh + TP * kLdX;
  __half* k = q + TP * kLdX;
  __half* vt = k + TP * kLdX;
  __half* hb = q;  // FF hidden / input staging, over q, k, vᵀ

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, c = lane & 3;
  const int T = p.t_len, ff = p.ff, hd = p.head_dim, heads = D / p.head_dim;
  const size_t seq = blockIdx.x;
  const bool causal = p.causal;
  // With the head folded in only the last row's output is needed: after in_proj (k, v of every
  // row) the rest runs on the 16-row tile holding row T-1.
  const bool head = p.head_w != nullptr;
  const int rt0 = head ? (T - 1) / 16 : 0, nrt = head ? 1 : TP / 16;

  // 0. The input: x (or x·Wpreᵀ + bpre) into xf and xh; padded rows zero.
  if (p.w_pre) {
    const int K = p.pre_k, KP = (K + 15) / 16 * 16, ldh = KP + 8;
    const float* x = p.x + seq * size_t(T) * K;
    if (K % 2 == 0) {  // pairs: col < K implies col + 1 < K, and x + r·K + col is 8-byte aligned
#pragma unroll 4
      for (int i = tid; i < TP * KP / 2; i += kThreads) {
        const int r = (2 * i) / KP, col = (2 * i) % KP;
        const float2 v = r < T && col < K ? __ldg(reinterpret_cast<const float2*>(x + r * K + col)) : make_float2(0.f, 0.f);
        sts32(hb + r * ldh + col, v.x, v.y);
      }
    } else {
#pragma unroll 4
      for (int i = tid; i < TP * KP; i += kThreads) {
        const int r = i / KP, col = i % KP;
        hb[r * ldh + col] = __float2half_rn(r < T && col < K ? __ldg(x + r * K + col) : 0.f);
      }
    }
    __syncthreads();
    const auto pre_out = [&](int r, int n, float v0, float v1) {
      const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_pre + n));
      v0 = r < T ? v0 + b.x : 0.f;
      v1 = r < T ? v1 + b.y : 0.f;
      *reinterpret_cast<float2*>(xf + r * kLdX + n) = make_float2(v0, v1);
      sts32(xh + r * kLdX + n, v0, v1);
    };
    if (KP == 32) gemm_rows<32>(W, hb, ldh, p.w_pre, KP, D, 0, TP / 16, pre_out);
    else gemm_rows(W, hb, ldh, p.w_pre, KP, D, 0, TP / 16, pre_out);
  } else {
    const float* x = p.x + seq * size_t(T) * D;
    for (int i = tid; i < TP * D / 2; i += kThreads) {
      const int r = (2 * i) / D, col = (2 * i) % D;
      float2 v = r < T ? __ldg(reinterpret_cast<const float2*>(x + r * D + col)) : make_float2(0.f, 0.f);
      *reinterpret_cast<float2*>(xf + r * kLdX + col) = v;
      sts32(xh + r * kLdX + col, v.x, v.y);
    }
  }
  __syncthreads();
  if (p.norm_first) {  // LN₁(x) → xh, every row (in_proj makes every row's k and v); xf keeps x
    layer_norm_rows<D>(W, xf, xh, p.ln1_s, p.ln1_b, p.eps1, nullptr, 0, TP, nullptr, nullptr, 0, false, nullptr, true);
    __syncthreads();
  }

  // 1. in_proj: q, k row-major, v transposed.
  gemm_rows<D>(W, xh, kLdX, p.w_in, D, 3 * D, 0, TP / 16, [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_in + n));
    v0 += b.x;
    v1 += b.y;
    if (n < D) {
      sts32(q + r * kLdX + n, v0, v1);
    } else if (n < 2 * D) {
      sts32(k + r * kLdX + n - D, v0, v1);
    } else {
      vt[(n - 2 * D) * kLdV + r] = __float2half_rn(v0);
      vt[(n - 2 * D + 1) * kLdV + r] = __float2half_rn(v1);
    }
  });
  __syncthreads();

  // 2. Attention: an item is one head × 16 query rows; s and p stay in registers (the C
  // fragments of q·kᵀ are, pairwise, the A fragments of p·v).
  for (int item = warp; item < heads * nrt; item += W) {
    const int h = item / nrt, r0 = (rt0 + item % nrt) * 16, col0 = h * hd;
    float s[TP / 8][4];
#pragma unroll
    for (int j = 0; j < TP / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
    for (int ks = 0; ks + 16 <= hd; ks += 16) {
      uint32_t aq[4];
      load_a(aq, q, kLdX, r0, col0 + ks, g, c);
#pragma unroll
      for (int j = 0; j < TP / 8; ++j) {
        const __half* kp = k + (8 * j + g) * kLdX + col0 + ks + 2 * c;
        mma16816(s[j], aq, lds32(kp), lds32(kp + 8));
      }
    }
    if (hd % 16) {  // the last 8 columns of a head dim that is an odd multiple of 8
      const int kc = col0 + hd - 8 + 2 * c;
      const uint32_t a0 = lds32(q + (r0 + g) * kLdX + kc), a1 = lds32(q + (r0 + g + 8) * kLdX + kc);
#pragma unroll
      for (int j = 0; j < TP / 8; ++j) mma1688(s[j], a0, a1, lds32(k + (8 * j + g) * kLdX + kc));
    }
    float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < TP / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = 8 * j + 2 * c + (e & 1), row = r0 + g + (e >> 1) * 8;
        s[j][e] = key < T && (!causal || key <= row) ? s[j][e] * p.scale : -INFINITY;
      }
      m0 = fmaxf(m0, fmaxf(s[j][0], s[j][1]));
      m1 = fmaxf(m1, fmaxf(s[j][2], s[j][3]));
    }
#pragma unroll
    for (int o = 1; o <= 2; o <<= 1) {
      m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, o));
      m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, o));
    }
    float l0 = 0.f, l1 = 0.f;
    uint32_t ap[TP / 16][4];
#pragma unroll
    for (int j = 0; j < TP / 8; ++j) {
      const float e0 = __expf(s[j][0] - m0), e1 = __expf(s[j][1] - m0);
      const float e2 = __expf(s[j][2] - m1), e3 = __expf(s[j][3] - m1);
      l0 += e0 + e1;
      l1 += e2 + e3;
      ap[j / 2][(j & 1) * 2] = pack2(e0, e1);
      ap[j / 2][(j & 1) * 2 + 1] = pack2(e2, e3);
    }
#pragma unroll
    for (int o = 1; o <= 2; o <<= 1) {
      l0 += __shfl_xor_sync(0xffffffffu, l0, o);
      l1 += __shfl_xor_sync(0xffffffffu, l1, o);
    }
    const float i0 = 1.f / l0, i1 = 1.f / l1;
    // Two 8-column n-tiles at a time (two independent mma chains), one for an odd count.
    for (int jn = 0; jn < hd / 8; jn += 2) {
      const int nt = jn + 1 < hd / 8 ? 2 : 1;
      float o_acc[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
      for (int kk = 0; kk < TP / 16; ++kk) {
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          if (u < nt) {
            const __half* vp = vt + (col0 + 8 * (jn + u) + g) * kLdV + 16 * kk + 2 * c;
            mma16816(o_acc[u], ap[kk], lds32(vp), lds32(vp + 8));
          }
        }
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        if (u < nt) {
          const int n = col0 + 8 * (jn + u) + 2 * c;
          sts32(xh + (r0 + g) * kLdX + n, o_acc[u][0] * i0, o_acc[u][1] * i0);
          sts32(xh + (r0 + g + 8) * kLdX + n, o_acc[u][2] * i1, o_acc[u][3] * i1);
        }
      }
    }
  }
  __syncthreads();

  // 3. out_proj + residual into xf, then LayerNorm₁ → xf, xh (pre-norm: LayerNorm₂ → xh).
  gemm_rows<D>(W, xh, kLdX, p.w_out, D, D, rt0, nrt, [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_out + n));
    float2* x = reinterpret_cast<float2*>(xf + r * kLdX + n);
    const float2 old = *x;
    *x = make_float2(old.x + v0 + b.x, old.y + v1 + b.y);
  });
  __syncthreads();
  if (p.norm_first) {
    layer_norm_rows<D>(W, xf, xh, p.ln2_s, p.ln2_b, p.eps2, nullptr, head ? T - 1 : 0, head ? T : TP, nullptr, nullptr, 0,
                       false, nullptr, true);
  } else {
    layer_norm_rows<D>(W, xf, xh, p.ln1_s, p.ln1_b, p.eps1, nullptr, head ? T - 1 : 0, head ? T : TP);
  }
  __syncthreads();

  // 4. FF1 + activation → hb.
  const int ldh = ff + 8;
  const bool gelu = p.gelu;
  gemm_rows<D>(W, xh, kLdX, p.w_ff1, D, ff, rt0, nrt, [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_ff1 + n));
    v0 += b.x;
    v1 += b.y;
    if (gelu) {
      v0 = 0.5f * v0 * (1.f + erff(v0 * 0.70710678118654752f));
      v1 = 0.5f * v1 * (1.f + erff(v1 * 0.70710678118654752f));
    } else {
      v0 = fmaxf(v0, 0.f);
      v1 = fmaxf(v1, 0.f);
    }
    sts32(hb + r * ldh + n, v0, v1);
  });
  __syncthreads();

  // 5. FF2 + residual into xf, then LayerNorm₂ → y (rows < T); pre-norm: xf → y as it is.
  const auto ff2_out = [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_ff2 + n));
    float2* x = reinterpret_cast<float2*>(xf + r * kLdX + n);
    const float2 old = *x;
    *x = make_float2(old.x + v0 + b.x, old.y + v1 + b.y);
  };
  if (ff == 128) gemm_rows<128>(W, hb, ldh, p.w_ff2, ff, D, rt0, nrt, ff2_out);
  else if (ff == 64) gemm_rows<64>(W, hb, ldh, p.w_ff2, ff, D, rt0, nrt, ff2_out);
  else gemm_rows(W, hb, ldh, p.w_ff2, ff, D, rt0, nrt, ff2_out);
  __syncthreads();
  const float* s2 = p.norm_first ? nullptr : p.ln2_s;
  if (head) {
    layer_norm_rows<D>(W, xf, xh, s2, p.ln2_b, p.eps2, nullptr, T - 1, T, p.head_w, p.head_b, p.head_n, p.head_sigmoid,
                       p.head_out + seq * size_t(p.head_n));
  } else {
    layer_norm_rows<D>(W, xf, xh, s2, p.ln2_b, p.eps2, p.y + seq * size_t(T) * D, 0, T);
  }
}

int pad16(int k) { return (k + 15) / 16 * 16; }

int seq_tile(int t_len) { return t_len <= 32 ? 32 : t_len <= 64 ? 64 : 128; }

template <int D, int TP>
Status launch_variant(int W, const EncoderParams& p, cudaStream_t stream) {
  const size_t bytes = encoder_smem_bytes(p.d_model, TP, p.ff, p.w_pre ? p.pre_k : 0);
  // The largest shared memory carve-out: with the L1 share left over, 4 CTAs of TP = 64 fit an SM.
  static const cudaError_t attr = [] {
    cudaError_t e = cudaFuncSetAttribute(encoder_layer_kernel<D, TP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(kEncoderMaxSmemBytes));
    if (e == cudaSuccess) {
      e = cudaFuncSetAttribute(encoder_layer_kernel<D, TP>, cudaFuncAttributePreferredSharedMemoryCarveout,
                               int(cudaSharedmemCarveoutMaxShared));
    }
    return e;
  }();
  TS_CUDA(attr);
  encoder_layer_kernel<D, TP><<<unsigned(p.batch), unsigned(W * 32), bytes, stream>>>(p);
  TS_CUDA_LAUNCHED("encoder_layer_kernel");
  return Status::ok();
}

template <int D>
Status launch_d(int W, const EncoderParams& p, cudaStream_t stream) {
  switch (seq_tile(p.t_len)) {
    case 32: return launch_variant<D, 32>(W, p, stream);
    case 64: return launch_variant<D, 64>(W, p, stream);
    default: return launch_variant<D, 128>(W, p, stream);
  }
}

}  // namespace

size_t encoder_smem_bytes(int d, int tp, int ff, int pre_k) {
  const size_t ld = size_t(d) + 8;
  const size_t xf = size_t(tp) * ld * 4, xh = size_t(tp) * ld * 2;
  const size_t attn = 2 * size_t(tp) * ld * 2 + size_t(d) * (tp + 8) * 2;
  const size_t hidden = size_t(tp) * (ff + 8) * 2, stage = pre_k ? size_t(tp) * (pad16(pre_k) + 8) * 2 : 0;
  return xf + xh + std::max(attn, std::max(hidden, stage));
}

int encoder_max_warps(int d, int t_len) { return seq_tile(t_len) <= 64 && d > 32 ? 32 : 16; }

int encoder_warps(int batch, int d, int t_len, int warps) {
  const int most = encoder_max_warps(d, t_len);
  if (warps >= 8 && warps <= most && warps % 8 == 0) return warps;
  const int sms = device_sm_count();  // the wide variant's threshold
  if (sms <= 0 || batch > sms) return 8;
  return most == 32 ? 24 : 16;  // 24 warps: in_proj's 24 items (D 64) in one round
}

std::vector<__half> encoder_pack_weight(const float* w_nk, int n, int k, int k_pad) {
  const int kp = std::max(k, k_pad);
  std::vector<__half> out(size_t(n) * size_t(kp));
  for (int ks = 0; ks < kp / 16; ++ks)
    for (int np = 0; np < n / 16; ++np)
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < 4; ++w) {
          const int g = lane >> 2, c = lane & 3;
          const int row = 8 * (2 * np + (w >> 1)) + g, col = ks * 16 + 2 * c + ((w & 1) ? 8 : 0);
          const size_t at = ((size_t(ks * (n / 16) + np) * 32 + size_t(lane)) * 4 + size_t(w)) * 2;
          const auto w_at = [&](int cc) { return cc < k ? w_nk[size_t(row) * size_t(k) + size_t(cc)] : 0.f; };
          out[at] = __float2half_rn(w_at(col));
          out[at + 1] = __float2half_rn(w_at(col + 1));
        }
  return out;
}

Status encoder_check(int64_t d, int64_t heads, int64_t t_len, int64_t ff, int64_t pre_k) {
  auto bad = [](const std::string& m) { return Status(StatusCode::kInvalidArgument, "fused encoder layer: " + m); };
  if (d != 32 && d != 64 && d != 128) return bad("d_model " + std::to_string(d) + " is not 32, 64 or 128");
  if (heads < 1 || d % heads || (d / heads) % 8) {
    return bad(std::to_string(heads) + " heads of d_model " + std::to_string(d) +
               ": the head dim must be a whole multiple of 8");
  }
  if (t_len < 1 || t_len > kEncoderMaxSeq) {
    return bad("sequence length " + std::to_string(t_len) + " is outside 1.." + std::to_string(kEncoderMaxSeq));
  }
  if (ff < 32 || ff > kEncoderMaxFF || ff % 32) {
    return bad("feed-forward size " + std::to_string(ff) + " is not a multiple of 32 in 32.." + std::to_string(kEncoderMaxFF));
  }
  if (pre_k < 0 || pre_k > kEncoderMaxPreK) {
    return bad("input projection K " + std::to_string(pre_k) + " is outside 1.." + std::to_string(kEncoderMaxPreK));
  }
  const size_t smem = encoder_smem_bytes(int(d), seq_tile(int(t_len)), int(ff), int(pre_k));
  if (smem > kEncoderMaxSmemBytes) {
    return bad("d_model " + std::to_string(d) + ", FF " + std::to_string(ff) + " at sequence length " + std::to_string(t_len) +
               " needs " + std::to_string(smem) + " bytes of shared memory (at most " + std::to_string(kEncoderMaxSmemBytes) + ")");
  }
  return Status::ok();
}

Status launch_encoder_layer(const EncoderParams& p, cudaStream_t stream) {
  TS_RETURN_IF_ERROR(encoder_check(p.d_model, p.head_dim > 0 ? p.d_model / p.head_dim : 0, p.t_len, p.ff,
                                   p.w_pre ? p.pre_k : 0));
  if (p.head_dim <= 0 || p.d_model % p.head_dim) {
    return Status(StatusCode::kInvalidArgument, "fused encoder layer: head dim " + std::to_string(p.head_dim) +
                                                    " does not divide d_model " + std::to_string(p.d_model));
  }
  if (p.w_pre && p.pre_k < 1) return Status(StatusCode::kInvalidArgument, "fused encoder layer: input projection K 0");
  if (p.batch < 0) return Status(StatusCode::kInvalidArgument, "fused encoder layer: negative batch");
  if (p.batch == 0) return Status::ok();
  if (p.warps && (p.warps % 8 || p.warps < 8 || p.warps > encoder_max_warps(p.d_model, p.t_len))) {
    return Status(StatusCode::kInvalidArgument, "fused encoder layer: " + std::to_string(p.warps) + " warps per CTA (8.." +
                                                    std::to_string(encoder_max_warps(p.d_model, p.t_len)) + ", a multiple of 8)");
  }
  const int w = encoder_warps(p.batch, p.d_model, p.t_len, p.warps);
  switch (p.d_model) {
    case 32: return launch_d<32>(w, p, stream);
    case 64: return launch_d<64>(w, p, stream);
    default: return launch_d<128>(w, p, stream);
  }
}

}  // namespace ts::engine::cuda
