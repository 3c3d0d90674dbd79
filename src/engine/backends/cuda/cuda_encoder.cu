// The fused Transformer encoder layer (cuda_encoder.h): one CTA of 8 warps per sequence.
//
// Shared memory, TP = T rounded up to 32, 64 or 128 (rows T..TP-1 are zero on entry and stay
// finite; keys there are masked out of the softmax and no output row is written for them):
//   xf   fp32 [TP][72]  the residual stream (x, then x1, then x1 + ffn)
//   xh   fp16 [TP][72]  the A operand: x (in_proj), the heads' outputs (out_proj), LN₁(…) (FF1)
//   q, k fp16 [TP][72]  and vᵀ fp16 [64][TP+8] (the B operand of p·v wants keys contiguous)
//   hb   fp16 [TP][FF+8] the FF hidden layer, over q/k/vᵀ (dead by then); also the staging of
//        the raw input for the folded input projection.
// Rows are padded by 8 halves (16 bytes): a quad's 32-bit fragment loads of 8 rows then fall
// in 32 different banks.
//
// Every matrix product is a list of items (16 rows × 32 columns, 4 mma n-tiles) dealt round
// robin to the warps; B fragments (weights, [N][K] fp16) are read from global memory through
// the read-only cache, packed in fragment order (encoder_pack_weight): one coalesced 16-byte load
// per lane per k step and n-tile pair; 56 KB of weights per layer, shared by all CTAs of an SM.
//
// PERF NOTE: one CTA per sequence keeps every intermediate on chip; at batch 1 the layer is
// one CTA's latency (no inter-CTA sync), at large batch 4 CTAs (TP = 64) share an SM.
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

#include "engine/backends/cuda/cuda_encoder.h"

namespace ts::engine::cuda {
namespace {

constexpr int kD = kEncoderDModel;
constexpr int kDH = kEncoderHeadDim;
constexpr int kHeads = kD / kDH;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kLdX = kD + 8;  // row stride (elements) of xf, xh, q, k

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
// A[rows of tiles rt0 .. rt0+nrt-1 (16 each) × K] · W[N × K]ᵀ, the items dealt to the warps in turn.
template <int KC = 0, typename F>
__device__ __forceinline__ void gemm_rows(const __half* A, int lda, const __half* __restrict__ W, int K, int N, int rt0,
                                          int nrt, F f) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
  const int ncols = N / 32;
  for (int item = warp; item < nrt * ncols; item += kWarps) {
    const int r0 = (rt0 + item / ncols) * 16, n0 = (item % ncols) * 32;
    float acc[4][4];
    gemm_item<KC>(acc, A, lda, W, K, N, r0, n0, g, c, lane);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int n = n0 + 8 * j + 2 * c;
      f(r0 + g, n, acc[j][0], acc[j][1]);
      f(r0 + g + 8, n, acc[j][2], acc[j][3]);
    }
  }
}

// LayerNorm of xf's rows r_begin..r_end-1 of 64 (a warp per row, 2 columns per lane): xf and xh
// get the result; with y set (the layer's output) only y's row r is written instead; with head_w
// set (one row: the last) the head's outputs act(y·W_headᵀ + b) go to head_out instead.
__device__ __forceinline__ void layer_norm_rows(float* xf, __half* xh, const float* __restrict__ s,
                                                const float* __restrict__ b, float eps, float* y, int r_begin, int r_end,
                                                const float* __restrict__ head_w = nullptr,
                                                const float* __restrict__ head_b = nullptr, int head_n = 0,
                                                bool head_sigmoid = false, float* head_out = nullptr) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float2 sc = __ldg(reinterpret_cast<const float2*>(s) + lane);
  const float2 bi = __ldg(reinterpret_cast<const float2*>(b) + lane);
  for (int r = r_begin + warp; r < r_end; r += kWarps) {
    float2 v = *reinterpret_cast<const float2*>(xf + r * kLdX + 2 * lane);
    float sum = v.x + v.y;
#pragma unroll
    for (int o = 16; o; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float mean = sum * (1.f / kD);
    const float d0 = v.x - mean, d1 = v.y - mean;
    float sq = d0 * d0 + d1 * d1;
#pragma unroll
    for (int o = 16; o; o >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);
    const float inv = rsqrtf(sq * (1.f / kD) + eps);
    const float o0 = d0 * inv * sc.x + bi.x, o1 = d1 * inv * sc.y + bi.y;
    if (head_w) {
      for (int n = 0; n < head_n; ++n) {
        const float2 w = __ldg(reinterpret_cast<const float2*>(head_w + n * kD) + lane);
        float acc = o0 * w.x + o1 * w.y;
#pragma unroll
        for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) {
          acc += head_b ? __ldg(head_b + n) : 0.f;
          head_out[n] = head_sigmoid ? 1.f / (1.f + __expf(-acc)) : acc;
        }
      }
    } else if (y) {
      *reinterpret_cast<float2*>(y + size_t(r) * kD + 2 * lane) = make_float2(o0, o1);
    } else {
      *reinterpret_cast<float2*>(xf + r * kLdX + 2 * lane) = make_float2(o0, o1);
      sts32(xh + r * kLdX + 2 * lane, o0, o1);
    }
  }
}

