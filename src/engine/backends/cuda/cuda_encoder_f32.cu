// The strict-FP32 fused Transformer encoder layer (cuda_encoder_f32.h): one CTA of W warps per
// sequence, everything fp32.
//
// Working set (floats), D = d_model, LD = D + 4, R = T rounded up to 8 (rows T..R-1 start zero,
// stay finite, are masked out of the softmax and never written out):
//   xf   [R][LD]      the residual stream (x, then x1, then x1 + ffn)
//   xn   [R][LD]      pre-norm layers only: LN₁(x), then LN₂(h), the products' A operand
//   q, k, v [R][LD]   in_proj's output; each head's attention output overwrites its own q columns
//   p    [W][4][32·KPL] per warp, the softmax weights of its 4 query rows (KPL keys per lane)
//   hid  [R][FF+4]    the FF hidden layer, over q/k/v/p (dead by then); also the staging of the
//                     raw input for the folded projection ([R][K4+4], K rounded up to 4)
//   red  [512]        the partial sums of the one-row products (head: the last row only)
// Rows are padded by 4 floats: a quarter warp's float4 loads of 8 rows fall in 32 banks.
//
// Products A[R × K] · Wᵀ: a thread owns 8 rows × 4 columns; per 4 k it loads 8 float4 of A
// (shared, the warp's lanes mostly on the same rows: broadcast) and 4 float4 of the [K][N]
// weights (global through the read-only cache; every CTA of an SM reads the same 139 KB at
// D 64, FF 128) for 128 FFMA. With the head folded in, the rows after in_proj are the last one
// alone: a [1 × K] · [K × N] product split over k across the CTA (red).
//
// PERF NOTE: for transformer-2x64's FP32 plan the fused layer is faster than the unfused layers
// (~50 kernels) at every batch from 1 to 4,096, host-to-host and device-resident,
// so the node has the one tactic and no batch limit (bench/results/xf32-h200-20261201-0847-fused.json,
// xf32-h200-20261201-0837-unfused-fp32.json). The kernel alone per layer with 8 and 16 warps
// (bench/results/archive/xf32-h200-20261201-0837-kernel-timing.txt): 16 warps are faster where
// batch ≤ the SM count, 8 above (two CTAs of ~80 KB per SM). At batch 1 the layer is
// latency-bound (each thread's k loop waits on L2 for its weights); staging weights in shared
// memory was not tried.
#include <algorithm>
#include <string>

#include "engine/backends/cuda/cuda_encoder.h"
#include "engine/backends/cuda/cuda_encoder_f32.h"

