// The GRU/LSTM recurrence as one persistent kernel: each CTA owns a tile of batch rows for all
// T steps, with Rᵀ ([k][gate][unit], float or half) copied once into shared memory and h kept
// in shared memory between steps; x·Wᵀ + bias for all steps was computed before by one GEMM.
//
// Thread layout: threadIdx.x = hidden unit j (H rounded up to 32), threadIdx.y = k-slice (the
// h·Rᵀ dot product split KS ways, partial sums reduced through shared memory), threadIdx.z =
// row group of RB rows. The thread (j, slice 0) of a row group owns unit j of its rows: it
// does the gate math in registers (LSTM c stays in a register for all T steps) and writes h
// and y. One __syncthreads per step (three for GRU linear_before_reset=0, whose candidate gate
// needs r ⊙ h first, and two more when KS > 1).
//
// PERF NOTE: launch configuration.
//  - batch ≤ 2 × SMs: one row per CTA, KS = 4 (512 threads at H=128). Latency-bound: a step
//    is ~96 FMAs + 96 shared loads per thread plus the reduction and gate math.
//  - larger batches: 4 rows per CTA (each R element read from shared memory once per step
//    serves 4 rows), KS as large as shared memory allows. 8 rows spilled registers (ptxas:
//    ~110-160 bytes of stack at 128 registers) and were slower at large batches (first GPU run).
//  R in registers for small batches is tactic "regs_b1" (cuda_rnn_regs.cu), tensor-core
//  tiles for FP16/BF16 tactic "mma" (cuda_rnn_mma.cu), the two layers of a stack as one
//  wavefront GRUStack / LSTMStack (cuda_rnn_wave.cu, cuda_lstm_wave.cu). Numbers: docs/performance.md,
//  history rows "before e3c6d46" and e3c6d46 (bench/results/engine-cuda-h200-20261130.json).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "engine/backends/cuda/cuda_rnn.h"
#include "engine/backends/cuda/cuda_rnn_cluster.h"
#include "engine/backends/cuda/cuda_rnn_math.cuh"
#include "engine/device_share.h"

namespace ts::engine::cuda {
namespace {

constexpr int kMaxThreads = 512;        // 4 rows per CTA (≤ 128 registers per thread)
constexpr int kMaxThreadsRow1 = 1024;   // 1 row per CTA (≤ 64 registers per thread)

using rnn_math::load_pair;
using rnn_math::sigm;

template <int G, int RB, typename RT>
__global__ void __launch_bounds__(RB == 1 ? kMaxThreadsRow1 : kMaxThreads) rnn_kernel(RnnStepParams p, int r_in_smem) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int H = p.hidden, B = p.batch, T = p.t_len;
  const int NU = blockDim.x, KS = blockDim.y, RG = blockDim.z;
  const int j = threadIdx.x, ks = threadIdx.y, rg = threadIdx.z;
  const int RBT = RG * RB;
  const int tid = threadIdx.x + NU * (threadIdx.y + KS * threadIdx.z);
  const int nthreads = NU * KS * RG;
  const bool gru_lbr0 = !p.lstm && !p.lbr;
  const int Hp = (H + 1) & ~1;  // k padded to pairs; also the row stride of h in shared memory

  size_t off = 0;
  const RT* R = static_cast<const RT*>(p.r);
  if (r_in_smem) {
    // PERF NOTE: 16-byte loads, 8 in flight per thread before the first store. The plain
    // element loop can wait out one global-load latency per element (the compiler cannot batch
    // loads across stores it cannot prove disjoint). Measured faster at GRU-2x128 batch 1
    // (docs/performance.md, history row "before e3c6d46").
    RT* rs = reinterpret_cast<RT*>(smem);
    const size_t n = size_t(Hp) * G * H;
    const size_t n16 = n * sizeof(RT) / 16;
    const float4* src = static_cast<const float4*>(p.r);
    float4* dst = reinterpret_cast<float4*>(smem);
    constexpr int kU = 8;
    for (size_t base = tid; base < n16; base += size_t(nthreads) * kU) {
      float4 v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        size_t i = base + size_t(u) * nthreads;
        if (i < n16) v[u] = __ldg(src + i);
      }
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        size_t i = base + size_t(u) * nthreads;
        if (i < n16) dst[i] = v[u];
      }
    }
    for (size_t i = n16 * 16 / sizeof(RT) + tid; i < n; i += nthreads) rs[i] = R[i];
    R = rs;
    off = (n * sizeof(RT) + 15) & ~size_t(15);
  }
  float* hbuf = reinterpret_cast<float*>(smem + off);  // [2][RBT][Hp]
  off += size_t(2) * RBT * Hp * sizeof(float);
  float* part = reinterpret_cast<float*>(smem + off);  // [KS][RBT][G][NU] when KS > 1
  if (KS > 1) off += size_t(KS) * RBT * G * NU * sizeof(float);
  float* rhb = reinterpret_cast<float*>(smem + off);   // [RBT][Hp]: r ⊙ h (GRU lbr=0)

  const int row_base = blockIdx.x * RBT;
  for (int i = tid; i < RBT * Hp; i += nthreads) {
    int b = row_base + i / Hp, k = i % Hp;
    hbuf[i] = (b < B && p.h0 && k < H) ? p.h0[size_t(b) * H + k] : 0.0f;
    hbuf[RBT * Hp + i] = 0.0f;
    if (gru_lbr0) rhb[i] = 0.0f;
  }
  const bool owner = ks == 0 && j < H;
  float creg[RB];
  int len[RB];
