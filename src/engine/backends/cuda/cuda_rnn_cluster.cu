// The GRU/LSTM recurrence split by hidden unit over the CTAs of a thread-block cluster (contract
// in cuda_rnn_cluster.h).
//
// Layout: cluster k serves batch rows [k·RB, k·RB + RB); its CTA of rank c owns hidden units
// [c·U, c·U + U). Each warp owns units warp, warp + W, ... (W warps). For one unit the 32 lanes
// split the k pairs of h·Rᵀ (lane l: pairs l, l + 32, ...; the slice is [unit][gate][k pair] so
// the lanes read consecutive 4- or 8-byte words), then a butterfly of shuffles leaves every
// gate's sum in every lane; lane r does the gate math of row r and the lanes < C store the row's
// new h into CTA c's h buffer (distributed shared memory). One cluster barrier per step orders
// those stores before the next step's reads; h is double-buffered, so the barrier of step t also
// tells every CTA that the others have finished reading the buffer it writes at step t + 1.
//
// PERF NOTE: the one-CTA persistent kernel at H=379 (GRU-2x379, FP16) streams the 864 KB of R
// from L2 every step: 2.1 ms at batch 1 against cuDNN's 0.44 ms (issue 26,
// bench/results/shape-sweep-h200-20261202-1917-eng4.json). Here each CTA reads its slice
// (55 KB at C = 16, the size the builder chose) from shared memory: 319 us at batch 1, 2.6 us a
// step for the 120 steps of both layers (shape-sweep-h200-20261202-2205-rnn6.json); what that
// step is spent on was not profiled.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "engine/backends/cuda/cuda_rnn_cluster.h"
#include "engine/backends/cuda/cuda_rnn_math.cuh"

namespace ts::engine::cuda {
namespace {

// Device-only pieces exist only where the kernel does (sm_90): no unused warnings from other passes.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr int kMaxUnitsPerWarp = kRnnClusterMaxUnits / 32;

using rnn_math::load_pair;
using rnn_math::sigm;
#endif

template <int G, int RB, typename RT>
__global__ void __launch_bounds__(1024, 1) rnn_cluster_kernel(RnnStepParams p, int units, int r_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem[];
  const int H = p.hidden, B = p.batch, T = p.t_len;
  const int C = int(cluster.num_blocks()), rank = int(cluster.block_rank());
  const int hp2 = (H + 1) / 2, hp = 2 * hp2;  // k pairs; h row stride in floats
  const int u0 = rank * units, uc = max(0, min(units, H - u0));
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, nwarps = int(blockDim.x) / 32;
  const int row0 = int(blockIdx.x) / C * RB;

  {  // this CTA's slice of Rᵀ into shared memory, 16 bytes a load
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const uint8_t*>(p.r_cluster) + size_t(rank) * r_bytes);
    uint4* dst = reinterpret_cast<uint4*>(smem);
    for (int i = int(threadIdx.x); i < r_bytes / 16; i += int(blockDim.x)) dst[i] = __ldg(src + i);
  }
  const RT* R = reinterpret_cast<const RT*>(smem);
  float* hbuf = reinterpret_cast<float*>(smem + r_bytes);  // [2][RB][hp]
  float* cbuf = hbuf + 2 * RB * hp;                        // LSTM [RB][units]: c of this CTA's units
  for (int i = int(threadIdx.x); i < RB * hp; i += int(blockDim.x)) {
    const int r = i / hp, k = i % hp, b = row0 + r;
    hbuf[i] = (b < B && p.h0 && k < H) ? p.h0[size_t(b) * H + k] : 0.0f;
    hbuf[RB * hp + i] = 0.0f;
  }
  if (p.lstm) {
    for (int i = int(threadIdx.x); i < RB * units; i += int(blockDim.x)) {
      const int r = i / units, j = i % units, b = row0 + r;
      cbuf[i] = (b < B && p.c0 && j < uc) ? p.c0[size_t(b) * H + u0 + j] : 0.0f;
    }
  }
  // Every CTA's buffers are initialised before any peer stores into them.
  cluster.sync();