namespace ts::engine::cuda {
namespace {

constexpr int kQRows = 4;     // query rows per attention item
constexpr int kRedFloats = 512;
constexpr int kRowTile = 8;   // rows per thread in the products

__host__ __device__ inline int round_up(int v, int m) { return (v + m - 1) / m * m; }

// Floats of one sequence's working set (layout above).
__host__ __device__ inline size_t f32_cta_floats(int d, int t_len, int ff, int pre_k, int warps, int kpl, bool norm_first) {
  const size_t r = size_t(round_up(t_len, kRowTile)), ld = size_t(d) + 4;
  const size_t xn = norm_first ? r * ld : 0;
  const size_t attn = 3 * r * ld + size_t(warps) * kQRows * 32 * size_t(kpl);
  const size_t hidden = r * size_t(ff + 4), stage = pre_k ? r * size_t(round_up(pre_k, 4) + 4) : 0;
  const size_t region = attn > hidden ? (attn > stage ? attn : stage) : (hidden > stage ? hidden : stage);
  return r * ld + xn + region + kRedFloats;
}

int keys_per_lane(int t_len) { return t_len <= 32 ? 1 : t_len <= 64 ? 2 : 4; }

__device__ __forceinline__ void fma4(float4& acc, float a, const float4& w) {
  acc.x = fmaf(a, w.x, acc.x);
  acc.y = fmaf(a, w.y, acc.y);
  acc.z = fmaf(a, w.z, acc.z);
  acc.w = fmaf(a, w.w, acc.w);
}

// f(r, n, v) for v = A[r, 0:K] · Wt[0:K, n:n+4] and every row r < rows (a multiple of 8), n a
// multiple of 4 < N; A row-major (lda floats, a multiple of 4), Wt [K][N] in global memory.
template <typename F>
__device__ __forceinline__ void gemm_f32(const float* A, int lda, const float* __restrict__ Wt, int K, int N, int rows, F f) {
  const int nthr = int(blockDim.x), ncg = N / 4, tiles = rows / kRowTile * ncg;
  for (int t = int(threadIdx.x); t < tiles; t += nthr) {
    const int n0 = (t % ncg) * 4, r0 = (t / ncg) * kRowTile;
    float4 acc[kRowTile];
#pragma unroll
    for (int i = 0; i < kRowTile; ++i) acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    const float* a = A + r0 * lda;
    const float* w = Wt + n0;
#pragma unroll 2
    for (int k = 0; k < K; k += 4) {
      float4 wv[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) wv[j] = __ldg(reinterpret_cast<const float4*>(w + (k + j) * N));
#pragma unroll
      for (int i = 0; i < kRowTile; ++i) {
        const float4 av = *reinterpret_cast<const float4*>(a + i * lda + k);
        fma4(acc[i], av.x, wv[0]);
        fma4(acc[i], av.y, wv[1]);
        fma4(acc[i], av.z, wv[2]);
        fma4(acc[i], av.w, wv[3]);
      }
    }
#pragma unroll
    for (int i = 0; i < kRowTile; ++i) f(r0 + i, n0, acc[i]);
  }
}

// f(n, v) for v = a[0:K] · Wt[0:K, n] and every n < N, by the whole CTA: the k range split into
// S = threads / N slices whose partial sums meet in red. Ends with the CTA synchronized.
template <typename F>
__device__ __forceinline__ void gemv_f32(const float* a, const float* __restrict__ Wt, int K, int N, float* red, F f) {
  const int nthr = int(blockDim.x), tid = int(threadIdx.x);
  const int S = nthr >= 2 * N ? nthr / N : 1, chunk = (K + S - 1) / S;
  for (int idx = tid; idx < N * S; idx += nthr) {
    const int n = idx % N, s = idx / N, k1 = min(K, (s + 1) * chunk);
    float acc = 0.f;
    for (int k = s * chunk; k < k1; ++k) acc = fmaf(a[k], __ldg(Wt + k * N + n), acc);
    red[s * N + n] = acc;
  }
  __syncthreads();
  for (int n = tid; n < N; n += nthr) {
    float acc = 0.f;
    for (int s = 0; s < S; ++s) acc += red[s * N + n];
    f(n, acc);
  }
  __syncthreads();
}

// LayerNorm of xf's rows r_begin..r_end-1 (a warp per row, D/32 adjacent columns per lane) into
// dst (xf itself, or a pre-norm layer's xn; same row stride); with y set only y's row r is written
// instead; with head_w set (one row, the last) the head's outputs go to head_out instead. s null:
// no normalization (a pre-norm layer's output is its residual stream as it is).
template <int D>
__device__ __forceinline__ void layer_norm_f32(const float* xf, float* dst, const float* __restrict__ s, const float* __restrict__ b,
                                               float eps, float* y, int r_begin, int r_end, const EncoderF32Params& p,
                                               float* head_out) {
  constexpr int kPer = D / 32, kLd = D + 4;
  const int W = int(blockDim.x >> 5), warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31), c0 = lane * kPer;
  for (int r = r_begin + warp; r < r_end; r += W) {
    float v[kPer];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kPer; ++i) sum += (v[i] = xf[r * kLd + c0 + i]);
    if (s) {
#pragma unroll
      for (int o = 16; o; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      const float mean = sum / float(D);
      float sq = 0.f;
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        v[i] -= mean;
        sq = fmaf(v[i], v[i], sq);
      }
#pragma unroll
      for (int o = 16; o; o >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);
      const float inv = 1.f / sqrtf(sq / float(D) + eps);
#pragma unroll
      for (int i = 0; i < kPer; ++i) v[i] = v[i] * inv * __ldg(s + c0 + i) + __ldg(b + c0 + i);
    }
    if (head_out) {
      for (int n = 0; n < p.head_n; ++n) {
        float acc = 0.f;
#pragma unroll
        for (int i = 0; i < kPer; ++i) acc = fmaf(v[i], __ldg(p.head_w + n * D + c0 + i), acc);
#pragma unroll
        for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) {
          acc += p.head_b ? __ldg(p.head_b + n) : 0.f;
          head_out[n] = p.head_sigmoid ? 1.f / (1.f + expf(-acc)) : acc;
        }
      }
    } else if (y) {
#pragma unroll
      for (int i = 0; i < kPer; ++i) y[size_t(r) * D + c0 + i] = v[i];
    } else {
#pragma unroll
      for (int i = 0; i < kPer; ++i) dst[r * kLd + c0 + i] = v[i];
    }
  }
}