template <int TP>
__global__ void __launch_bounds__(kThreads, TP <= 64 ? 4 : 2) encoder_layer_kernel(EncoderParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kLdV = TP + 8;
  float* xf = reinterpret_cast<float*>(smem);
  __half* xh = reinterpret_cast<__half*>(xf + TP * kLdX);
  __half* q = xh + TP * kLdX;
  __half* k = q + TP * kLdX;
  __half* vt = k + TP * kLdX;
  __half* hb = q;  // FF hidden / input staging, over q, k, vᵀ

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, c = lane & 3;
  const int T = p.t_len, ff = p.ff;
  const size_t seq = blockIdx.x;
  // With the head folded in only the last row's output is needed: after in_proj (k, v of every
  // row) the rest runs on the 16-row tile holding row T-1.
  const bool head = p.head_w != nullptr;
  const int rt0 = head ? (T - 1) / 16 : 0, nrt = head ? 1 : TP / 16;

  // 0. The input: x (or x·Wpreᵀ + bpre) into xf and xh; padded rows zero.
  if (p.w_pre) {
    const int K = p.pre_k, ldh = K + 8;
    const float* x = p.x + seq * size_t(T) * K;
    for (int i = tid; i < TP * K / 2; i += kThreads) {
      const int r = (2 * i) / K, col = (2 * i) % K;
      float2 v = r < T ? __ldg(reinterpret_cast<const float2*>(x + r * K + col)) : make_float2(0.f, 0.f);
      sts32(hb + r * ldh + col, v.x, v.y);
    }
    __syncthreads();
    const auto pre_out = [&](int r, int n, float v0, float v1) {
      const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_pre + n));
      v0 = r < T ? v0 + b.x : 0.f;
      v1 = r < T ? v1 + b.y : 0.f;
      *reinterpret_cast<float2*>(xf + r * kLdX + n) = make_float2(v0, v1);
      sts32(xh + r * kLdX + n, v0, v1);
    };
    if (K == 32) gemm_rows<32>(hb, ldh, p.w_pre, K, kD, 0, TP / 16, pre_out);
    else gemm_rows(hb, ldh, p.w_pre, K, kD, 0, TP / 16, pre_out);
  } else {
    const float* x = p.x + seq * size_t(T) * kD;
    for (int i = tid; i < TP * kD / 2; i += kThreads) {
      const int r = (2 * i) / kD, col = (2 * i) % kD;
      float2 v = r < T ? __ldg(reinterpret_cast<const float2*>(x + r * kD + col)) : make_float2(0.f, 0.f);
      *reinterpret_cast<float2*>(xf + r * kLdX + col) = v;
      sts32(xh + r * kLdX + col, v.x, v.y);
    }
  }
  __syncthreads();

  // 1. in_proj: q, k row-major, v transposed.
  gemm_rows<kD>(xh, kLdX, p.w_in, kD, 3 * kD, 0, TP / 16, [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_in + n));
    v0 += b.x;
    v1 += b.y;
    if (n < kD) {
      sts32(q + r * kLdX + n, v0, v1);
    } else if (n < 2 * kD) {
      sts32(k + r * kLdX + n - kD, v0, v1);
    } else {
      vt[(n - 2 * kD) * kLdV + r] = __float2half_rn(v0);
      vt[(n - 2 * kD + 1) * kLdV + r] = __float2half_rn(v1);
    }
  });
  __syncthreads();

  // 2. Attention: an item is one head × 16 query rows; s, p and o stay in registers (the
  // C fragments of s·… are, pairwise, the A fragments of p·v).
  for (int item = warp; item < kHeads * nrt; item += kWarps) {
    const int h = item / nrt, r0 = (rt0 + item % nrt) * 16;
    uint32_t aq[4];
    load_a(aq, q, kLdX, r0, h * kDH, g, c);
    float s[TP / 8][4];
#pragma unroll
    for (int j = 0; j < TP / 8; ++j) {
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
      const __half* kp = k + (8 * j + g) * kLdX + h * kDH + 2 * c;
      mma16816(s[j], aq, lds32(kp), lds32(kp + 8));
    }
    float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
    for (int j = 0; j < TP / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = 8 * j + 2 * c + (e & 1);
        s[j][e] = key < T ? s[j][e] * p.scale : -INFINITY;
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
#pragma unroll
    for (int j = 0; j < TP / 8; ++j) {
      s[j][0] = __expf(s[j][0] - m0);
      s[j][1] = __expf(s[j][1] - m0);
      s[j][2] = __expf(s[j][2] - m1);
      s[j][3] = __expf(s[j][3] - m1);
      l0 += s[j][0] + s[j][1];
      l1 += s[j][2] + s[j][3];
    }
#pragma unroll
    for (int o = 1; o <= 2; o <<= 1) {
      l0 += __shfl_xor_sync(0xffffffffu, l0, o);
      l1 += __shfl_xor_sync(0xffffffffu, l1, o);
    }
    float o_acc[kDH / 8][4];
#pragma unroll
    for (int jn = 0; jn < kDH / 8; ++jn) o_acc[jn][0] = o_acc[jn][1] = o_acc[jn][2] = o_acc[jn][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < TP / 16; ++kk) {
      const uint32_t ap[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
                              pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int jn = 0; jn < kDH / 8; ++jn) {
        const __half* vp = vt + (h * kDH + 8 * jn + g) * kLdV + 16 * kk + 2 * c;
        mma16816(o_acc[jn], ap, lds32(vp), lds32(vp + 8));
      }
    }
    const float i0 = 1.f / l0, i1 = 1.f / l1;
#pragma unroll
    for (int jn = 0; jn < kDH / 8; ++jn) {
      const int n = h * kDH + 8 * jn + 2 * c;
      sts32(xh + (r0 + g) * kLdX + n, o_acc[jn][0] * i0, o_acc[jn][1] * i0);
      sts32(xh + (r0 + g + 8) * kLdX + n, o_acc[jn][2] * i1, o_acc[jn][3] * i1);
    }
  }
  __syncthreads();

  // 3. out_proj + residual into xf, then LayerNorm₁ → xf, xh.
  gemm_rows<kD>(xh, kLdX, p.w_out, kD, kD, rt0, nrt, [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_out + n));
    float2* x = reinterpret_cast<float2*>(xf + r * kLdX + n);
    const float2 old = *x;
    *x = make_float2(old.x + v0 + b.x, old.y + v1 + b.y);
  });
  __syncthreads();
  layer_norm_rows(xf, xh, p.ln1_s, p.ln1_b, p.eps1, nullptr, head ? T - 1 : 0, head ? T : TP);
  __syncthreads();

  // 4. FF1 + activation → hb.
  const int ldh = ff + 8;
  const bool gelu = p.gelu;
  gemm_rows<kD>(xh, kLdX, p.w_ff1, kD, ff, rt0, nrt, [&](int r, int n, float v0, float v1) {
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

  // 5. FF2 + residual into xf, then LayerNorm₂ → y (rows < T).
  const auto ff2_out = [&](int r, int n, float v0, float v1) {
    const float2 b = __ldg(reinterpret_cast<const float2*>(p.b_ff2 + n));
    float2* x = reinterpret_cast<float2*>(xf + r * kLdX + n);
    const float2 old = *x;
    *x = make_float2(old.x + v0 + b.x, old.y + v1 + b.y);
  };
  if (ff == 128) gemm_rows<128>(hb, ldh, p.w_ff2, ff, kD, rt0, nrt, ff2_out);
  else gemm_rows(hb, ldh, p.w_ff2, ff, kD, rt0, nrt, ff2_out);
  __syncthreads();
  if (head) {
    layer_norm_rows(xf, xh, p.ln2_s, p.ln2_b, p.eps2, nullptr, T - 1, T, p.head_w, p.head_b, p.head_n, p.head_sigmoid,
                    p.head_out + seq * size_t(p.head_n));
  } else {
    layer_norm_rows(xf, xh, p.ln2_s, p.ln2_b, p.eps2, p.y + seq * size_t(T) * kD, 0, T);
  }
}

// Bytes of shared memory for TP rows.
size_t encoder_smem_bytes(int tp, int ff, int pre_k) {
  const size_t xf = size_t(tp) * kLdX * 4, xh = size_t(tp) * kLdX * 2;
  const size_t attn = 2 * size_t(tp) * kLdX * 2 + size_t(kD) * (tp + 8) * 2;
  const size_t hidden = size_t(tp) * (ff + 8) * 2, stage = size_t(tp) * (pre_k + 8) * 2;
  return xf + xh + std::max(attn, std::max(hidden, stage));
}

template <int TP>
Status launch_tp(const EncoderParams& p, cudaStream_t stream) {
  const size_t bytes = encoder_smem_bytes(TP, p.ff, p.w_pre ? p.pre_k : 0);
  // The largest shared memory carve-out: with the L1 share left over, 4 CTAs of TP = 64 fit an SM.
  static const cudaError_t attr = [] {
    cudaError_t e = cudaFuncSetAttribute(encoder_layer_kernel<TP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(encoder_smem_bytes(TP, kEncoderMaxFF, kEncoderMaxPreK)));
    if (e == cudaSuccess) {
      e = cudaFuncSetAttribute(encoder_layer_kernel<TP>, cudaFuncAttributePreferredSharedMemoryCarveout,
                               int(cudaSharedmemCarveoutMaxShared));
    }
    return e;
  }();
  TS_CUDA(attr);
  encoder_layer_kernel<TP><<<unsigned(p.batch), kThreads, bytes, stream>>>(p);
  TS_CUDA_LAUNCHED("encoder_layer_kernel");
  return Status::ok();
}

}  // namespace