  // Lane r < RB holds row r's x·Wᵀ + b of each of the warp's units, one step ahead.
  const int my_b = row0 + (lane < RB ? lane : 0);
  const bool my_row = lane < RB && my_b < B;
  float gx_next[kMaxUnitsPerWarp][G];
  auto load_gx = [&](int t) {
#pragma unroll
    for (int q = 0; q < kMaxUnitsPerWarp; ++q) {
      const int j = warp + q * nwarps;
#pragma unroll
      for (int g = 0; g < G; ++g)
        gx_next[q][g] = (my_row && j < uc && t < T) ? p.gx[(size_t(t) * B + my_b) * G * H + size_t(g) * H + u0 + j] : 0.0f;
    }
  };
  load_gx(0);
  // The warp's units' recurrent bias (GRU) and peepholes (LSTM), off the step's path.
  float rbh[kMaxUnitsPerWarp], peep[kMaxUnitsPerWarp][3];
#pragma unroll
  for (int q = 0; q < kMaxUnitsPerWarp; ++q) {
    const int j = warp + q * nwarps, u = u0 + j;
    rbh[q] = (j < uc && p.rbh) ? p.rbh[u] : 0.0f;
#pragma unroll
    for (int e = 0; e < 3; ++e) peep[q][e] = (j < uc && p.peep) ? p.peep[e * H + u] : 0.0f;
  }