__device__ __forceinline__ float ff_act(float v, bool gelu) {
  return gelu ? 0.5f * v * (1.f + erff(v * 0.70710678118654752f)) : fmaxf(v, 0.f);
}

// KPL: keys per lane in the softmax (32·KPL ≥ T). kSmem: the working set in shared memory, else
// in p.scratch (one slice per CTA; the grid loops over the sequences).
template <int D, int KPL, bool kSmem>
__global__ void __launch_bounds__(512, 1) encoder_f32_kernel(EncoderF32Params p) {
  constexpr int LD = D + 4, kKeys = 32 * KPL;
  const int nthr = int(blockDim.x), W = nthr >> 5, tid = int(threadIdx.x), warp = tid >> 5, lane = tid & 31;
  const int T = p.t_len, R = round_up(T, kRowTile), ff = p.ff, hd = p.head_dim, heads = D / hd;
  const int ldh = ff + 4;
  extern __shared__ __align__(16) unsigned char smem[];
  float* base;
  if constexpr (kSmem) {
    base = reinterpret_cast<float*>(smem);
  } else {
    base = p.scratch + size_t(blockIdx.x) * f32_cta_floats(D, T, ff, p.w_pre ? p.pre_k : 0, W, KPL, p.norm_first);
  }
  const bool pre_norm = p.norm_first, causal = p.causal;
  float* xf = base;
  float* xn = pre_norm ? xf + R * LD : xf;  // the products' A operand
  float* q = xf + (pre_norm ? 2 : 1) * R * LD;  // after xf (and xn)
  float* k = q + R * LD;
  float* v = k + R * LD;
  float* pw = v + R * LD + warp * kQRows * kKeys;
  float* hid = q;
  float* red = base + f32_cta_floats(D, T, ff, p.w_pre ? p.pre_k : 0, W, KPL, pre_norm) - kRedFloats;
  const bool head = p.head_w != nullptr;
  const int last = T - 1;

  for (int seq = int(blockIdx.x); seq < p.batch; seq += int(gridDim.x)) {
    // 0. The input: x (or x·Wpreᵀ + bpre) into xf; rows T..R-1 zero.
    if (p.w_pre) {
      const int K = p.pre_k, K4 = round_up(K, 4), lds = K4 + 4;
      const float* x = p.x + size_t(seq) * size_t(T) * size_t(K);
      for (int i = tid; i < R * K4; i += nthr) {
        const int r = i / K4, col = i % K4;
        hid[r * lds + col] = r < T && col < K ? __ldg(x + r * K + col) : 0.f;
      }
      __syncthreads();
      gemm_f32(hid, lds, p.w_pre, K4, D, R, [&](int r, int n, float4 a) {
        const float4 b = __ldg(reinterpret_cast<const float4*>(p.b_pre + n));
        *reinterpret_cast<float4*>(xf + r * LD + n) =
            r < T ? make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w) : make_float4(0.f, 0.f, 0.f, 0.f);
      });
    } else {
      const float4* x = reinterpret_cast<const float4*>(p.x + size_t(seq) * size_t(T) * D);
      for (int i = tid; i < R * D / 4; i += nthr) {
        const int r = i / (D / 4), col = 4 * (i % (D / 4));
        *reinterpret_cast<float4*>(xf + r * LD + col) = r < T ? __ldg(x + i) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
    __syncthreads();
    if (pre_norm) {  // LN₁(x) → xn, every row (padded ones are zero, so finite)
      layer_norm_f32<D>(xf, xn, p.ln1_s, p.ln1_b, p.eps1, nullptr, 0, R, p, nullptr);
      __syncthreads();
    }

    // 1. in_proj → q, k, v.
    gemm_f32(xn, LD, p.w_in, D, 3 * D, R, [&](int r, int n, float4 a) {
      const float4 b = __ldg(reinterpret_cast<const float4*>(p.b_in + n));
      float* dst = n < D ? q + r * LD + n : n < 2 * D ? k + r * LD + n - D : v + r * LD + n - 2 * D;
      *reinterpret_cast<float4*>(dst) = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    });
    __syncthreads();

    // 2. Attention: an item is one head × 4 query rows (rows past the last wanted one repeat
    // it); scores in registers (KPL keys per lane), weights through pw, output over q.
    {
      const int q_begin = head ? last : 0, q_rows = T - q_begin;
      const int items = heads * ((q_rows + kQRows - 1) / kQRows);
      for (int item = warp; item < items; item += W) {
        const int h = item % heads, c0 = h * hd, rb = q_begin + (item / heads) * kQRows;
        int rr[kQRows];
#pragma unroll
        for (int u = 0; u < kQRows; ++u) rr[u] = min(rb + u, T - 1);
        float s[kQRows][KPL];
#pragma unroll
        for (int u = 0; u < kQRows; ++u)
#pragma unroll
          for (int i = 0; i < KPL; ++i) s[u][i] = 0.f;
        for (int d = 0; d < hd; d += 4) {
          float4 qv[kQRows];
#pragma unroll
          for (int u = 0; u < kQRows; ++u) qv[u] = *reinterpret_cast<const float4*>(q + rr[u] * LD + c0 + d);
#pragma unroll
          for (int i = 0; i < KPL; ++i) {
            const int j = lane + 32 * i;
            if (j < T) {
              const float4 kv = *reinterpret_cast<const float4*>(k + j * LD + c0 + d);
#pragma unroll
              for (int u = 0; u < kQRows; ++u) {
                s[u][i] = fmaf(qv[u].x, kv.x, s[u][i]);
                s[u][i] = fmaf(qv[u].y, kv.y, s[u][i]);
                s[u][i] = fmaf(qv[u].z, kv.z, s[u][i]);
                s[u][i] = fmaf(qv[u].w, kv.w, s[u][i]);
              }
            }
          }
        }
        float inv[kQRows];
#pragma unroll
        for (int u = 0; u < kQRows; ++u) {
          float m = -INFINITY;
#pragma unroll
          for (int i = 0; i < KPL; ++i) {
            const int key = lane + 32 * i;
            s[u][i] = key < T && (!causal || key <= rr[u]) ? s[u][i] * p.scale : -INFINITY;
            m = fmaxf(m, s[u][i]);
          }
#pragma unroll
          for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
          float l = 0.f;
#pragma unroll
          for (int i = 0; i < KPL; ++i) {
            const float e = s[u][i] == -INFINITY ? 0.f : expf(s[u][i] - m);
            l += e;
            pw[u * kKeys + lane + 32 * i] = e;
          }
#pragma unroll
          for (int o = 16; o; o >>= 1) l += __shfl_xor_sync(0xffffffffu, l, o);
          inv[u] = 1.f / l;
        }
        __syncwarp();
        if (hd <= 32) {  // G = 32 / hd key groups of hd lanes, then summed across the groups
          const int dl = lane % hd, g = lane / hd, G = 32 / hd;
          float o[kQRows] = {};
          for (int j = g; j < T; j += G) {
            const float vv = v[j * LD + c0 + dl];
#pragma unroll
            for (int u = 0; u < kQRows; ++u) o[u] = fmaf(pw[u * kKeys + j], vv, o[u]);
          }
#pragma unroll
          for (int u = 0; u < kQRows; ++u) {
            for (int off = hd; off < 32; off <<= 1) o[u] += __shfl_xor_sync(0xffffffffu, o[u], off);
          }
          __syncwarp();  // every lane read q (scores) before any writes it
          if (g == 0) {
#pragma unroll
            for (int u = 0; u < kQRows; ++u) q[rr[u] * LD + c0 + dl] = o[u] * inv[u];
          }
        } else {  // hd 64 or 128: hd / 32 columns per lane
          float o[kQRows][4] = {};
          for (int j = 0; j < T; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              if (32 * e < hd) {
                const float vv = v[j * LD + c0 + lane + 32 * e];
#pragma unroll
                for (int u = 0; u < kQRows; ++u) o[u][e] = fmaf(pw[u * kKeys + j], vv, o[u][e]);
              }
            }
          }
#pragma unroll
          for (int u = 0; u < kQRows; ++u)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              if (32 * e < hd) q[rr[u] * LD + c0 + lane + 32 * e] = o[u][e] * inv[u];
        }
        __syncwarp();  // pw is rewritten by the next item
      }
    }
    __syncthreads();

    // 3. out_proj + residual into xf, then LayerNorm₁ in place.
    const auto out_add = [&](const float* __restrict__ bias, int r, int n, float4 a) {
      const float4 b = __ldg(reinterpret_cast<const float4*>(bias + n));
      float4* x = reinterpret_cast<float4*>(xf + r * LD + n);
      const float4 o = *x;
      *x = make_float4(o.x + (a.x + b.x), o.y + (a.y + b.y), o.z + (a.z + b.z), o.w + (a.w + b.w));
    };
    if (head) {
      gemv_f32(q + last * LD, p.w_out, D, D, red, [&](int n, float a) { xf[last * LD + n] += a + __ldg(p.b_out + n); });
    } else {
      gemm_f32(q, LD, p.w_out, D, D, R, [&](int r, int n, float4 a) { out_add(p.b_out, r, n, a); });
      __syncthreads();
    }
    if (pre_norm) {  // LN₂(h) → xn (rows past T keep LN₁'s finite values)
      layer_norm_f32<D>(xf, xn, p.ln2_s, p.ln2_b, p.eps2, nullptr, head ? last : 0, T, p, nullptr);
    } else {
      layer_norm_f32<D>(xf, xf, p.ln1_s, p.ln1_b, p.eps1, nullptr, head ? last : 0, T, p, nullptr);
    }
    __syncthreads();

    // 4. FF1 + activation → hid; 5. FF2 + residual into xf; LayerNorm₂ → y or the head.
    const bool gelu = p.gelu;
    if (head) {
      gemv_f32(xn + last * LD, p.w_ff1, D, ff, red, [&](int n, float a) { hid[n] = ff_act(a + __ldg(p.b_ff1 + n), gelu); });
      gemv_f32(hid, p.w_ff2, ff, D, red, [&](int n, float a) { xf[last * LD + n] += a + __ldg(p.b_ff2 + n); });
      layer_norm_f32<D>(xf, xf, pre_norm ? nullptr : p.ln2_s, p.ln2_b, p.eps2, nullptr, last, T, p,
                        p.head_out + size_t(seq) * size_t(p.head_n));
    } else {
      gemm_f32(xn, LD, p.w_ff1, D, ff, R, [&](int r, int n, float4 a) {
        const float4 b = __ldg(reinterpret_cast<const float4*>(p.b_ff1 + n));
        *reinterpret_cast<float4*>(hid + r * ldh + n) =
            make_float4(ff_act(a.x + b.x, gelu), ff_act(a.y + b.y, gelu), ff_act(a.z + b.z, gelu), ff_act(a.w + b.w, gelu));
      });
      __syncthreads();
      gemm_f32(hid, ldh, p.w_ff2, ff, D, R, [&](int r, int n, float4 a) { out_add(p.b_ff2, r, n, a); });
      __syncthreads();
      layer_norm_f32<D>(xf, xf, pre_norm ? nullptr : p.ln2_s, p.ln2_b, p.eps2, p.y + size_t(seq) * size_t(T) * D, 0, T, p,
                        nullptr);
    }
    __syncthreads();  // the next sequence overwrites the working set
  }
}

