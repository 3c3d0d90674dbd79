// Tactic "mma": the GRU/LSTM recurrence on tensor cores for FP16/BF16 plans (H ≤ 128, H a
// multiple of 8). Each CTA owns a tile of 16·MT batch rows for all T steps; the step's
// h·Rᵀ ([16·MT, H] · [H, G·H]) is mma.sync m16n8k16 (fp16/bf16 in, fp32 accumulate) with Rᵀ
// resident in shared memory for all T steps, and the gate math runs on the accumulators in
// registers.
//
// Layout. 8 warps (16 in the kernels compiled for H = 128 with 32-row tiles); hidden units in
// chunks of 8 (one n8 tile per gate), chunk c owned by warp c % warps (at most 2 chunks per warp
// for H ≤ 128). A warp computes all G gates of its chunks, so
// every thread holds, for its accumulator elements (row, unit), the pre-activations of every
// gate: no shared-memory exchange for the cell. Rᵀ is packed on the host in the B-fragment
// order ([gate][chunk][k tile][lane] × 2 registers: one conflict-free 8-byte shared load per
// fragment); h is double-buffered in shared memory as the A operand (fp16/bf16, row stride H +
// 8 halves: conflict-free 4-byte fragment loads), the exact fp32 state (h, and LSTM c) stays in
// the owning thread's registers. One __syncthreads per step (two for GRU linear_before_reset=0,
// whose candidate gate needs r ⊙ h of every unit first). x·Wᵀ + bias comes from the one GEMM
// before (fp32 [T][B][G·H]); its loads are issued before the step's mma loop.
//
// PERF NOTE: tile rows. MT = 1 (16 rows) when ceil(B / 16) CTAs fit the GPU at once, else
// MT = 2 (32 rows: batch 4096 → 128 CTAs on a 132-SM device). Shared memory: Rᵀ
// G·H²·2 bytes (GRU H=128: 96 KiB, LSTM 128 KiB) + h tiles.
//
// PERF NOTE (perf4096, Nsight Compute of mma_x2 MT = 2, GRU-2x128 b4096,
// bench/results/archive/perf4096-h200-20261201-0916-ncu.txt): the tensor pipe is a quarter busy and
// nearly half the warp samples wait on fixed-latency dependencies; layer 1 executes about ten
// instructions per HMMA (IMAD, LDS, ISETP): with H, KT and NC runtime values the fragment loops
// carry address arithmetic and branches that a kernel templated on H folds away (HC below).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "engine/backends/cuda/cuda_rnn.h"
#include "engine/backends/cuda/cuda_rnn_mma_device.cuh"