  int cur = 0;
  for (int t = 0; t < T; ++t) {
    const float* hc = hbuf + cur * RB * hp;
    float* peer_hn = cluster.map_shared_rank(hbuf + (1 - cur) * RB * hp, lane < C ? lane : 0);
    float gx[kMaxUnitsPerWarp][G], hy[kMaxUnitsPerWarp] = {};
#pragma unroll
    for (int q = 0; q < kMaxUnitsPerWarp; ++q)
#pragma unroll
      for (int g = 0; g < G; ++g) gx[q][g] = gx_next[q][g];
#pragma unroll
    for (int q = 0; q < kMaxUnitsPerWarp; ++q) {
      const int j = warp + q * nwarps;
      if (j >= uc) break;  // uniform across the warp
      const int u = u0 + j;
      float acc[G][RB];
#pragma unroll
      for (int g = 0; g < G; ++g)
#pragma unroll
        for (int r = 0; r < RB; ++r) acc[g][r] = 0.0f;
      const RT* rj = R + size_t(j) * G * hp;  // this unit's [gate][k pair][2]
#pragma unroll 2
      for (int kq = lane; kq < hp2; kq += 32) {
        float2 w[G];
#pragma unroll
        for (int g = 0; g < G; ++g) w[g] = load_pair(rj, size_t(g) * hp2 + kq);
#pragma unroll
        for (int r = 0; r < RB; ++r) {
          const float2 hv = reinterpret_cast<const float2*>(hc + r * hp)[kq];
#pragma unroll
          for (int g = 0; g < G; ++g) acc[g][r] = fmaf(w[g].y, hv.y, fmaf(w[g].x, hv.x, acc[g][r]));
        }
      }
#pragma unroll
      for (int g = 0; g < G; ++g)
#pragma unroll
        for (int r = 0; r < RB; ++r)
#pragma unroll
          for (int off = 16; off > 0; off >>= 1) acc[g][r] += __shfl_xor_sync(0xffffffffu, acc[g][r], off);
      // Row `lane`'s sums (selects, not a dynamically indexed array).
      float a[G];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        a[g] = acc[g][0];
#pragma unroll
        for (int r = 1; r < RB; ++r) a[g] = lane == r ? acc[g][r] : a[g];
      }
      const int my_r = lane < RB ? lane : 0;
      const float hprev = hc[my_r * hp + u];
      float hnew;
      if (p.lstm) {
        float* cp = cbuf + my_r * units + j;
        const float c = *cp;
        const float pi = peep[q][0], po = peep[q][1], pf = peep[q][2];
        const float ig = sigm(gx[q][0] + a[0] + pi * c);
        const float fg = sigm(gx[q][2 % G] + a[2 % G] + pf * c);
        const float cc = tanhf(gx[q][3 % G] + a[3 % G]);
        const float cn = fg * c + ig * cc;
        const float og = sigm(gx[q][1] + a[1] + po * cn);
        hnew = og * tanhf(cn);
        if (my_row) {
          *cp = cn;
          if (t + 1 == T && p.yc) p.yc[size_t(my_b) * H + u] = cn;
        }
      } else {
        const float z = sigm(gx[q][0] + a[0]);
        const float rr = sigm(gx[q][1] + a[1]);
        const float n = tanhf(gx[q][2 % G] + rr * (a[2 % G] + rbh[q]));
        hnew = n + z * (hprev - n);
      }
      hy[q] = hnew;
      // Every row's new h to every CTA of the cluster: lane c stores into CTA c.
#pragma unroll
      for (int r = 0; r < RB; ++r) {
        const float v = __shfl_sync(0xffffffffu, hnew, r);
        if (lane < C) peer_hn[r * hp + u] = row0 + r < B ? v : 0.0f;
      }
    }
    // The barrier split in arrive and wait: the release of the arrive orders this step's stores
    // of h before the peers' reads; Y's global stores and the next step's gate loads come after
    // it, off the arrive. PERF NOTE: measured no change against one cluster.sync() after them
    // (GRU-2x379 FP16 b1 315 -> 319 us, shape-sweep-h200-20261202-2153/2205-rnn6.json); kept,
    // as it is no slower and does not tie the release to global memory.
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    if (my_row) {
#pragma unroll
      for (int q = 0; q < kMaxUnitsPerWarp; ++q) {
        const int j = warp + q * nwarps;
        if (j >= uc) break;
        if (p.y) p.y[(size_t(t) * B + my_b) * H + u0 + j] = hy[q];
        if (t + 1 == T && p.yh) p.yh[size_t(my_b) * H + u0 + j] = hy[q];
      }
    }
    load_gx(t + 1);
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
    cur = 1 - cur;
  }
#endif
}

struct DeviceCaps {
  int major = 0;
  size_t smem_optin = 0;
};
const DeviceCaps& device_caps() {
  static const DeviceCaps caps = [] {
    DeviceCaps c;
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return c;
    if (cudaDeviceGetAttribute(&c.major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) c.major = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess) c.smem_optin = size_t(v);
    return c;
  }();
  return caps;
}

int elem_bytes(const RnnStepParams& p) { return p.r_half || p.r_bf16 ? 2 : 4; }

template <int G, int RB, typename RT>
cudaLaunchConfig_t config_for(const RnnStepParams& p, const RnnClusterShape& s, cudaStream_t stream,
                              cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg = {};
  const unsigned clusters = unsigned((p.batch + RB - 1) / RB);
  cfg.gridDim = dim3(clusters * unsigned(s.ctas));
  cfg.blockDim = dim3(unsigned(s.warps * 32));
  cfg.dynamicSmemBytes = s.smem_bytes;
  cfg.stream = stream;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(s.ctas);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cfg;
}