size_t f32_smem_bytes(const EncoderF32Params& p, int warps) {
  return f32_cta_floats(p.d_model, p.t_len, p.ff, p.w_pre ? p.pre_k : 0, warps, keys_per_lane(p.t_len), p.norm_first) *
         sizeof(float);
}

// Sequences in global scratch: one CTA per SM at most, each looping over its sequences.
int f32_scratch_grid(int batch) { return std::max(1, std::min(batch, std::max(1, device_sm_count()))); }

template <int D, int KPL>
Status launch_f32_variant(int W, const EncoderF32Params& p, cudaStream_t stream) {
  const size_t bytes = f32_smem_bytes(p, W);
  if (bytes <= kEncoderMaxSmemBytes) {
    static const cudaError_t attr = [] {
      cudaError_t e = cudaFuncSetAttribute(encoder_f32_kernel<D, KPL, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(kEncoderMaxSmemBytes));
      if (e == cudaSuccess) {
        e = cudaFuncSetAttribute(encoder_f32_kernel<D, KPL, true>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 int(cudaSharedmemCarveoutMaxShared));
      }
      return e;
    }();
    TS_CUDA(attr);
    encoder_f32_kernel<D, KPL, true><<<unsigned(p.batch), unsigned(W * 32), bytes, stream>>>(p);
  } else {
    if (!p.scratch) return Status(StatusCode::kInvalidArgument, "fused encoder layer (fp32): no scratch for this shape");
    encoder_f32_kernel<D, KPL, false><<<unsigned(f32_scratch_grid(p.batch)), unsigned(W * 32), 0, stream>>>(p);
  }
  TS_CUDA_LAUNCHED("encoder_f32_kernel");
  return Status::ok();
}

