// Tactic "regs_b1": the GRU/LSTM recurrence for small batches with the recurrent weights in
// REGISTERS for all T steps (one batch row per CTA).
//
// Thread layout: a warp holds 32/KSPL hidden units × KSPL k-slices of 32 (lane = unit·KSPL +
// slice); thread (j, s) keeps R[g][j][32·s .. 32·s+31] for all G gates in registers (FP32:
// 32·G floats, FP16: 16·G half2) and h in shared memory (double-buffered, read as float4
// broadcasts; FP16 reads a half copy and multiplies with HFMA2, fp32 state and gate math). A step: G dot products of 32, a butterfly over the KSPL lanes of a unit
// (__shfl_xor, no shared memory), the gate math in lane s = 0 with x·Wᵀ prefetched one step
// ahead, h written to the other buffer, ONE __syncthreads (two for GRU linear_before_reset=0,
// whose candidate gate needs r ⊙ h of every unit first).
//
// PERF NOTE: register budget. KSPL = ceil(H/32) ≤ 4, so H ≤ 128 and at most 512 threads
// (≤ 128 registers each). FP32 LSTM at H > 64 would need 128 weight registers per thread and
// is not offered here (launch falls back to the shared-memory kernel); H = 256 would need
// 1024 threads with ≥ 96 weight registers each (more than the 64 K registers of an SM), so it
// is not offered either. Gate math: FP32 keeps expf/tanhf (the 1e-5 budget over T steps);
// FP16 uses tanh.approx.f32 (sigmoid(x) = 0.5·tanh(x/2) + 0.5), within the 1e-2 budget.
#include <cuda_fp16.h>

#include "engine/backends/cuda/cuda_rnn.h"

namespace ts::engine::cuda {
namespace {

constexpr int kKC = 32;  // k per slice

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
template <bool kFast>
__device__ __forceinline__ float sig(float x) {
  if constexpr (kFast) return fmaf(0.5f, tanh_approx(0.5f * x), 0.5f);
  else return 1.0f / (1.0f + expf(-x));
}
template <bool kFast>
__device__ __forceinline__ float tnh(float x) {
  if constexpr (kFast) {
    return tanh_approx(x);
  } else {
    return tanhf(x);
  }
}

template <typename RT>
struct WRegs;
template <>
struct WRegs<float> {
  float v[kKC];
};
template <>
struct WRegs<__half> {
  __half2 v[kKC / 2];
};

// Σ_k w[k]·h[k] over the 32 k of this slice (h: 32 floats in shared memory, 16-byte aligned).
// Two accumulators per gate halve the FMA dependency chain.
template <int G>
__device__ __forceinline__ void dot32(const WRegs<float> (&w)[G], const float* h, const __half*, int g0, int g1, float (&acc)[G]) {
  float a0[G], a1[G];
#pragma unroll
  for (int g = 0; g < G; ++g) a0[g] = a1[g] = 0.0f;
  const float4* h4 = reinterpret_cast<const float4*>(h);
#pragma unroll
  for (int q = 0; q < kKC / 4; ++q) {
    float4 hv = h4[q];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (g < g0 || g >= g1) continue;
      a0[g] = fmaf(w[g].v[4 * q], hv.x, a0[g]);
      a1[g] = fmaf(w[g].v[4 * q + 1], hv.y, a1[g]);
      a0[g] = fmaf(w[g].v[4 * q + 2], hv.z, a0[g]);
      a1[g] = fmaf(w[g].v[4 * q + 3], hv.w, a1[g]);
    }
  }
#pragma unroll
  for (int g = 0; g < G; ++g) acc[g] = a0[g] + a1[g];
}
// FP16: h·R in half2 FMAs (HFMA2) on a half copy of h, four half partial sums of 8 products
// per gate, summed in fp32. PERF NOTE: the fp32-FMA version (cvt of every weight pair, 96 FMAs
// per thread) was issue-bound on the one SM; this one needs ~⅓ of the instructions
// (bench/results/engine-cuda-h200-20261130-1055.json against -1058.json and -1104.json).
template <int G>
__device__ __forceinline__ void dot32(const WRegs<__half> (&w)[G], const float*, const __half* h, int g0, int g1, float (&acc)[G]) {
  __half2 a0[G], a1[G];
#pragma unroll
  for (int g = 0; g < G; ++g) a0[g] = a1[g] = __float2half2_rn(0.0f);
  const uint4* h8 = reinterpret_cast<const uint4*>(h);
#pragma unroll
  for (int q = 0; q < kKC / 8; ++q) {
    uint4 hv = h8[q];
    __half2 h01 = *reinterpret_cast<__half2*>(&hv.x), h23 = *reinterpret_cast<__half2*>(&hv.y);
    __half2 h45 = *reinterpret_cast<__half2*>(&hv.z), h67 = *reinterpret_cast<__half2*>(&hv.w);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (g < g0 || g >= g1) continue;
      a0[g] = __hfma2(w[g].v[4 * q], h01, a0[g]);
      a1[g] = __hfma2(w[g].v[4 * q + 1], h23, a1[g]);
      a0[g] = __hfma2(w[g].v[4 * q + 2], h45, a0[g]);
      a1[g] = __hfma2(w[g].v[4 * q + 3], h67, a1[g]);
    }
  }
#pragma unroll
  for (int g = 0; g < G; ++g) {
    float2 x = __half22float2(a0[g]), y = __half22float2(a1[g]);
    acc[g] = (x.x + x.y) + (y.x + y.y);
  }
}