// The kernel's attributes (once per instantiation), then how many clusters of s are resident on
// the device at once (cached per shape; cudaOccupancyMaxActiveClusters: clusters are placed within
// a GPC, so 16-CTA clusters fit fewer times than SMs / 16); 0 where a query fails.
template <int G, int RB, typename RT>
int resident_typed(const RnnStepParams& p, const RnnClusterShape& s) {
  static const bool attrs_ok = [] {
    auto k = rnn_cluster_kernel<G, RB, RT>;
    return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(device_caps().smem_optin)) ==
               cudaSuccess &&
           cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
  }();
  if (!attrs_ok) return 0;
  static std::mutex mu;
  static std::map<std::tuple<int, int, size_t>, int> resident;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(s.ctas, s.warps, s.smem_bytes);
  auto it = resident.find(key);
  if (it != resident.end()) return it->second;
  cudaLaunchAttribute attr;
  RnnStepParams one = p;
  one.batch = RB;  // one cluster
  cudaLaunchConfig_t cfg = config_for<G, RB, RT>(one, s, nullptr, attr);
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, rnn_cluster_kernel<G, RB, RT>, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();  // a refused query is an answer, not a pending error
    n = 0;
  }
  resident[key] = std::max(0, n);
  return resident[key];
}

template <int G, int RB>
int resident_rows(const RnnStepParams& p, const RnnClusterShape& s) {
  if (p.r_half) return resident_typed<G, RB, __half>(p, s);
  if (p.r_bf16) return resident_typed<G, RB, __nv_bfloat16>(p, s);
  return resident_typed<G, RB, float>(p, s);
}

// Clusters resident at once for p at `rows` rows per cluster, with the shape in *s; 0 where the
// split does not fit or the device takes no such cluster.
int resident_clusters(const RnnStepParams& p, int rows, RnnClusterShape* s) {
  const int G = p.lstm ? 4 : 3;
  *s = rnn_cluster_shape(p.hidden, G, elem_bytes(p), p.cluster, rows, device_caps().smem_optin);
  if (s->ctas == 0) return 0;
  if (G == 3) return rows == 1 ? resident_rows<3, 1>(p, *s) : rows == 2 ? resident_rows<3, 2>(p, *s) : resident_rows<3, 4>(p, *s);
  return rows == 1 ? resident_rows<4, 1>(p, *s) : rows == 2 ? resident_rows<4, 2>(p, *s) : resident_rows<4, 4>(p, *s);
}

template <int G, int RB>
Status launch_rows(const RnnStepParams& p, const RnnClusterShape& s, cudaStream_t stream) {
  cudaLaunchAttribute attr;
  const int rb = int(s.r_bytes);
  if (p.r_half) {
    const cudaLaunchConfig_t cfg = config_for<G, RB, __half>(p, s, stream, attr);
    TS_CUDA(cudaLaunchKernelEx(&cfg, rnn_cluster_kernel<G, RB, __half>, p, s.units, rb));
  } else if (p.r_bf16) {
    const cudaLaunchConfig_t cfg = config_for<G, RB, __nv_bfloat16>(p, s, stream, attr);
    TS_CUDA(cudaLaunchKernelEx(&cfg, rnn_cluster_kernel<G, RB, __nv_bfloat16>, p, s.units, rb));
  } else {
    const cudaLaunchConfig_t cfg = config_for<G, RB, float>(p, s, stream, attr);
    TS_CUDA(cudaLaunchKernelEx(&cfg, rnn_cluster_kernel<G, RB, float>, p, s.units, rb));
  }
  return Status::ok();
}

// The shape and rows per cluster launch_rnn_cluster() uses for p (ctas 0: none runs): rows from
// the clusters resident at one row each (the CTAs are as many and as large at 2 or 4 rows, up to
// the h buffers).
RnnClusterShape shape_for(const RnnStepParams& p, int* rows) {
  RnnClusterShape s;
  const int resident = resident_clusters(p, 1, &s);
  if (resident == 0) return RnnClusterShape{};
  *rows = rnn_cluster_rows(p.batch, resident);
  if (*rows == 1) return s;
  return resident_clusters(p, *rows, &s) > 0 ? s : RnnClusterShape{};
}

}  // namespace