template <int D>
Status launch_f32_d(int W, const EncoderF32Params& p, cudaStream_t stream) {
  switch (keys_per_lane(p.t_len)) {
    case 1: return launch_f32_variant<D, 1>(W, p, stream);
    case 2: return launch_f32_variant<D, 2>(W, p, stream);
    default: return launch_f32_variant<D, 4>(W, p, stream);
  }
}

}  // namespace

std::vector<float> encoder_f32_pack_weight(const float* w_nk, int n, int k, int k_pad) {
  const int kp = std::max(k, k_pad);
  std::vector<float> out(size_t(kp) * size_t(n), 0.f);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < k; ++c) out[size_t(c) * size_t(n) + size_t(r)] = w_nk[size_t(r) * size_t(k) + size_t(c)];
  return out;
}

int encoder_f32_warps(int batch, int warps) {
  if (warps == 8 || warps == 16) return warps;
  const int sms = device_sm_count();
  return sms > 0 && batch <= sms ? 16 : 8;
}

size_t encoder_f32_scratch_bytes(const EncoderF32Params& p) {
  const int w = encoder_f32_warps(p.batch, p.warps);
  const size_t bytes = f32_smem_bytes(p, w);
  if (bytes <= kEncoderMaxSmemBytes || p.batch <= 0) return 0;
  return bytes * size_t(f32_scratch_grid(p.batch));
}