#pragma unroll
  for (int r = 0; r < RB; ++r) {
    int b = row_base + rg * RB + r;
    creg[r] = (owner && b < B && p.c0) ? p.c0[size_t(b) * H + j] : 0.0f;
    int l = T;
    if (b < B && p.lens) l = p.lens_i64 ? int(static_cast<const int64_t*>(p.lens)[b]) : static_cast<const int*>(p.lens)[b];
    len[r] = l;
  }
  __syncthreads();

  const int kc = ((Hp / 2 + KS - 1) / KS) * 2;  // k-slices of whole pairs
  const int k0 = min(Hp, ks * kc), k1 = min(Hp, k0 + kc);
  const float rbh = (owner && p.rbh) ? p.rbh[j] : 0.0f;
  float pi = 0.0f, po = 0.0f, pf = 0.0f;
  if (owner && p.peep) {
    pi = p.peep[j];
    po = p.peep[H + j];
    pf = p.peep[2 * H + j];
  }

  // acc[g][r] over gates [g0, g1) of h·Rᵀ for this thread's k-slice, then summed over slices
  // into slice 0's registers.
  auto dot = [&](const float* hin, int g0, int g1, float (&acc)[G][RB]) {
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int r = 0; r < RB; ++r) acc[g][r] = 0.0f;
    if (j < H) {
      // PERF NOTE: Rᵀ is stored as pairs of consecutive k per (gate, unit): one 8-byte (fp32)
      // or 4-byte (fp16) shared load per pair, so a warp's fp16 load moves 128 bytes like an
      // fp32 one instead of 64; h pairs are one 8-byte broadcast load.
      // PERF NOTE: pointers step through the loop (no 64-bit index arithmetic per load; the
      // first version recomputed (k·G + g)·H + j in size_t for every load). With the pair
      // layout both were measured faster at GRU-2x128 batch 1, FP32 and FP16 (docs/performance.md,
      // history row "before e3c6d46").
      const int gstride = G * H;             // pairs from one k pair to the next
      const RT* rp = R + (size_t(k0 / 2) * gstride + j) * 2;
      const float2* hrow = reinterpret_cast<const float2*>(hin + rg * RB * Hp) + k0 / 2;
      const int hrow_stride = Hp / 2;        // float2s from one row to the next
      const int npairs = (k1 - k0) / 2;
#pragma unroll 4
      for (int q = 0; q < npairs; ++q) {
        float2 w[G];
#pragma unroll
        for (int g = 0; g < G; ++g) w[g] = (g >= g0 && g < g1) ? load_pair(rp, size_t(g) * H) : make_float2(0.0f, 0.0f);
#pragma unroll
        for (int r = 0; r < RB; ++r) {
          float2 hv = hrow[r * hrow_stride + q];
#pragma unroll
          for (int g = 0; g < G; ++g) acc[g][r] = fmaf(w[g].y, hv.y, fmaf(w[g].x, hv.x, acc[g][r]));
        }
        rp += size_t(gstride) * 2;
      }
    }
    if (KS > 1) {
      if (j < H) {
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int r = 0; r < RB; ++r)
            if (g >= g0 && g < g1) part[((size_t(ks) * RBT + rg * RB + r) * G + g) * NU + j] = acc[g][r];
      }
      __syncthreads();
      if (owner) {
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int r = 0; r < RB; ++r) {
            if (g < g0 || g >= g1) continue;
            float s = 0.0f;
            for (int q = 0; q < KS; ++q) s += part[((size_t(q) * RBT + rg * RB + r) * G + g) * NU + j];
            acc[g][r] = s;
          }
      }
    }
  };

  int cur = 0;
  for (int t = 0; t < T; ++t) {
    float* hc = hbuf + size_t(cur) * RBT * Hp;
    float* hn = hbuf + size_t(1 - cur) * RBT * Hp;
    float gxv[G][RB];
    if (owner) {
#pragma unroll
      for (int r = 0; r < RB; ++r) {
        int b = row_base + rg * RB + r;
#pragma unroll
        for (int g = 0; g < G; ++g) gxv[g][r] = b < B ? p.gx[(size_t(t) * B + b) * G * H + size_t(g) * H + j] : 0.0f;
      }
    }
    float acc[G][RB];
    dot(hc, 0, gru_lbr0 ? 2 : G, acc);
    float hnew[RB], zsave[RB];
    if (owner) {
#pragma unroll
      for (int r = 0; r < RB; ++r) {
        const float hp = hc[(rg * RB + r) * Hp + j];
        if (p.lstm) {
          float c = creg[r];
          float ig = sigm(gxv[0][r] + acc[0][r] + pi * c);
          float fg = sigm(gxv[2 % G][r] + acc[2 % G][r] + pf * c);
          float cc = tanhf(gxv[3 % G][r] + acc[3 % G][r]);
          float cn = fg * c + ig * cc;
          float og = sigm(gxv[1][r] + acc[1][r] + po * cn);
          hnew[r] = og * tanhf(cn);
          if (t < len[r]) creg[r] = cn;
        } else if (p.lbr) {
          float z = sigm(gxv[0][r] + acc[0][r]);
          float rr = sigm(gxv[1][r] + acc[1][r]);
          float n = tanhf(gxv[2 % G][r] + rr * (acc[2 % G][r] + rbh));
          hnew[r] = n + z * (hp - n);
        } else {
          zsave[r] = sigm(gxv[0][r] + acc[0][r]);
          float rr = sigm(gxv[1][r] + acc[1][r]);
          rhb[(rg * RB + r) * Hp + j] = rr * hp;
        }
      }
    }
    if (gru_lbr0) {
      __syncthreads();  // r ⊙ h of every unit is in rhb
      dot(rhb, 2, 3, acc);
      if (owner) {
#pragma unroll
        for (int r = 0; r < RB; ++r) {
          const float hp = hc[(rg * RB + r) * Hp + j];
          float n = tanhf(gxv[2 % G][r] + acc[2 % G][r]);
          hnew[r] = n + zsave[r] * (hp - n);
        }
      }
    }
    if (owner) {
#pragma unroll
      for (int r = 0; r < RB; ++r) {
        int b = row_base + rg * RB + r;
        const float hp = hc[(rg * RB + r) * Hp + j];
        bool valid = t < len[r];
        hn[(rg * RB + r) * Hp + j] = b < B ? (valid ? hnew[r] : hp) : 0.0f;
        if (b < B && p.y) p.y[(size_t(t) * B + b) * H + j] = valid ? hnew[r] : 0.0f;
      }
    }
    __syncthreads();
    cur = 1 - cur;
  }
  if (owner) {
    const float* hf = hbuf + size_t(cur) * RBT * Hp;
#pragma unroll
    for (int r = 0; r < RB; ++r) {
      int b = row_base + rg * RB + r;
      if (b >= B) continue;
      if (p.yh) p.yh[size_t(b) * H + j] = hf[(rg * RB + r) * Hp + j];
      if (p.yc) p.yc[size_t(b) * H + j] = creg[r];
    }
  }
}

