// Tactic "mma": the GRU/LSTM recurrence on tensor cores for FP16/BF16 plans (H ≤ 128, H a
// multiple of 8). Each CTA owns a tile of 16·MT batch rows for all T steps; the step's
// h·Rᵀ ([16·MT, H] · [H, G·H]) is mma.sync m16n8k16 (fp16/bf16 in, fp32 accumulate) with Rᵀ
// resident in shared memory for all T steps, and the gate math runs on the accumulators in
// registers.
//
// Layout. 8 warps; hidden units in chunks of 8 (one n8 tile per gate), chunk c owned by warp
// c % 8 (at most 2 chunks per warp for H ≤ 128). A warp computes all G gates of its chunks, so
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
// MT = 2 (32 rows: batch 4096 → 128 CTAs on the 132 SMs of an H200). Shared memory: Rᵀ
// G·H²·2 bytes (GRU H=128: 96 KiB, LSTM 128 KiB) + h tiles.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "engine/backends/cuda/cuda_rnn.h"

namespace ts::engine::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kChunksPerWarp = kRnnMmaMaxHidden / 8 / kWarps;  // 2

__device__ __forceinline__ float tanh_fast(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float sig_fast(float x) { return fmaf(0.5f, tanh_fast(0.5f * x), 0.5f); }

template <typename T16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

template <typename T16>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T16, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// G gates; LBR0: GRU linear_before_reset=0; MT m16 tiles of rows per CTA; T16 half or bf16.
template <int G, bool LBR0, int MT, typename T16>
__global__ void __launch_bounds__(kThreads, 1) rnn_mma_kernel(RnnStepParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int CPW = kChunksPerWarp;
  constexpr int ROWS = 16 * MT;
  const int H = p.hidden, B = p.batch, T = p.t_len;
  const int NC = H / 8, KT = (H + 15) / 16, HS = KT * 16 + 8;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int qr = lane >> 2, qc = lane & 3;
  const int row_base = blockIdx.x * ROWS;

  // Rᵀ fragments → shared memory (16-byte copies).
  const size_t rn = size_t(G) * NC * KT * 32;  // uint2 fragments
  {
    const uint4* src = static_cast<const uint4*>(p.r_mma);
    uint4* dst = reinterpret_cast<uint4*>(smem);
    for (size_t i = threadIdx.x; i < rn / 2; i += kThreads) dst[i] = __ldg(src + i);
  }
  const uint2* rs = reinterpret_cast<const uint2*>(smem);
  T16* hb = reinterpret_cast<T16*>(smem + rn * sizeof(uint2));  // [2][ROWS][HS]
  T16* rh = hb + 2 * ROWS * HS;                                 // [ROWS][HS] (LBR0)
  for (int i = threadIdx.x; i < (LBR0 ? 3 : 2) * ROWS * HS; i += kThreads) {
    const int buf = i / (ROWS * HS), r = (i / HS) % ROWS, k = i % HS, b = row_base + r;
    float v = (buf == 0 && p.h0 && k < H && b < B) ? p.h0[size_t(b) * H + k] : 0.0f;
    hb[i] = T16(v);
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
  float pi[CPW][2], po[CPW][2], pf[CPW][2], rbh[CPW][2];
#pragma unroll
  for (int i = 0; i < CPW; ++i) {
    const int c = warp + kWarps * i;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int j = c * 8 + 2 * qc + e;
      const bool ok = c < NC;
      pi[i][e] = ok && p.peep ? p.peep[j] : 0.0f;
      po[i][e] = ok && p.peep ? p.peep[H + j] : 0.0f;
      pf[i][e] = ok && p.peep ? p.peep[2 * H + j] : 0.0f;
      rbh[i][e] = ok && p.rbh ? p.rbh[j] : 0.0f;
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

  // acc[m][i][g] += A(rows of a_src) · Rᵀ(gate g, chunk i) for g in [G0, G1).
  auto mma_pass = [&](const T16* a_src, auto g0c, auto g1c, float (&acc)[MT][CPW][G][4]) {
    constexpr int G0 = decltype(g0c)::value, G1 = decltype(g1c)::value;
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < CPW; ++i)
#pragma unroll
        for (int g = G0; g < G1; ++g)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[m][i][g][e] = 0.0f;
    for (int kt = 0; kt < KT; ++kt) {
      uint32_t a[MT][4];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const T16* base = a_src + (m * 16 + qr) * HS + kt * 16 + 2 * qc;
        a[m][0] = *reinterpret_cast<const uint32_t*>(base);
        a[m][1] = *reinterpret_cast<const uint32_t*>(base + 8 * HS);
        a[m][2] = *reinterpret_cast<const uint32_t*>(base + 8);
        a[m][3] = *reinterpret_cast<const uint32_t*>(base + 8 * HS + 8);
      }
#pragma unroll
      for (int i = 0; i < CPW; ++i) {
        const int c = warp + kWarps * i;
        if (c >= NC) continue;
#pragma unroll
        for (int g = G0; g < G1; ++g) {
          const uint2 bf = rs[((size_t(g) * NC + c) * KT + kt) * 32 + lane];
#pragma unroll
          for (int m = 0; m < MT; ++m) mma16816<T16>(acc[m][i][g], a[m], bf.x, bf.y);
        }
      }
    }
  };

  const size_t gstride = size_t(G) * H;
  int cur = 0;
  for (int t = 0; t < T; ++t) {
    const T16* hc = hb + cur * ROWS * HS;
    T16* hn = hb + (1 - cur) * ROWS * HS;
    // x·Wᵀ + bias of this step, issued before the mma loop so that its latency overlaps it.
    float2 gx[MT][CPW][G][2];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int b = row_base + m * 16 + qr + 8 * hh;
        const float* src = p.gx + (size_t(t) * B + b) * gstride + 2 * qc;
#pragma unroll
        for (int i = 0; i < CPW; ++i) {
          const int c = warp + kWarps * i;
#pragma unroll
          for (int g = 0; g < G; ++g)
            gx[m][i][g][hh] = (b < B && c < NC) ? __ldg(reinterpret_cast<const float2*>(src + size_t(g) * H + c * 8))
                                                : make_float2(0.0f, 0.0f);
        }
      }
    float acc[MT][CPW][G][4];
    float hnew[MT][CPW][4];
    if constexpr (G == 4) {
      mma_pass(hc, std::integral_constant<int, 0>{}, std::integral_constant<int, 4>{}, acc);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int hh = e / 2, ee = e % 2;
            auto gv = [&](int g) { return (ee ? gx[m][i][g][hh].y : gx[m][i][g][hh].x) + acc[m][i][g][e]; };
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
      mma_pass(hc, std::integral_constant<int, 0>{}, std::integral_constant<int, 3>{}, acc);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int hh = e / 2, ee = e % 2;
            auto gxv = [&](int g) { return ee ? gx[m][i][g][hh].y : gx[m][i][g][hh].x; };
            const float z = sig_fast(gxv(0) + acc[m][i][0][e]);
            const float r = sig_fast(gxv(1) + acc[m][i][1][e]);
            const float n = tanh_fast(gxv(2) + r * (acc[m][i][2][e] + rbh[i][ee]));
            hnew[m][i][e] = n + z * (hreg[m][i][e] - n);
          }
    } else {
      mma_pass(hc, std::integral_constant<int, 0>{}, std::integral_constant<int, 2>{}, acc);
      float zs[MT][CPW][4];
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i) {
          const int c = warp + kWarps * i;
          float rhv[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int hh = e / 2, ee = e % 2;
            auto gxv = [&](int g) { return ee ? gx[m][i][g][hh].y : gx[m][i][g][hh].x; };
            zs[m][i][e] = sig_fast(gxv(0) + acc[m][i][0][e]);
            rhv[e] = sig_fast(gxv(1) + acc[m][i][1][e]) * hreg[m][i][e];
          }
          if (c < NC) {
            T16* d = rh + (m * 16 + qr) * HS + c * 8 + 2 * qc;
            *reinterpret_cast<uint32_t*>(d) = pack2<T16>(rhv[0], rhv[1]);
            *reinterpret_cast<uint32_t*>(d + 8 * HS) = pack2<T16>(rhv[2], rhv[3]);
          }
        }
      __syncthreads();  // r ⊙ h of every unit is in rh
      mma_pass(rh, std::integral_constant<int, 2>{}, std::integral_constant<int, 3>{}, acc);
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < CPW; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int hh = e / 2, ee = e % 2;
            const float n = tanh_fast((ee ? gx[m][i][2][hh].y : gx[m][i][2][hh].x) + acc[m][i][2][e]);
            hnew[m][i][e] = n + zs[m][i][e] * (hreg[m][i][e] - n);
          }
    }
    // Keep h where the row's sequence has ended; h to the other buffer and Y.
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < CPW; ++i) {
        const int c = warp + kWarps * i;
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
    __syncthreads();
    cur = 1 - cur;
  }
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < CPW; ++i) {
      const int c = warp + kWarps * i;
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

size_t mma_smem_bytes(int G, bool lbr0, int mt, int H) {
  const int nc = H / 8, kt = (H + 15) / 16, hs = kt * 16 + 8;
  return size_t(G) * nc * kt * 32 * 8 + size_t(lbr0 ? 3 : 2) * 16 * mt * hs * 2;
}

struct MmaDevice {
  int sms = 0;
  int smem_optin = 0;
  Status status;
};

template <int G, bool LBR0, int MT, typename T16>
Status mma_set_smem(int bytes) {
  TS_CUDA(cudaFuncSetAttribute(rnn_mma_kernel<G, LBR0, MT, T16>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  return Status::ok();
}

template <typename T16>
Status mma_set_smem_all(int b) {
  TS_RETURN_IF_ERROR((mma_set_smem<3, false, 1, T16>(b)));
  TS_RETURN_IF_ERROR((mma_set_smem<3, false, 2, T16>(b)));
  TS_RETURN_IF_ERROR((mma_set_smem<3, true, 1, T16>(b)));
  TS_RETURN_IF_ERROR((mma_set_smem<3, true, 2, T16>(b)));
  TS_RETURN_IF_ERROR((mma_set_smem<4, false, 1, T16>(b)));
  return mma_set_smem<4, false, 2, T16>(b);
}

// Once per process (mma_device): the device's SM count and shared-memory limit, the kernels' limits set.
Status mma_device_setup(MmaDevice& r) {
  int dev = 0;
  TS_CUDA(cudaGetDevice(&dev));
  TS_CUDA(cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, dev));
  TS_CUDA(cudaDeviceGetAttribute(&r.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  TS_RETURN_IF_ERROR(mma_set_smem_all<__half>(r.smem_optin));
  return mma_set_smem_all<__nv_bfloat16>(r.smem_optin);
}

const MmaDevice& mma_device() {
  static const MmaDevice d = [] {
    MmaDevice r;
    Status s = mma_device_setup(r);
    return MmaDevice{r.sms, r.smem_optin, std::move(s)};
  }();
  return d;
}

template <int G, bool LBR0, int MT, typename T16>
Status launch_mt(const RnnStepParams& p, int grid, size_t smem, cudaStream_t s) {
  rnn_mma_kernel<G, LBR0, MT, T16><<<grid, kThreads, smem, s>>>(p);
  TS_CUDA_LAUNCHED("rnn recurrence (mma)");
  return Status::ok();
}

template <typename T16>
Status launch_typed(const RnnStepParams& p, int mt, int grid, size_t smem, cudaStream_t s) {
  if (p.lstm) return mt == 1 ? launch_mt<4, false, 1, T16>(p, grid, smem, s) : launch_mt<4, false, 2, T16>(p, grid, smem, s);
  if (!p.lbr) return mt == 1 ? launch_mt<3, true, 1, T16>(p, grid, smem, s) : launch_mt<3, true, 2, T16>(p, grid, smem, s);
  return mt == 1 ? launch_mt<3, false, 1, T16>(p, grid, smem, s) : launch_mt<3, false, 2, T16>(p, grid, smem, s);
}

}  // namespace

bool rnn_mma_packable(int hidden, bool half_or_bf16) {
  return half_or_bf16 && hidden >= 8 && hidden <= kRnnMmaMaxHidden && hidden % 8 == 0;
}

bool rnn_mma_supported(const RnnStepParams& p) {
  if (!p.r_mma || !rnn_mma_packable(p.hidden, p.r_half || p.r_bf16)) return false;
  const MmaDevice& d = mma_device();
  if (!d.status) return false;
  return mma_smem_bytes(p.lstm ? 4 : 3, !p.lstm && !p.lbr, 2, p.hidden) <= size_t(d.smem_optin);
}

std::vector<uint32_t> rnn_mma_pack(const float* r, int gates, int hidden, bool bf16) {
  const int H = hidden, nc = H / 8, kt_n = (H + 15) / 16;
  auto to16 = [&](float v) -> uint32_t {
    if (bf16) {
      __nv_bfloat16 x = __float2bfloat16_rn(v);
      return *reinterpret_cast<uint16_t*>(&x);
    }
    __half x = __float2half_rn(v);
    return *reinterpret_cast<uint16_t*>(&x);
  };
  // B[k][n = (g, j)] = R[g·H + j][k]; zero for k ≥ H. Fragment registers (mma m16n8k16 .col B):
  // b0 = B[2·(lane%4) + {0,1}][lane/4], b1 = the same at k + 8; the lower k in the low half.
  auto at = [&](int g, int j, int k) { return k < H ? to16(r[(size_t(g) * H + j) * H + k]) : to16(0.0f); };
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
  const int G = p.lstm ? 4 : 3;
  const bool lbr0 = !p.lstm && !p.lbr;
  // MT = 1 when every 16-row CTA is resident at once (CTAs per SM from the occupancy API).
  int per_sm = 0;
  const size_t smem1 = mma_smem_bytes(G, lbr0, 1, p.hidden);
  cudaError_t e = p.r_bf16 ? (p.lstm    ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<4, false, 1, __nv_bfloat16>, kThreads, smem1)
                              : lbr0    ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<3, true, 1, __nv_bfloat16>, kThreads, smem1)
                                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<3, false, 1, __nv_bfloat16>, kThreads, smem1))
                           : (p.lstm    ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<4, false, 1, __half>, kThreads, smem1)
                              : lbr0    ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<3, true, 1, __half>, kThreads, smem1)
                                        : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rnn_mma_kernel<3, false, 1, __half>, kThreads, smem1));
  if (e != cudaSuccess) return cuda_error(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor (rnn mma)");
  const int mt = (p.batch + 15) / 16 <= std::max(1, per_sm) * d.sms ? 1 : 2;
  const int grid = (p.batch + 16 * mt - 1) / (16 * mt);
  const size_t smem = mma_smem_bytes(G, lbr0, mt, p.hidden);
  if (p.r_bf16) return launch_typed<__nv_bfloat16>(p, mt, grid, smem, stream);
  return launch_typed<__half>(p, mt, grid, smem, stream);
}

}  // namespace ts::engine::cuda