// Element (k, gate g, unit j) of the packed Rᵀ ([Hp/2][G][H][2], see cuda_rnn.h).
template <typename RT>
__device__ __forceinline__ RT r_at(const RT* r, int G, int H, int k, int g, int j) {
  return r[((size_t(k / 2) * G + g) * H + j) * 2 + (k & 1)];
}

// LBR0: GRU linear_before_reset=0 (G = 3). PERF NOTE: the gate ranges and the cell's branches
// are compile-time: with them as kernel arguments ncu counted 279 warp instructions per warp per
// step (GRU-2x128 FP16, 2020 cycles per step, L1 54 % busy).
template <int G, bool LBR0, int KSPL, typename RT>
__global__ void __launch_bounds__(128 * KSPL, 1) rnn_regs_kernel(RnnStepParams p) {
  constexpr bool kFast = sizeof(RT) == 2;
  constexpr int kUPW = 32 / KSPL;        // units per warp
  constexpr int kHS = KSPL * kKC;        // h row length in shared memory (≥ H, zero-padded)
  __shared__ __align__(16) float hbuf[2][kHS];
  __shared__ __align__(16) float rhb[kHS];  // r ⊙ h (GRU linear_before_reset=0)
  __shared__ __align__(16) __half h16[2][kHS];  // FP16: half copies of h and r ⊙ h for HFMA2
  __shared__ __align__(16) __half rh16[kHS];
  const int H = p.hidden, B = p.batch, T = p.t_len;
  const int b = blockIdx.x;
  const int lane = threadIdx.x & 31;
  const int s = lane % KSPL;
  const int j = (threadIdx.x >> 5) * kUPW + lane / KSPL;
  const bool unit = j < H;
  const bool owner = unit && s == 0;
  constexpr bool gru_lbr0 = G == 3 && LBR0;
  const int k0 = s * kKC;

  // This thread's slice of R into registers (zeros past H).
  WRegs<RT> w[G];
  const RT* R = static_cast<const RT*>(p.r);
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if constexpr (sizeof(RT) == 4) {
#pragma unroll
      for (int k = 0; k < kKC; ++k) w[g].v[k] = (unit && k0 + k < H) ? r_at(R, G, H, k0 + k, g, j) : 0.0f;
    } else {
#pragma unroll
      for (int q = 0; q < kKC / 2; ++q) {
        int k = k0 + 2 * q;
        __half lo = (unit && k < H) ? r_at(R, G, H, k, g, j) : __float2half(0.0f);
        __half hi = (unit && k + 1 < H) ? r_at(R, G, H, k + 1, g, j) : __float2half(0.0f);
        w[g].v[q] = __halves2half2(lo, hi);
      }
    }
  }
  for (int i = threadIdx.x; i < kHS; i += blockDim.x) {
    hbuf[0][i] = (p.h0 && i < H) ? p.h0[size_t(b) * H + i] : 0.0f;
    hbuf[1][i] = 0.0f;
    rhb[i] = 0.0f;
    h16[0][i] = __float2half(hbuf[0][i]);
    h16[1][i] = __float2half(0.0f);
    rh16[i] = __float2half(0.0f);
  }
  float c = (owner && p.c0) ? p.c0[size_t(b) * H + j] : 0.0f;
  int len = T;
  if (p.lens) len = p.lens_i64 ? int(static_cast<const int64_t*>(p.lens)[b]) : static_cast<const int*>(p.lens)[b];
  const float rbh = (owner && p.rbh) ? p.rbh[j] : 0.0f;
  float pi = 0.0f, po = 0.0f, pf = 0.0f;
  if (owner && p.peep) {
    pi = p.peep[j];
    po = p.peep[H + j];
    pf = p.peep[2 * H + j];
  }
  const size_t gstride = size_t(B) * G * H;  // gx: one step to the next
  const float* gxp = p.gx + size_t(b) * G * H + j;
  float gxn[G];