struct DeviceInfo {
  int sms = 0;
  int smem_optin = 0;
  cudaError_t error = cudaSuccess;
};

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    int dev = 0;
    d.error = cudaGetDevice(&dev);
    if (d.error == cudaSuccess) d.error = cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev);
    if (d.error == cudaSuccess) d.error = cudaDeviceGetAttribute(&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    return d;
  }();
  return info;
}

template <int G, int RB, typename RT>
Status set_smem_limit(int bytes) {
  TS_CUDA(cudaFuncSetAttribute(rnn_kernel<G, RB, RT>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  return Status::ok();
}

template <int G, int RB>
Status launch_typed(const RnnStepParams& p, dim3 block, int grid, size_t smem, int r_in_smem, cudaStream_t s) {
  if (p.r_half) rnn_kernel<G, RB, __half><<<grid, block, smem, s>>>(p, r_in_smem);
  else if (p.r_bf16) rnn_kernel<G, RB, __nv_bfloat16><<<grid, block, smem, s>>>(p, r_in_smem);
  else rnn_kernel<G, RB, float><<<grid, block, smem, s>>>(p, r_in_smem);
  TS_CUDA_LAUNCHED("rnn recurrence");
  return Status::ok();
}

}  // namespace

Status rnn_prepare_device() {
  // Once per process; every later call returns the first result.
  static const Status result = []() -> Status {
    const DeviceInfo& d = device_info();
    if (d.error != cudaSuccess) return cuda_error(d.error, "cudaDeviceGetAttribute");
    const int b = d.smem_optin;
    TS_RETURN_IF_ERROR((set_smem_limit<3, 1, float>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<3, 1, __half>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<3, 4, float>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<3, 4, __half>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<4, 1, float>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<4, 1, __half>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<4, 4, float>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<3, 1, __nv_bfloat16>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<3, 4, __nv_bfloat16>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<4, 1, __nv_bfloat16>(b)));
    TS_RETURN_IF_ERROR((set_smem_limit<4, 4, __nv_bfloat16>(b)));
    return set_smem_limit<4, 4, __half>(b);
  }();
  return result;
}

bool rnn_regs_preferred(const RnnStepParams& p) {
  // One row per SM: with n contexts sharing the device (a server's workers) each plans for
  // SMs / n, so that their batches run side by side on the tensor-core tiles instead of queuing
  // for the whole device (engine/device_share.h).
  const DeviceInfo& d = device_info();
  return d.error == cudaSuccess && rnn_regs_supported(p, std::max(1, d.sms / device_contexts_for_this_thread()));
}

Status launch_rnn_recurrence(const RnnStepParams& p, cudaStream_t stream) {
  TS_RETURN_IF_ERROR(rnn_prepare_device());
  if (p.t_len == 0 || p.batch == 0) return Status::ok();
  const DeviceInfo& d = device_info();
  const int H = p.hidden, G = p.lstm ? 4 : 3;
  const int nu = (H + 31) / 32 * 32;
  if (nu > kMaxThreads) {
    return Status(StatusCode::kUnsupported, "hidden size " + std::to_string(H) + " is above the cuda backend's 512");
  }
  if (p.cluster > 0 && rnn_cluster_runnable(p)) return launch_rnn_cluster(p, stream);
  if (p.regs && rnn_regs_supported(p, d.sms)) return launch_rnn_regs(p, stream);
  if ((p.mma || p.regs) && rnn_mma_supported(p)) return launch_rnn_mma(p, stream);
  const int rb = (!p.rows1 && !p.regs && p.batch > 2 * d.sms) ? 4 : 1;
  const int hp = (H + 1) & ~1;
  const size_t r_bytes = (size_t(hp) * G * H * (p.r_half || p.r_bf16 ? 2 : 4) + 15) & ~size_t(15);
  auto smem_for = [&](int ks, bool with_r) {
    size_t b = size_t(2) * rb * hp * 4;
    if (ks > 1) b += size_t(ks) * rb * G * nu * 4;
    if (!p.lstm && !p.lbr) b += size_t(rb) * hp * 4;
    return with_r ? b + r_bytes : b;
  };
  const int max_threads = rb == 1 ? kMaxThreadsRow1 : kMaxThreads;
  const int ks_cap = std::max(1, p.max_ks);
  int ks = std::max(1, std::min(ks_cap, max_threads / nu));
  bool with_r = true;
  while (ks > 1 && smem_for(ks, true) > size_t(d.smem_optin)) ks /= 2;
  if (smem_for(ks, true) > size_t(d.smem_optin)) {
    // R does not fit (LSTM fp32 at H=128 is 256 KB): read it through L1/L2, split k widely.
    with_r = false;
    ks = std::max(1, std::min(ks_cap, max_threads / nu));
    while (ks > 1 && smem_for(ks, false) > size_t(d.smem_optin)) ks /= 2;
    if (smem_for(ks, false) > size_t(d.smem_optin)) {
      return Status(StatusCode::kUnsupported, "hidden size " + std::to_string(H) + " needs more shared memory than this GPU has");
    }
  }
  const size_t smem = smem_for(ks, with_r);
  const int grid = (p.batch + rb - 1) / rb;
  dim3 block(unsigned(nu), unsigned(ks), 1);
  if (G == 3) return rb == 4 ? launch_typed<3, 4>(p, block, grid, smem, with_r, stream)
                             : launch_typed<3, 1>(p, block, grid, smem, with_r, stream);
  return rb == 4 ? launch_typed<4, 4>(p, block, grid, smem, with_r, stream)
                 : launch_typed<4, 1>(p, block, grid, smem, with_r, stream);
}

}  // namespace ts::engine::cuda