RnnClusterShape rnn_cluster_shape(int hidden, int gates, int elem_bytes, int ctas, int rows, size_t smem_limit_bytes) {
  RnnClusterShape s;
  if (hidden <= 0 || (ctas != 2 && ctas != 4 && ctas != 8 && ctas != 16) || rows < 1 || rows > kRnnClusterMaxRows) return s;
  const int units = (hidden + ctas - 1) / ctas;
  if (units > kRnnClusterMaxUnits) return s;
  const int hp2 = (hidden + 1) / 2;
  const int per_warp = (units + 31) / 32;
  s.units = units;
  s.warps = (units + per_warp - 1) / per_warp;
  s.r_bytes = (size_t(units) * gates * hp2 * 2 * elem_bytes + 15) & ~size_t(15);
  s.smem_bytes = s.r_bytes + size_t(2) * rows * hp2 * 2 * sizeof(float) + (gates == 4 ? size_t(rows) * units * sizeof(float) : 0);
  if (s.smem_bytes > smem_limit_bytes) return RnnClusterShape{};
  s.ctas = ctas;
  return s;
}

int rnn_cluster_rows(int batch, int resident_clusters) {
  for (int rows = 1; rows < kRnnClusterMaxRows; rows *= 2) {
    if ((batch + rows - 1) / rows <= resident_clusters) return rows;
  }
  return kRnnClusterMaxRows;
}

std::vector<uint8_t> rnn_cluster_pack(const float* r, int gates, int hidden, const RnnClusterShape& s, bool half, bool bf16) {
  const int eb = half || bf16 ? 2 : 4, hp2 = (hidden + 1) / 2;
  std::vector<uint8_t> out(size_t(s.ctas) * s.r_bytes, 0);
  for (int c = 0; c < s.ctas; ++c) {
    uint8_t* slice = out.data() + size_t(c) * s.r_bytes;
    for (int j = 0; j < s.units; ++j) {
      const int u = c * s.units + j;
      if (u >= hidden) break;
      for (int g = 0; g < gates; ++g)
        for (int k = 0; k < hidden; ++k) {
          const float v = r[(size_t(g) * hidden + u) * hidden + k];
          const size_t e = (size_t(j) * gates + g) * hp2 * 2 + size_t(k);  // [unit][gate][k pair][2]: pair k/2, half k%2
          if (half) {
            const __half h = __float2half_rn(v);
            std::memcpy(slice + e * eb, &h, 2);
          } else if (bf16) {
            const __nv_bfloat16 h = __float2bfloat16_rn(v);
            std::memcpy(slice + e * eb, &h, 2);
          } else {
            std::memcpy(slice + e * eb, &v, 4);
          }
        }
    }
  }
  return out;
}

size_t rnn_cluster_smem_limit() { return device_caps().smem_optin; }

bool rnn_cluster_runnable(const RnnStepParams& p) {
  if (p.cluster <= 0 || !p.r_cluster || p.lens || (!p.lstm && !p.lbr) || device_caps().major < 9) return false;
  int rows = 0;
  return shape_for(p, &rows).ctas > 0;
}

Status launch_rnn_cluster(const RnnStepParams& p, cudaStream_t stream) {
  if (p.t_len == 0 || p.batch == 0) return Status::ok();
  int rows = 0;
  const RnnClusterShape s = shape_for(p, &rows);
  if (s.ctas == 0) return Status(StatusCode::kInternal, "rnn cluster: hidden " + std::to_string(p.hidden) + " does not split over " + std::to_string(p.cluster) + " CTAs");
  const int G = p.lstm ? 4 : 3;
  if (G == 3) return rows == 1 ? launch_rows<3, 1>(p, s, stream) : rows == 2 ? launch_rows<3, 2>(p, s, stream) : launch_rows<3, 4>(p, s, stream);
  return rows == 1 ? launch_rows<4, 1>(p, s, stream) : rows == 2 ? launch_rows<4, 2>(p, s, stream) : launch_rows<4, 4>(p, s, stream);
}

}  // namespace ts::engine::cuda