std::vector<__half> encoder_pack_weight(const float* w_nk, int n, int k) {
  std::vector<__half> out(size_t(n) * size_t(k));
  for (int ks = 0; ks < k / 16; ++ks)
    for (int np = 0; np < n / 16; ++np)
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < 4; ++w) {
          const int g = lane >> 2, c = lane & 3;
          const int row = 8 * (2 * np + (w >> 1)) + g, col = ks * 16 + 2 * c + ((w & 1) ? 8 : 0);
          const size_t at = ((size_t(ks * (n / 16) + np) * 32 + size_t(lane)) * 4 + size_t(w)) * 2;
          out[at] = __float2half_rn(w_nk[size_t(row) * size_t(k) + size_t(col)]);
          out[at + 1] = __float2half_rn(w_nk[size_t(row) * size_t(k) + size_t(col) + 1]);
        }
  return out;
}

Status encoder_check(int64_t t_len, int64_t ff, int64_t pre_k) {
  auto bad = [](const std::string& m) { return Status(StatusCode::kInvalidArgument, "fused encoder layer: " + m); };
  if (t_len < 1 || t_len > kEncoderMaxSeq) {
    return bad("sequence length " + std::to_string(t_len) + " is outside 1.." + std::to_string(kEncoderMaxSeq));
  }
  if (ff < 32 || ff > kEncoderMaxFF || ff % 32) {
    return bad("feed-forward size " + std::to_string(ff) + " is not a multiple of 32 in 32.." + std::to_string(kEncoderMaxFF));
  }
  if (pre_k && (pre_k < 16 || pre_k > kEncoderMaxPreK || pre_k % 16)) {
    return bad("input projection K " + std::to_string(pre_k) + " is not a multiple of 16 in 16.." +
               std::to_string(kEncoderMaxPreK));
  }
  return Status::ok();
}

Status launch_encoder_layer(const EncoderParams& p, cudaStream_t stream) {
  TS_RETURN_IF_ERROR(encoder_check(p.t_len, p.ff, p.w_pre ? p.pre_k : 0));
  if (p.batch < 0) return Status(StatusCode::kInvalidArgument, "fused encoder layer: negative batch");
  if (p.batch == 0) return Status::ok();
  if (p.t_len <= 32) return launch_tp<32>(p, stream);
  if (p.t_len <= 64) return launch_tp<64>(p, stream);
  return launch_tp<128>(p, stream);
}

}  // namespace ts::engine::cuda
