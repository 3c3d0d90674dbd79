// The FP32 stacked-RNN wavefront (tactic "wave" of GRUStack / LSTMStack in FP32 plans; contract
// in cuda_rnn_wave_f32.h).
//
// Cluster of 6 CTAs per ROWS batch rows, rank = role · 2 + half: role 0 layer 1's recurrence,
// role 1 layer 2's input projection W2·h1_t + b2, role 2 layer 2's recurrence; half q owns hidden
// units [64·q, 64·q + 64). Thread layout as regs_b1 (cuda_rnn_regs.cu): a warp holds 4 units ×
// 8 k-slices of 16 (lane = unit·8 + slice), thread (unit j, slice s) keeps M[g][j][16·s ..
// 16·s+15] of its role's matrix M for all G gates in registers (GRU 48, LSTM 64 floats).
// Iteration it = 0 .. T+1: role r does its step t = it − r; the partial sums meet by a butterfly
// over the 8 slices (__shfl_xor), then lane s computes row s's cell (s < ROWS) and stores:
//   role 0: h1_t into its own and its partner's h buffer (next step) and into both role-1 CTAs'
//           h buffers (slot t & 1);
//   role 1: W2·h1_t + b2 into its role-2 partner's gate buffer (slot t & 1);
//   role 2: h2_t into its own and its partner's h buffer, Y, at the last step Y_h / Y_c.
// One cluster barrier (arrive.release / wait.acquire) ends each iteration: what a CTA wrote in
// iteration it is read in it + 1 (slot t & 1), and a slot is rewritten only in it + 2.
//
// PERF NOTE: the lockstep barrier (instead of per-CTA mbarrier rings, cuda_rnn_wave.cu) was the
// FP16 wavefront's first version too, where the rings made the step shorter (cuda_rnn_wave.cu's
// PERF NOTE); at FP32 the step is about twice as long (regs_b1 FP32 against FP16 at batch 1,
// bench/results/engine-cuda-h200-20261130-1104.json) so the barrier weighs less.
#include <cooperative_groups.h>

#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_rnn_wave_f32.h"
#include "engine/backends/cuda/cuda_rnn_mma_device.cuh"

namespace cg = cooperative_groups;

namespace ts::engine::cuda {
namespace {

constexpr int kH = 128;       // hidden units (rnn_wave_f32_shape_supported)
constexpr int kHalves = 2;    // CTAs per role
constexpr int kU = kH / kHalves;  // units per CTA
constexpr int kKspl = 8;      // k-slices per unit
constexpr int kKc = kH / kKspl;  // k per slice
constexpr int kThreads = kU * kKspl;
constexpr int kRoles = 3;
constexpr int kCluster = kRoles * kHalves;
static_assert(kThreads == 512 && kKc % 4 == 0, "layout");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }
#endif

template <int G, int ROWS>
__global__ void __launch_bounds__(kThreads, 1) rnn_wave_f32_kernel(RnnWaveF32Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(ROWS <= kKspl, "one lane per row does the cell");
  __shared__ __align__(16) float hbuf[2][ROWS][kH];     // roles 0, 2: own h; role 1: h1_t in
  __shared__ __align__(16) float gxbuf[2][ROWS][G][kU];  // role 2: W2·h1_t + b2 of its units
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int role = rank / kHalves, half = rank % kHalves;
  const int B = p.batch, T = p.t_len;
  const int b0 = int(blockIdx.x / kCluster) * ROWS;
  const int tid = int(threadIdx.x), lane = tid & 31;
  const int s = lane % kKspl;
  const int ul = (tid >> 5) * (32 / kKspl) + lane / kKspl;  // unit within the half
  const int j = half * kU + ul;
  const int k0 = s * kKc;

  float w[G][kKc];
  {
    const float* src = p.w + size_t(rank) * G * kKc * kThreads + tid;
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int k = 0; k < kKc; ++k) w[g][k] = __ldg(src + size_t(g * kKc + k) * kThreads);
  }
  for (int i = tid; i < 2 * ROWS * kH; i += kThreads) (&hbuf[0][0][0])[i] = 0.0f;
  for (int i = tid; i < 2 * ROWS * G * kU; i += kThreads) (&gxbuf[0][0][0][0])[i] = 0.0f;