namespace ts::engine::cuda {
namespace {

constexpr int kWarps = 8;
// Warps of a kernel compiled for one hidden size (HC > 0) with 32-row tiles (MT = 2): 16, one
// chunk of 8 units each, so that each scheduler has 4 warps' chains to issue from instead of 2.
// PERF NOTE: GRU-2x128 FP16 T=60, device-resident, 8 against 16 warps in the same call
// (bench/results/archive/mma128-h200-20261201-2320-ab.log): 16 warps are faster with 32-row tiles
// (batch 4096) and slower with 16-row tiles (batch 2048), so 16-row tiles keep 8.
constexpr int kFixedWarps = 16;
constexpr int mma_warps(int hc, int mt) { return hc > 0 && mt == 2 ? kFixedWarps : kWarps; }

using namespace rnn_device;  // tanh_fast, sig_fast, pack2, mma16816 (cuda_rnn_mma_device.cuh)

// G gates; LBR0: GRU linear_before_reset=0; MT m16 tiles of rows per CTA; T16 half or bf16;
// FX: x·Wᵀ computed here (W fragments resident too, x tiles double-buffered in shared memory)
// instead of read from the GEMM's output; UNR: the k-tile loops unrolled by 2 (fragment loads of
// two k tiles in flight; tactic "mma_x2"). HC, IC > 0: the hidden and input sizes fixed at compile
// time (the launch checks p.hidden == HC and, with FX, p.input == IC), so that the fragment
// addresses, the chunk checks and x's tile indices fold into constants and the k-tile loops unroll
// fully; 0: taken from p at run time.
template <int G, bool LBR0, int MT, typename T16, bool FX, bool UNR = false, int HC = 0, int IC = 0>
__global__ void __launch_bounds__(32 * mma_warps(HC, MT), 1) rnn_mma_kernel(RnnStepParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int NW = mma_warps(HC, MT), NT = 32 * NW;  // warps, threads
  constexpr int CPW = kRnnMmaMaxHidden / 8 / NW;    // chunks of 8 hidden units per warp (2 or 1)
  constexpr int ROWS = 16 * MT;
  // Accumulator slots: one per gate; with FX, GRU linear_before_reset=1 keeps x·W_hᵀ of the
  // candidate gate apart (slot 3) since only h·R_hᵀ is multiplied by r.
  constexpr bool kSplitN = FX && G == 3 && !LBR0;
  constexpr int GA = kSplitN ? 4 : G;
  constexpr int XPT = kRnnMmaMaxInput * 32 / 4 / NT;  // x float4 per thread per step (≤ 4)
  const int H = HC > 0 ? HC : p.hidden, B = p.batch, T = p.t_len, I = FX ? (IC > 0 ? IC : p.input) : 0;
  const int NC = H / 8, KT = (H + 15) / 16, HS = KT * 16 + 8;
  const int KTX = (I + 15) / 16, XS = KTX * 16 + 8, I4 = I / 4, I4d = max(I4, 1);  // I4d: a divisor (FX)
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int qr = lane >> 2, qc = lane & 3;
  const int row_base = blockIdx.x * ROWS;

  // Rᵀ (and Wᵀ) fragments → shared memory (16-byte copies).
  const size_t rn = size_t(G) * NC * KT * 32;   // uint2 fragments
  const size_t wn = size_t(G) * NC * KTX * 32;
  {
    const uint4* src = static_cast<const uint4*>(p.r_mma);
    uint4* dst = reinterpret_cast<uint4*>(smem);
    for (size_t i = threadIdx.x; i < rn / 2; i += NT) dst[i] = __ldg(src + i);
    if constexpr (FX) {
      const uint4* wsrc = static_cast<const uint4*>(p.w_mma);
      for (size_t i = threadIdx.x; i < wn / 2; i += NT) dst[rn / 2 + i] = __ldg(wsrc + i);
    }
  }
  const uint2* rs = reinterpret_cast<const uint2*>(smem);
  const uint2* ws = rs + rn;
  T16* hb = reinterpret_cast<T16*>(smem + (rn + wn) * sizeof(uint2));  // [2][ROWS][HS]
  T16* rh = hb + 2 * ROWS * HS;                                         // [ROWS][HS] (LBR0)
  T16* xb = rh + (LBR0 ? ROWS * HS : 0);                                // [2][ROWS][XS] (FX)
  for (int i = threadIdx.x; i < (LBR0 ? 3 : 2) * ROWS * HS + (FX ? 2 * ROWS * XS : 0); i += NT) {
    const int buf = i / (ROWS * HS), r = (i / HS) % ROWS, k = i % HS, b = row_base + r;
    float v = (buf == 0 && p.h0 && k < H && b < B) ? p.h0[size_t(b) * H + k] : 0.0f;
    hb[i] = T16(v);
  }
  // x of step t (fp32 [T][B][I]) → registers → a tile of shared memory.
  auto x_load = [&](int t, float4 (&xr)[XPT]) {
#pragma unroll
    for (int q = 0; q < XPT; ++q) {
      const int i = threadIdx.x + q * NT, r = i / I4d, b = row_base + r;
      xr[q] = (i < ROWS * I4 && b < B) ? __ldg(reinterpret_cast<const float4*>(p.x + (size_t(t) * B + b) * I) + i % I4d)
                                       : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  };
  auto x_store = [&](T16* dst, const float4 (&xr)[XPT]) {
#pragma unroll
    for (int q = 0; q < XPT; ++q) {
      const int i = threadIdx.x + q * NT;
      if (i < ROWS * I4) {
        const int r = i / I4d, k = (i % I4d) * 4;
        *reinterpret_cast<uint2*>(dst + r * XS + k) = make_uint2(pack2<T16>(xr[q].x, xr[q].y), pack2<T16>(xr[q].z, xr[q].w));
      }
    }
  };
  float4 xr[XPT];
  if constexpr (FX) {
    x_load(0, xr);
    __syncthreads();  // the zero fill above is done
    x_store(xb, xr);
  }

  // This thread's elements: m tile m, chunk i, e = 0..3: row m·16 + qr + 8·(e / 2), unit
  // c·8 + 2·qc + e % 2 (the m16n8 accumulator layout).
  float hreg[MT][CPW][4], creg[MT][CPW][4];
  int len[MT][2];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int b = row_base + m * 16 + qr + 8 * hh;
      int l = T;
      if (b < B && p.lens) l = p.lens_i64 ? int(static_cast<const int64_t*>(p.lens)[b]) : static_cast<const int*>(p.lens)[b];
      len[m][hh] = l;
    }
  float pi[CPW][2], po[CPW][2], pf[CPW][2], rbh[CPW][2], bx[CPW][G][2];
#pragma unroll
  for (int i = 0; i < CPW; ++i) {
    const int c = warp + NW * i;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int j = c * 8 + 2 * qc + e;
      const bool ok = c < NC;
      pi[i][e] = ok && p.peep ? p.peep[j] : 0.0f;
      po[i][e] = ok && p.peep ? p.peep[H + j] : 0.0f;
      pf[i][e] = ok && p.peep ? p.peep[2 * H + j] : 0.0f;
      rbh[i][e] = ok && p.rbh ? p.rbh[j] : 0.0f;
#pragma unroll
      for (int g = 0; g < G; ++g) bx[i][g][e] = FX && ok ? p.in_bias[g * H + j] : 0.0f;
    }
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int b = row_base + m * 16 + qr + 8 * (e / 2), j = c * 8 + 2 * qc + e % 2;
        const bool ok = c < NC && b < B;
        hreg[m][i][e] = ok && p.h0 ? p.h0[size_t(b) * H + j] : 0.0f;
        creg[m][i][e] = ok && p.c0 ? p.c0[size_t(b) * H + j] : 0.0f;
      }
  }
  __syncthreads();