#pragma unroll
  for (int g = 0; g < G; ++g) gxn[g] = owner ? gxp[size_t(g) * H] : 0.0f;
  __syncthreads();

  int cur = 0;
  for (int t = 0; t < T; ++t) {
    const float* hc = hbuf[cur];
    float* hn = hbuf[1 - cur];
    const __half* hc16 = h16[cur];
    __half* hn16 = h16[1 - cur];
    float gxv[G];
#pragma unroll
    for (int g = 0; g < G; ++g) gxv[g] = gxn[g];
    if (owner && t + 1 < T) {  // prefetch the next step's x·Wᵀ
      const float* nx = gxp + size_t(t + 1) * gstride;
#pragma unroll
      for (int g = 0; g < G; ++g) gxn[g] = nx[size_t(g) * H];
    }
    float acc[G];
    dot32<G>(w, hc + k0, hc16 + k0, 0, gru_lbr0 ? 2 : G, acc);
#pragma unroll
    for (int off = 1; off < KSPL; off <<= 1)
#pragma unroll
      for (int g = 0; g < G; ++g) acc[g] += __shfl_xor_sync(0xffffffffu, acc[g], off);
    const float hp = unit ? hc[j] : 0.0f;
    float hnew = 0.0f;
    if constexpr (G == 4) {
      float ig = sig<kFast>(gxv[0] + acc[0] + pi * c);
      float fg = sig<kFast>(gxv[2 % G] + acc[2 % G] + pf * c);
      float cc = tnh<kFast>(gxv[3 % G] + acc[3 % G]);
      float cn = fg * c + ig * cc;
      float og = sig<kFast>(gxv[1] + acc[1] + po * cn);
      hnew = og * tnh<kFast>(cn);
      if (t < len) c = cn;
    } else if constexpr (!gru_lbr0) {
      float z = sig<kFast>(gxv[0] + acc[0]);
      float rr = sig<kFast>(gxv[1] + acc[1]);
      float n = tnh<kFast>(gxv[2 % G] + rr * (acc[2 % G] + rbh));
      hnew = n + z * (hp - n);
    } else {
      float z = sig<kFast>(gxv[0] + acc[0]);
      float rr = sig<kFast>(gxv[1] + acc[1]);
      if (owner) {
        rhb[j] = rr * hp;
        rh16[j] = __float2half(rr * hp);
      }
      __syncthreads();  // r ⊙ h of every unit is in rhb
      dot32<G>(w, rhb + k0, rh16 + k0, 2, 3, acc);
#pragma unroll
      for (int off = 1; off < KSPL; off <<= 1) acc[2 % G] += __shfl_xor_sync(0xffffffffu, acc[2 % G], off);
      float n = tnh<kFast>(gxv[2 % G] + acc[2 % G]);
      hnew = n + z * (hp - n);
    }
    if (owner) {
      const bool valid = t < len;
      hn[j] = valid ? hnew : hp;
      if constexpr (kFast) hn16[j] = __float2half(valid ? hnew : hp);
      if (p.y) p.y[(size_t(t) * B + b) * H + j] = valid ? hnew : 0.0f;
    }
    __syncthreads();
    cur = 1 - cur;
  }
  if (owner) {
    if (p.yh) p.yh[size_t(b) * H + j] = hbuf[cur][j];
    if (p.yc) p.yc[size_t(b) * H + j] = c;
  }
}

template <int G, bool LBR0, int KSPL>
Status launch_k(const RnnStepParams& p, cudaStream_t s) {
  const int threads = (p.hidden + 32 / KSPL - 1) / (32 / KSPL) * 32;
  if (p.r_half) rnn_regs_kernel<G, LBR0, KSPL, __half><<<p.batch, threads, 0, s>>>(p);
  else rnn_regs_kernel<G, LBR0, KSPL, float><<<p.batch, threads, 0, s>>>(p);
  TS_CUDA_LAUNCHED("rnn recurrence (regs_b1)");
  return Status::ok();
}

}  // namespace

bool rnn_regs_supported(const RnnStepParams& p, int sms) {
  if (p.hidden < 1 || p.hidden > kRnnRegsMaxHidden) return false;
  if (p.batch > kRnnRegsMaxBatchPerSm * sms) return false;
  if (p.r_bf16) return false;  // HFMA2 on half only: bf16 runs the persistent kernel
  if (p.lstm && !p.r_half && p.hidden > 64) return false;  // 128 fp32 weight registers per thread
  return true;
}

Status launch_rnn_regs(const RnnStepParams& p, cudaStream_t stream) {
  const int ksplit = p.hidden <= 32 ? 1 : p.hidden <= 64 ? 2 : 4;
  if (p.lstm) {
    if (ksplit == 1) return launch_k<4, false, 1>(p, stream);
    if (ksplit == 2) return launch_k<4, false, 2>(p, stream);
    return launch_k<4, false, 4>(p, stream);
  }
  if (!p.lbr) {
    if (ksplit == 1) return launch_k<3, true, 1>(p, stream);
    if (ksplit == 2) return launch_k<3, true, 2>(p, stream);
    return launch_k<3, true, 4>(p, stream);
  }
  if (ksplit == 1) return launch_k<3, false, 1>(p, stream);
  if (ksplit == 2) return launch_k<3, false, 2>(p, stream);
  return launch_k<3, false, 4>(p, stream);
}

}  // namespace ts::engine::cuda