  // Lane s does row s's cell: its row, whether that row exists, its biases and (LSTM) c.
  const int row = b0 + s;
  const bool cell = s < ROWS;
  const bool real = cell && row < B;
  float bias[G];
#pragma unroll
  for (int g = 0; g < G; ++g) bias[g] = 0.0f;
  if (role == 1 && cell) {
#pragma unroll
    for (int g = 0; g < G; ++g) bias[g] = __ldg(p.b2 + g * kH + j);
  }
  float rbh = 0.0f;
  if (G == 3 && cell) {
    const float* rb = role == 0 ? p.rbh1 : p.rbh2;
    if (rb && role != 1) rbh = __ldg(rb + j);
  }
  float c = 0.0f;
  const size_t gxs = size_t(G) * kH;
  auto gx1_at = [&](int t) { return p.gx1 + (p.gx1_batch_first ? size_t(row) * T + t : size_t(t) * B + row) * gxs + j; };
  float gxn[G];
#pragma unroll
  for (int g = 0; g < G; ++g) gxn[g] = (role == 0 && real) ? __ldg(gx1_at(0) + g * kH) : 0.0f;

  // Where this CTA's stores go in its peers' shared memory.
  float* const h_partner = cluster.map_shared_rank(&hbuf[0][0][0], role * kHalves + (1 - half));
  float* const h_next0 = cluster.map_shared_rank(&hbuf[0][0][0], kHalves);      // role 1, half 0
  float* const h_next1 = cluster.map_shared_rank(&hbuf[0][0][0], kHalves + 1);  // role 1, half 1
  float* const gx_next = cluster.map_shared_rank(&gxbuf[0][0][0][0], 2 * kHalves + half);
  cluster.sync();  // every CTA's buffers are zeroed before any peer stores into them

  for (int it = 0; it < T + 2; ++it) {
    const int t = it - role;
    if (t >= 0 && t < T) {
      const int cur = t & 1;
      float gxv[G];
#pragma unroll
      for (int g = 0; g < G; ++g) gxv[g] = gxn[g];
      if (role == 0 && real && t + 1 < T) {  // prefetch the next step's x·W1ᵀ
        const float* nx = gx1_at(t + 1);
#pragma unroll
        for (int g = 0; g < G; ++g) gxn[g] = __ldg(nx + g * kH);
      }
      float acc[G][ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        float a0[G], a1[G];
#pragma unroll
        for (int g = 0; g < G; ++g) a0[g] = a1[g] = 0.0f;
        const float4* h4 = reinterpret_cast<const float4*>(&hbuf[cur][r][k0]);
#pragma unroll
        for (int q = 0; q < kKc / 4; ++q) {
          const float4 hv = h4[q];
#pragma unroll
          for (int g = 0; g < G; ++g) {
            a0[g] = fmaf(w[g][4 * q], hv.x, a0[g]);
            a1[g] = fmaf(w[g][4 * q + 1], hv.y, a1[g]);
            a0[g] = fmaf(w[g][4 * q + 2], hv.z, a0[g]);
            a1[g] = fmaf(w[g][4 * q + 3], hv.w, a1[g]);
          }
        }
#pragma unroll
        for (int g = 0; g < G; ++g) acc[g][r] = a0[g] + a1[g];
      }
#pragma unroll
      for (int off = 1; off < kKspl; off <<= 1)
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int r = 0; r < ROWS; ++r) acc[g][r] += __shfl_xor_sync(0xffffffffu, acc[g][r], off);
      if (cell) {
        float a[G];  // this lane's row (a select chain: no local-memory indexing)
#pragma unroll
        for (int g = 0; g < G; ++g) {
          a[g] = acc[g][0];
#pragma unroll
          for (int r = 1; r < ROWS; ++r) a[g] = s == r ? acc[g][r] : a[g];
        }
        if (role == 1) {
#pragma unroll
          for (int g = 0; g < G; ++g) gx_next[((cur * ROWS + s) * G + g) * kU + ul] = a[g] + bias[g];
        } else {
          if (role == 2) {
#pragma unroll
            for (int g = 0; g < G; ++g) gxv[g] = gxbuf[cur][s][g][ul];
          }
          const float hp = hbuf[cur][s][j];
          float hnew;
          if constexpr (G == 4) {  // ONNX gate order i, o, f, c
            const float ig = sigm(gxv[0] + a[0]);
            const float fg = sigm(gxv[2] + a[2]);
            const float cc = tanhf(gxv[3] + a[3]);
            c = fg * c + ig * cc;
            const float og = sigm(gxv[1] + a[1]);
            hnew = og * tanhf(c);
          } else {  // z, r, h; linear_before_reset = 1
            const float z = sigm(gxv[0] + a[0]);
            const float rr = sigm(gxv[1] + a[1]);
            const float n = tanhf(gxv[2] + rr * (a[2] + rbh));
            hnew = n + z * (hp - n);
          }
          const int nxt = cur ^ 1;
          hbuf[nxt][s][j] = hnew;
          h_partner[(nxt * ROWS + s) * kH + j] = hnew;
          if (role == 0) {
            h_next0[(cur * ROWS + s) * kH + j] = hnew;
            h_next1[(cur * ROWS + s) * kH + j] = hnew;
          } else if (real) {
            if (p.y) p.y[(size_t(t) * B + row) * kH + j] = hnew;
            if (t == T - 1) {
              if (p.yh) p.yh[size_t(row) * kH + j] = hnew;
              if (G == 4 && p.yc) p.yc[size_t(row) * kH + j] = c;
            }
          }
        }
      }
    }
    cluster.sync();
  }

  // The head, from layer 2's last h (both halves in every role-2 CTA's buffer T & 1).
  if (p.head_w && rank == 2 * kHalves) {
    const int warp = tid >> 5;
    for (int o = warp; o < ROWS * p.head_n; o += kThreads / 32) {
      const int r = o / p.head_n, n = o % p.head_n;
      if (b0 + r >= B) continue;
      float acc = 0.0f;
      for (int u = lane; u < kH; u += 32) acc = fmaf(hbuf[T & 1][r][u], __ldg(p.head_w + size_t(n) * kH + u), acc);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
      if (lane == 0) {
        acc += p.head_b ? __ldg(p.head_b + n) : 0.0f;
        p.head_out[size_t(b0 + r) * p.head_n + n] = p.head_sigmoid ? sigm(acc) : acc;
      }
    }
  }