  // acc[m][i][slot(g)] += A(rows of a_src, row stride as) · fragments fr (gate g, chunk i) over
  // ktn k tiles, for g in [G0, G1); slot(2) = 3 when SPLIT.
  auto mma_pass = [&](const T16* a_src, int as, int ktn, const uint2* fr, auto g0c, auto g1c, auto splitc,
                      float (&acc)[MT][CPW][GA][4]) {
    constexpr int G0 = decltype(g0c)::value, G1 = decltype(g1c)::value;
    constexpr bool SPLIT = decltype(splitc)::value;
    auto ktile = [&](int kt) {
      uint32_t a[MT][4];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const T16* base = a_src + (m * 16 + qr) * as + kt * 16 + 2 * qc;
        a[m][0] = *reinterpret_cast<const uint32_t*>(base);
        a[m][1] = *reinterpret_cast<const uint32_t*>(base + 8 * as);
        a[m][2] = *reinterpret_cast<const uint32_t*>(base + 8);
        a[m][3] = *reinterpret_cast<const uint32_t*>(base + 8 * as + 8);
      }
#pragma unroll
      for (int i = 0; i < CPW; ++i) {
        const int c = warp + NW * i;
        if (c >= NC) continue;
#pragma unroll
        for (int g = G0; g < G1; ++g) {
          const uint2 bf = fr[((size_t(g) * NC + c) * ktn + kt) * 32 + lane];
#pragma unroll
          for (int m = 0; m < MT; ++m) mma16816<T16>(acc[m][i][(SPLIT && g == 2) ? GA - 1 : g], a[m], bf.x, bf.y);
        }
      }
    };
    if constexpr (HC > 0) {
#pragma unroll
      for (int kt = 0; kt < ktn; ++kt) ktile(kt);
    } else if constexpr (UNR) {
#pragma unroll 2
      for (int kt = 0; kt < ktn; ++kt) ktile(kt);
    } else {
      for (int kt = 0; kt < ktn; ++kt) ktile(kt);
    }
  };
  using C0 = std::integral_constant<int, 0>;
  using C2 = std::integral_constant<int, 2>;
  using C3 = std::integral_constant<int, 3>;
  using CG = std::integral_constant<int, G>;
  using NoSplit = std::false_type;

  const size_t gstride = size_t(G) * H;
  int cur = 0;
  for (int t = 0; t < T; ++t) {
    const T16* hc = hb + cur * ROWS * HS;
    T16* hn = hb + (1 - cur) * ROWS * HS;
    // The step's input part, issued before the mma loop so that its latency overlaps it: x·Wᵀ +
    // bias from the GEMM's output, or (FX) the next step's x.
    float2 gx[MT][CPW][FX ? 1 : G][2];
    if constexpr (FX) {
      if (t + 1 < T) x_load(t + 1, xr);
    } else {
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int b = row_base + m * 16 + qr + 8 * hh;
          const float* src = p.gx + (size_t(t) * B + b) * gstride + 2 * qc;
#pragma unroll
          for (int i = 0; i < CPW; ++i) {
            const int c = warp + NW * i;
#pragma unroll
            for (int g = 0; g < G; ++g)
              gx[m][i][g][hh] = (b < B && c < NC) ? __ldg(reinterpret_cast<const float2*>(src + size_t(g) * H + c * 8))
                                                  : make_float2(0.0f, 0.0f);
          }
        }
    }
    float acc[MT][CPW][GA][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < CPW; ++i)