// Measurements: the PERF NOTE at the top; docs/performance.md, history row 4351015.
Status launch_encoder_layer_f32(const EncoderF32Params& p, cudaStream_t stream) {
  TS_RETURN_IF_ERROR(encoder_check(p.d_model, p.head_dim > 0 ? p.d_model / p.head_dim : 0, p.t_len, p.ff,
                                   p.w_pre ? p.pre_k : 0));
  if (p.head_dim <= 0 || p.d_model % p.head_dim) {
    return Status(StatusCode::kInvalidArgument, "fused encoder layer (fp32): head dim " + std::to_string(p.head_dim) +
                                                    " does not divide d_model " + std::to_string(p.d_model));
  }
  if (p.w_pre && p.pre_k < 1) return Status(StatusCode::kInvalidArgument, "fused encoder layer (fp32): input projection K 0");
  if (p.batch < 0) return Status(StatusCode::kInvalidArgument, "fused encoder layer (fp32): negative batch");
  if (p.batch == 0) return Status::ok();
  if (p.warps && p.warps != 8 && p.warps != 16) {
    return Status(StatusCode::kInvalidArgument,
                  "fused encoder layer (fp32): " + std::to_string(p.warps) + " warps per CTA (8 or 16)");
  }
  const int w = encoder_f32_warps(p.batch, p.warps);
  switch (p.d_model) {
    case 32: return launch_f32_d<32>(w, p, stream);
    case 64: return launch_f32_d<64>(w, p, stream);
    default: return launch_f32_d<128>(w, p, stream);
  }
}

}  // namespace ts::engine::cuda