#else
  (void)p;  // no clusters before sm_90: rnn_wave_f32_supported() is false there
#endif
}

template <int G, int ROWS>
Status launch_rows(const RnnWaveF32Params& p, cudaStream_t stream) {
  const unsigned clusters = unsigned((p.batch + ROWS - 1) / ROWS);
  TS_CUDA(rnn_device::launch_clustered(rnn_wave_f32_kernel<G, ROWS>, clusters * kCluster, kThreads, kCluster, stream, p));
  TS_CUDA_LAUNCHED("rnn wave (fp32)");
  return Status::ok();
}

// Rows per cluster: one while the clusters (6 whole-SM CTAs each) fit the device at once, else 4.
constexpr int kOneRowMaxBatch = 16;

template <int G>
Status launch_g(const RnnWaveF32Params& p, cudaStream_t stream) {
  return p.batch <= kOneRowMaxBatch ? launch_rows<G, 1>(p, stream) : launch_rows<G, 4>(p, stream);
}

}  // namespace

bool rnn_wave_f32_shape_supported(int hidden, bool lstm, bool lbr) { return hidden == kH && (lstm || lbr); }

bool rnn_wave_f32_supported(int hidden, bool lstm, bool lbr) {
  static const bool clusters = [] {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
    return major >= 9;
  }();
  return clusters && rnn_wave_f32_shape_supported(hidden, lstm, lbr);
}

std::vector<float> rnn_wave_f32_pack(const float* r1, const float* w2, const float* r2, int gates, int hidden) {
  if (hidden != kH) return {};
  const float* m[kRoles] = {r1, w2, r2};
  const size_t per_cta = size_t(gates) * kKc * kThreads;
  std::vector<float> out(per_cta * kCluster);
  for (int rank = 0; rank < kCluster; ++rank) {
    const float* src = m[rank / kHalves];
    const int half = rank % kHalves;
    for (int tid = 0; tid < kThreads; ++tid) {
      const int lane = tid & 31, s = lane % kKspl;
      const int j = half * kU + (tid >> 5) * (32 / kKspl) + lane / kKspl;
      for (int g = 0; g < gates; ++g)
        for (int k = 0; k < kKc; ++k) {
          out[size_t(rank) * per_cta + size_t(g * kKc + k) * kThreads + size_t(tid)] =
              src[size_t(g * kH + j) * kH + size_t(s * kKc + k)];
        }
    }
  }
  return out;
}

Status launch_rnn_wave_f32(const RnnWaveF32Params& p, cudaStream_t stream) {
  if (!rnn_wave_f32_supported(p.hidden, p.lstm, true)) {
    return Status(StatusCode::kUnsupported, "rnn wave (fp32): needs a device with clusters (sm_90) and hidden 128");
  }
  if (!p.gx1 || !p.w || !p.b2) return Status(StatusCode::kInvalidArgument, "rnn wave (fp32): missing projection, weights or bias");
  if (p.head_w && (p.head_n < 1 || !p.head_out)) {
    return Status(StatusCode::kInvalidArgument, "rnn wave (fp32): the head needs outputs and an output buffer, got " +
                                                    std::to_string(p.head_n));
  }
  if (p.t_len < 1 || p.batch < 1) return Status::ok();
  return p.lstm ? launch_g<4>(p, stream) : launch_g<3>(p, stream);
}

}  // namespace ts::engine::cuda