#pragma unroll
        for (int g = 0; g < GA; ++g)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[m][i][g][e] = 0.0f;
    if constexpr (FX) mma_pass(xb + cur * ROWS * XS, XS, KTX, ws, C0{}, CG{}, std::bool_constant<kSplitN>{}, acc);
    // The input part of gate g for element (m, i, e): bias (+ x·W_hᵀ kept apart), or the GEMM's.
    auto xin = [&](int m, int i, int g, int e) -> float {
      if constexpr (FX) {
        return bx[i][g][e % 2] + ((kSplitN && g == 2) ? acc[m][i][GA - 1][e] : 0.0f);
      } else {
        return (e % 2) ? gx[m][i][g][e / 2].y : gx[m][i][g][e / 2].x;
      }
    };
    float hnew[MT][CPW][4];
    if constexpr (G == 4) {
      mma_pass(hc, HS, KT, rs, C0{}, CG{}, NoSplit{}, acc);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int hh = e / 2, ee = e % 2;
            auto gv = [&](int g) { return xin(m, i, g, e) + acc[m][i][g][e]; };
            const float c = creg[m][i][e];
            const float ig = sig_fast(gv(0) + pi[i][ee] * c);
            const float fg = sig_fast(gv(2) + pf[i][ee] * c);
            const float cc = tanh_fast(gv(3));
            const float cn = fg * c + ig * cc;
            const float og = sig_fast(gv(1) + po[i][ee] * cn);
            hnew[m][i][e] = og * tanh_fast(cn);
            if (t < len[m][hh]) creg[m][i][e] = cn;
          }
    } else if constexpr (!LBR0) {
      mma_pass(hc, HS, KT, rs, C0{}, C3{}, NoSplit{}, acc);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int ee = e % 2;
            const float z = sig_fast(xin(m, i, 0, e) + acc[m][i][0][e]);
            const float r = sig_fast(xin(m, i, 1, e) + acc[m][i][1][e]);
            const float n = tanh_fast(xin(m, i, 2, e) + r * (acc[m][i][2][e] + rbh[i][ee]));
            hnew[m][i][e] = n + z * (hreg[m][i][e] - n);
          }
    } else {
      mma_pass(hc, HS, KT, rs, C0{}, C2{}, NoSplit{}, acc);
      float zs[MT][CPW][4];
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i) {
          const int c = warp + NW * i;
          float rhv[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            zs[m][i][e] = sig_fast(xin(m, i, 0, e) + acc[m][i][0][e]);
            rhv[e] = sig_fast(xin(m, i, 1, e) + acc[m][i][1][e]) * hreg[m][i][e];
          }
          if (c < NC) {
            T16* d = rh + (m * 16 + qr) * HS + c * 8 + 2 * qc;
            *reinterpret_cast<uint32_t*>(d) = pack2<T16>(rhv[0], rhv[1]);
            *reinterpret_cast<uint32_t*>(d + 8 * HS) = pack2<T16>(rhv[2], rhv[3]);
          }
        }
      __syncthreads();  // r ⊙ h of every unit is in rh
      mma_pass(rh, HS, KT, rs, C2{}, C3{}, NoSplit{}, acc);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float n = tanh_fast(xin(m, i, 2, e) + acc[m][i][2][e]);
            hnew[m][i][e] = n + zs[m][i][e] * (hreg[m][i][e] - n);
          }
    }
    // Keep h where the row's sequence has ended; h to the other buffer and Y.
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < CPW; ++i) {
        const int c = warp + NW * i;
        if (c >= NC) continue;
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const bool valid = t < len[m][hh];
          float2 yv = make_float2(0.0f, 0.0f);
#pragma unroll
          for (int ee = 0; ee < 2; ++ee) {
            const int e = 2 * hh + ee;
            if (valid) hreg[m][i][e] = hnew[m][i][e];
          }
          if (valid) yv = make_float2(hreg[m][i][2 * hh], hreg[m][i][2 * hh + 1]);
          const int r = m * 16 + qr + 8 * hh;
          *reinterpret_cast<uint32_t*>(hn + r * HS + c * 8 + 2 * qc) = pack2<T16>(hreg[m][i][2 * hh], hreg[m][i][2 * hh + 1]);
          const int b = row_base + r;
          if (p.y && b < B) *reinterpret_cast<float2*>(p.y + (size_t(t) * B + b) * H + c * 8 + 2 * qc) = yv;
        }
      }
    if constexpr (FX) {
      if (t + 1 < T) x_store(xb + (1 - cur) * ROWS * XS, xr);
    }
    __syncthreads();
    cur = 1 - cur;
  }
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < CPW; ++i) {
      const int c = warp + NW * i;
      if (c >= NC) continue;
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int b = row_base + m * 16 + qr + 8 * hh;
        if (b >= B) continue;
        const size_t o = size_t(b) * H + c * 8 + 2 * qc;
        if (p.yh) *reinterpret_cast<float2*>(p.yh + o) = make_float2(hreg[m][i][2 * hh], hreg[m][i][2 * hh + 1]);
        if (p.yc) *reinterpret_cast<float2*>(p.yc + o) = make_float2(creg[m][i][2 * hh], creg[m][i][2 * hh + 1]);
      }
    }
}

size_t mma_smem_bytes(int G, bool lbr0, int mt, int H, int I) {
  const int nc = H / 8, kt = (H + 15) / 16, hs = kt * 16 + 8;
  const int ktx = (I + 15) / 16, xs = ktx * 16 + 8;
  return size_t(G) * nc * (kt + ktx) * 32 * 8 + size_t(lbr0 ? 3 : 2) * 16 * mt * hs * 2 + (I > 0 ? size_t(2) * 16 * mt * xs * 2 : 0);
}

struct MmaDevice {
  int sms = 0;
  int smem_optin = 0;
  Status status;
};

// The kernels specialised for hidden kRnnMmaFixedHidden (HC, IC): FP16, the GRU with
// linear_before_reset = 1 (PyTorch's) and the LSTM; with FX only tactic mma_x2 (UNR), for the
// inputs of a 2-layer stack (layer 1: the features, layer 2: hidden).
constexpr int kRnnMmaFixedHidden = 128;
template <int G, bool LBR0, typename T16>
constexpr bool kMmaHasFixed = std::is_same_v<T16, __half> && !LBR0;

template <int G, bool LBR0, typename T16, bool FX, bool UNR, int HC, int IC>
Status mma_set_smem_mt(int bytes) {
  TS_CUDA(cudaFuncSetAttribute(rnn_mma_kernel<G, LBR0, 1, T16, FX, UNR, HC, IC>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  TS_CUDA(cudaFuncSetAttribute(rnn_mma_kernel<G, LBR0, 2, T16, FX, UNR, HC, IC>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  return Status::ok();
}

template <int G, bool LBR0, typename T16, bool FX>
Status mma_set_smem(int bytes) {
  TS_RETURN_IF_ERROR((mma_set_smem_mt<G, LBR0, T16, FX, false, 0, 0>(bytes)));
  if constexpr (FX) TS_RETURN_IF_ERROR((mma_set_smem_mt<G, LBR0, T16, FX, true, 0, 0>(bytes)));
  if constexpr (kMmaHasFixed<G, LBR0, T16>) {
    constexpr int H = kRnnMmaFixedHidden;
    if constexpr (FX) {
      TS_RETURN_IF_ERROR((mma_set_smem_mt<G, LBR0, T16, FX, true, H, 32>(bytes)));
      TS_RETURN_IF_ERROR((mma_set_smem_mt<G, LBR0, T16, FX, true, H, H>(bytes)));
    } else {
      TS_RETURN_IF_ERROR((mma_set_smem_mt<G, LBR0, T16, FX, false, H, 0>(bytes)));
    }
  }
  return Status::ok();
}

template <typename T16, bool FX>
Status mma_set_smem_all(int b) {
  TS_RETURN_IF_ERROR((mma_set_smem<3, false, T16, FX>(b)));
  TS_RETURN_IF_ERROR((mma_set_smem<3, true, T16, FX>(b)));
  return mma_set_smem<4, false, T16, FX>(b);
}

// Once per process (mma_device): the device's SM count and shared-memory limit, the kernels'
// limits set.
Status mma_device_setup(MmaDevice& r) {
  int dev = 0;
  TS_CUDA(cudaGetDevice(&dev));
  TS_CUDA(cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, dev));
  TS_CUDA(cudaDeviceGetAttribute(&r.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  TS_RETURN_IF_ERROR((mma_set_smem_all<__half, false>(r.smem_optin)));
  TS_RETURN_IF_ERROR((mma_set_smem_all<__half, true>(r.smem_optin)));
  TS_RETURN_IF_ERROR((mma_set_smem_all<__nv_bfloat16, false>(r.smem_optin)));
  return mma_set_smem_all<__nv_bfloat16, true>(r.smem_optin);
}

const MmaDevice& mma_device() {
  static const MmaDevice d = [] {
    MmaDevice r;
    Status s = mma_device_setup(r);
    return MmaDevice{r.sms, r.smem_optin, std::move(s)};
  }();
  return d;
}

// MT = 1 when every 16-row CTA is resident at once (CTAs per SM from the occupancy API) or 32
// rows do not fit shared memory, else MT = 2.
template <int G, bool LBR0, typename T16, bool FX, bool UNR, int HC, int IC>
Status launch_mt(const RnnStepParams& p, const MmaDevice& d, cudaStream_t s) {
  const int in = FX ? p.input : 0;
  const size_t s1 = mma_smem_bytes(G, LBR0, 1, p.hidden, in), s2 = mma_smem_bytes(G, LBR0, 2, p.hidden, in);
  int per_sm = 0;
  constexpr int threads1 = 32 * mma_warps(HC, 1), threads2 = 32 * mma_warps(HC, 2);
  TS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<G, LBR0, 1, T16, FX, UNR, HC, IC>, threads1, s1));
  const bool mt1 = (p.batch + 15) / 16 <= std::max(1, per_sm) * d.sms || s2 > size_t(d.smem_optin);
  if (mt1) rnn_mma_kernel<G, LBR0, 1, T16, FX, UNR, HC, IC><<<(p.batch + 15) / 16, threads1, s1, s>>>(p);
  else rnn_mma_kernel<G, LBR0, 2, T16, FX, UNR, HC, IC><<<(p.batch + 31) / 32, threads2, s2, s>>>(p);
  TS_CUDA_LAUNCHED("rnn recurrence (mma)");
  return Status::ok();
}

// PERF NOTE: the kernel with H (and x's width) fixed at compile time where one exists for the
// shape. perf4096's Nsight Compute profile of mma_x2 (GRU-2x128 b4096) found the run-time-size
// kernel issue-bound (about ten instructions per HMMA), not tensor-bound
// (bench/results/archive/perf4096-h200-20261201-0916-ncu.txt; the gain: mma128-h200-20261201-2312-*.json).
template <int G, bool LBR0, typename T16, bool FX, bool UNR>
Status launch_cfg(const RnnStepParams& p, const MmaDevice& d, cudaStream_t s) {
  if constexpr (kMmaHasFixed<G, LBR0, T16> && (!FX || UNR)) {
    constexpr int H = kRnnMmaFixedHidden;
    if (p.hidden == H) {
      if constexpr (!FX) {
        return launch_mt<G, LBR0, T16, FX, UNR, H, 0>(p, d, s);
      } else {
        if (p.input == 32) return launch_mt<G, LBR0, T16, FX, UNR, H, 32>(p, d, s);
        if (p.input == H) return launch_mt<G, LBR0, T16, FX, UNR, H, H>(p, d, s);
      }
    }
  }
  return launch_mt<G, LBR0, T16, FX, UNR, 0, 0>(p, d, s);
}

template <typename T16, bool FX, bool UNR = false>
Status launch_typed(const RnnStepParams& p, const MmaDevice& d, cudaStream_t s) {
  if (p.lstm) return launch_cfg<4, false, T16, FX, UNR>(p, d, s);
  if (!p.lbr) return launch_cfg<3, true, T16, FX, UNR>(p, d, s);
  return launch_cfg<3, false, T16, FX, UNR>(p, d, s);
}

}  // namespace

bool rnn_mma_packable(int hidden, bool half_or_bf16) {
  return half_or_bf16 && hidden >= 8 && hidden <= kRnnMmaMaxHidden && hidden % 8 == 0;
}

bool rnn_mma_supported(const RnnStepParams& p) {
  if (!p.r_mma || !rnn_mma_packable(p.hidden, p.r_half || p.r_bf16)) return false;
  const MmaDevice& d = mma_device();
  if (!d.status) return false;
  return mma_smem_bytes(p.lstm ? 4 : 3, !p.lstm && !p.lbr, 1, p.hidden, 0) <= size_t(d.smem_optin);
}

bool rnn_mma_fused_supported(const RnnStepParams& p) {
  if (!p.w_mma || !p.in_bias || !rnn_mma_supported(p)) return false;
  if (p.input < 4 || p.input > kRnnMmaMaxInput || p.input % 4 != 0) return false;
  if (reinterpret_cast<uintptr_t>(p.x) % 16 != 0) return false;  // float4 loads of x
  return mma_smem_bytes(p.lstm ? 4 : 3, !p.lstm && !p.lbr, 1, p.hidden, p.input) <= size_t(mma_device().smem_optin);
}

std::vector<uint32_t> rnn_mma_pack(const float* m, int gates, int hidden, int kdim, bool bf16) {
  const int H = hidden, nc = H / 8, kt_n = (kdim + 15) / 16;
  auto to16 = [&](float v) -> uint32_t {
    if (bf16) {
      __nv_bfloat16 x = __float2bfloat16_rn(v);
      return *reinterpret_cast<uint16_t*>(&x);
    }
    __half x = __float2half_rn(v);
    return *reinterpret_cast<uint16_t*>(&x);
  };
  // B[k][n = (g, j)] = M[g·H + j][k]; zero for k ≥ kdim. Fragment registers (mma m16n8k16 .col
  // B): b0 = B[2·(lane%4) + {0,1}][lane/4], b1 = the same at k + 8; the lower k in the low half.
  auto at = [&](int g, int j, int k) { return k < kdim ? to16(m[(size_t(g) * H + j) * kdim + k]) : to16(0.0f); };
  std::vector<uint32_t> out(size_t(gates) * nc * kt_n * 32 * 2);
  size_t o = 0;
  for (int g = 0; g < gates; ++g)
    for (int c = 0; c < nc; ++c)
      for (int kt = 0; kt < kt_n; ++kt)
        for (int lane = 0; lane < 32; ++lane) {
          const int j = c * 8 + lane / 4, k = kt * 16 + 2 * (lane % 4);
          out[o++] = at(g, j, k) | (at(g, j, k + 1) << 16);
          out[o++] = at(g, j, k + 8) | (at(g, j, k + 9) << 16);
        }
  return out;
}

Status launch_rnn_mma(const RnnStepParams& p, cudaStream_t stream) {
  const MmaDevice& d = mma_device();
  TS_RETURN_IF_ERROR(d.status);
  const bool fx = p.x != nullptr;
  if (p.r_bf16) {
    if (!fx) return launch_typed<__nv_bfloat16, false>(p, d, stream);
    return p.mma_unroll ? launch_typed<__nv_bfloat16, true, true>(p, d, stream) : launch_typed<__nv_bfloat16, true>(p, d, stream);
  }
  if (!fx) return launch_typed<__half, false>(p, d, stream);
  return p.mma_unroll ? launch_typed<__half, true, true>(p, d, stream) : launch_typed<__half, true>(p, d, stream);
}

}  // namespace ts::engine::cuda
