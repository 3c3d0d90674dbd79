// Tactic "wave" of LSTMStack: two stacked LSTM layers in one launch, as a wavefront over a
// thread-block cluster of four CTAs per 8 batch rows (Hopper, sm_90). The GRU's wavefront
// (cuda_rnn_wave.cu) with one more CTA:
//
//   CTA 0: layer 1's input   g1_t = W1·x_t + b1                    → g1_t into CTA 1's smem
//   CTA 1: layer 1           h1_t = cell(g1_t + R1·h1_{t-1}, c1)   → h1_t into CTA 2's smem
//   CTA 2: layer 2's input   g2_t = W2·h1_t + b2                   → g2_t into CTA 3's smem
//   CTA 3: layer 2           h2_t = cell(g2_t + R2·h2_{t-1}, c2)   → Y, Y_h, Y_c, the head
//
// CTA 0 reads X as [T][B][F] or, with the model's input Transpose absorbed (x_batch_first),
// [B][T][F]; with the model's head absorbed CTA 3 computes it from the last h2 (as the GRU's
// CTA 2 does) and the node's one output is [B, N].
//
// Why four, not the GRU's three: an LSTM-128 matrix of 4 gates is 4·128·128 fp16 = 128 registers
// per thread as mma A fragments (8 warps); the GRU's CTA 0 holds R1 and W1 together (96 + 24),
// an LSTM CTA holding both would need 160 for weights alone and spill. So each CTA holds one
// matrix (CTA 0 only W1: 32 registers at input 32) and the input projections run one step ahead
// of their recurrence, off its critical path; the recurrences (CTAs 1 and 3) do 2·KT dependent
// mma per step as in the GRU.
//
// Hand-over as in the GRU (helpers rnn_cluster:: in cuda_rnn_mma_device.cuh): each producer
// st.async's its step into the consumer's ring (gate slots: 16 floats per thread, depth 2; h1
// slots: one packed fp16/bf16 word per thread and column pair, depth 4), each store completing
// bytes on the consumer's mbarrier; the consumer hands a slot back with one remote arrive after
// the __syncthreads that ends its step. CTA 0 has no inbound ring and no barrier: its warps run
// ahead until the ring is full.
//
// Layout. H/16 warps per CTA; warp w owns units 16w..16w+15 and all four gates' rows of them
// (four m16 tiles), so a thread holds i, o, f, c̃ of its 4 cells (units 16w+g, 16w+g+8; batch
// columns 2·tig, 2·tig+1) and keeps c and h in fp32 registers. h travels fp16/bf16 in the
// GRU's B-fragment order (mma positions (2q, 2q+1) of a k tile hold units (q, q+8); rows padded
// by 4 words); the weights are packed in the same order on the host.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_lstm_wave.h"
#include "engine/backends/cuda/cuda_rnn_mma_device.cuh"
#include "engine/backends/cuda/cuda_rnn_wave.h"  // kRnnWaveMaxHead

namespace ts::engine::cuda {
namespace {

namespace cg = cooperative_groups;
using namespace rnn_device;  // tanh_fast, sig_fast, pack2, mma16816, pack_pair_host

constexpr int kGates = 4;

// Input k tiles of layer 1: 2 up to 32 features, 4 up to 64.
inline int wave_kx(int input) { return input <= 32 ? 2 : 4; }

// The kernel's device-only pieces exist only where the kernel does (sm_90).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using namespace rnn_cluster;  // smem_addr, peer_addr, mbar_*, st_async*

constexpr int kGateWords = 16;   // gate pre-activations per thread and step: 4 gates × 4 cells
constexpr int kDG = 2, kDH = 4;  // ring depths: gate slots (CTA 0 → 1, 2 → 3), h1 slots (1 → 2)

// Shared memory, at the same offsets in every CTA (a producer addresses its consumer's copy):
// the inbound ring (gate slots in CTAs 1 and 3, h1 slots in CTA 2), the CTA's own h (CTAs 1, 3;
// double-buffered), the inbound ring's "full" and the outbound ring's "empty" barriers.
template <int KT>
struct WaveSmem {
  static constexpr int kLS = 2 * KT + 4;  // words per (column, tig) row of h, padded
  static constexpr int kSlotH = 32 * kLS;
  static constexpr int kSlotG = KT * 32 * kGateWords;
  static constexpr int kRing = kDG * kSlotG > kDH * kSlotH ? kDG * kSlotG : kDH * kSlotH;
  uint32_t ring[kRing];  // after the loop, CTA 3's holds the last h of its 8 rows for the head
  uint32_t hb[2][kSlotH];
  uint64_t full[4], empty[4];
  static_assert(kRing >= kLstmWaveRows * KT * 16, "the head's h must fit the ring");
};
#endif

// kRoles CTAs per cluster: 4 (tactic "wave") or 3 (tactic "wave3": CTA 0 is layer 1 with its
// own input projection, W1's A fragments in its otherwise unused inbound ring; CTAs 1 and 2 the
// 4-CTA layout's CTAs 2 and 3). `lrole` below is a CTA's role in the 4-CTA layout.
template <int KT, int KX, typename T16, int kRoles>
__global__ void __launch_bounds__(KT * 32, 1) lstm_wave_kernel(LstmWaveParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using S = WaveSmem<KT>;
  constexpr int kW = KT, H = KT * 16, kLS = S::kLS;
  constexpr uint32_t kBytesG = kW * 32 * kGateWords * 4, kBytesH = kW * 32 * 8;  // per slot
  static_assert(kRoles == 4 || (kRoles == 3 && sizeof(S::ring) >= size_t(kW) * kGates * KX * 32 * 16),
                "wave3: W1's fragments must fit layer 1's ring");
  __shared__ __align__(16) S sm;
  cg::cluster_group cluster = cg::this_cluster();
  const int role = int(cluster.block_rank());
  const int lrole = kRoles == 4 ? role : role + 1;
  const bool own_x = kRoles == 3 && role == 0;  // layer 1 computing W1·x_t itself
  const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, grp = lane >> 2, tig = lane & 3;
  const int B = p.batch, T = p.t_len;
  const int b0 = int(blockIdx.x / kRoles) * kLstmWaveRows;
  const int u0 = warp * 16 + grp, u1 = u0 + 8;
  const int bc0 = b0 + 2 * tig, bc1 = bc0 + 1;  // batch rows of this thread's accumulator columns

  for (int i = int(threadIdx.x); i < 2 * S::kSlotH; i += int(blockDim.x)) (&sm.hb[0][0])[i] = 0u;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 4; ++i) {
      mbar_init(smem_addr(&sm.full[i]), 1);
      mbar_init(smem_addr(&sm.empty[i]), 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    const int depth = lrole == 2 ? kDH : kDG;
    if (role > 0)
      for (int i = 0; i < depth && i < T; ++i) mbar_expect(smem_addr(&sm.full[i]), lrole == 2 ? kBytesH : kBytesG);
  }
  uint4* const w1s = reinterpret_cast<uint4*>(&sm.ring[0]);  // wave3 CTA 0: W1 [warp][gate][kx][lane]
  if (own_x) {
    for (int idx = int(threadIdx.x); idx < kW * kGates * KX * 32; idx += int(blockDim.x)) {
      const int ln = idx % 32, j = idx / 32, w = j / (kGates * KX), gk = j % (kGates * KX);
      const uint32_t* f = p.frags + size_t(w) * kGates * 4 * KX * 32 + ln;
      w1s[idx] = make_uint4(f[(gk * 4) * 32], f[(gk * 4 + 1) * 32], f[(gk * 4 + 2) * 32], f[(gk * 4 + 3) * 32]);
    }
  }
  const int down = role + 1 < kRoles ? role + 1 : role, up = role > 0 ? role - 1 : role;
  const uint32_t ring_down = peer_addr(smem_addr(&sm.ring[0]), down), full_down = peer_addr(smem_addr(&sm.full[0]), down);
  const uint32_t empty_up = peer_addr(smem_addr(&sm.empty[0]), up);
  cluster.sync();  // barriers initialised, h zeroed (W1 staged), every CTA running before any remote access

  // This CTA's matrix (lrole 0: W1 with K = KX; lroles 1-3: R1, W2, R2 with K = KT) into registers.
  auto load_frags = [&](auto& a, int k_tiles) {
    const size_t blk0 = size_t(kW) * 32 * kGates * 4 * KX, blk = size_t(kW) * 32 * kGates * 4 * KT;
    const uint32_t* f = p.frags + (lrole == 0 ? 0 : blk0 + size_t(lrole - 1) * blk) + size_t(warp) * kGates * 4 * k_tiles * 32 + lane;
#pragma unroll
    for (int g = 0; g < kGates; ++g)
#pragma unroll
      for (int k = 0; k < int(sizeof(a[0]) / sizeof(a[0][0])); ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i) a[g][k][i] = f[((g * k_tiles + k) * 4 + i) * 32];
  };
  // Inbound slot t: wait until its bytes are in; after the CTA's closing __syncthreads, re-arm
  // it for step t + depth and hand it back to the producer.
  // CTA-scope waits and remote arrives (rnn_cluster::mbar_wait_cta): the bytes a peer's st.async
  // completed on a barrier are visible once its phase flips; the cluster-scope acquire / release
  // forms cost an L1 invalidation per wait and a MEMBAR.ALL.GPU per arrive (the GRU's PERF NOTE,
  // cuda_rnn_wave.cu).
  auto wait_in = [&](int t, int depth) { mbar_wait_cta(smem_addr(&sm.full[t % depth]), uint32_t((t / depth) & 1)); };
  auto release_in = [&](int t, int depth, uint32_t bytes) {
    if (threadIdx.x == 0) {
      const int slot = t % depth;
      if (t + depth < T) mbar_expect(smem_addr(&sm.full[slot]), bytes);
      mbar_arrive_peer_cta(empty_up + uint32_t(slot) * 8);
    }
  };
  // Outbound slot t: wait until the consumer has handed it back (from step `depth` on).
  auto wait_out = [&](int t, int depth) {
    if (t >= depth) mbar_wait_cta(smem_addr(&sm.empty[t % depth]), uint32_t((t / depth - 1) & 1));
  };
  // Gate pre-activations of step t into the next CTA's gate ring (roles 0 and 2).
  auto send_gates = [&](int t, const float (&acc)[kGates][4]) {
    wait_out(t, kDG);
    const int slot = t % kDG;
    const uint32_t dst = ring_down + uint32_t(slot * S::kSlotG + (warp * 32 + lane) * kGateWords) * 4;
    const uint32_t bar = full_down + uint32_t(slot) * 8;
#pragma unroll
    for (int g = 0; g < kGates; ++g) st_async4(dst + 16 * g, acc[g][0], acc[g][1], acc[g][2], acc[g][3], bar);
  };
  // acc_g += M_g · h for the four gate tiles, h read from a B-fragment row block; two
  // accumulator chains per gate (even / odd k tiles).
  auto h_side = [&](const uint32_t* hrow, const uint32_t (&a)[kGates][KT][4], float (&acc)[kGates][4]) {
    uint32_t bf[2 * KT];
    const uint4* h4 = reinterpret_cast<const uint4*>(hrow + (grp * 4 + tig) * kLS);
#pragma unroll
    for (int q = 0; q < KT / 2; ++q) {
      const uint4 v = h4[q];
      bf[4 * q] = v.x;
      bf[4 * q + 1] = v.y;
      bf[4 * q + 2] = v.z;
      bf[4 * q + 3] = v.w;
    }
    float e[kGates][4] = {};
#pragma unroll
    for (int k = 0; k < KT; k += 2) {
#pragma unroll
      for (int g = 0; g < kGates; ++g) mma16816<T16>(acc[g], a[g][k], bf[2 * k], bf[2 * k + 1]);
#pragma unroll
      for (int g = 0; g < kGates; ++g) mma16816<T16>(e[g], a[g][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
    }
#pragma unroll
    for (int g = 0; g < kGates; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[g][i] += e[g][i];
  };
  // The layer's bias (Wb + Rb) for this thread's units, per gate: [g][0] unit u0, [g][1] u1.
  auto load_bias = [&](float (&bl)[kGates][2], int layer) {
    const float* b = p.bias + size_t(layer) * kGates * H;
#pragma unroll
    for (int g = 0; g < kGates; ++g) {
      bl[g][0] = b[g * H + u0];
      bl[g][1] = b[g * H + u1];
    }
  };
  auto start_acc = [&](float (&acc)[kGates][4], const float (&bl)[kGates][2]) {
#pragma unroll
    for (int g = 0; g < kGates; ++g) {
      acc[g][0] = acc[g][1] = bl[g][0];
      acc[g][2] = acc[g][3] = bl[g][1];
    }
  };

  // Layer 1's input (lrole 0, or wave3's CTA 0): x_t for this thread's B column, k = 16·kx +
  // 2·tig + {0, 1, 8, 9}: a pointer that steps by one time step ([T][B][I] or, batch-first,
  // [B][T][I]) and a mask of the elements that exist.
  const int bx = b0 + grp, I = p.input;  // batch row of this thread's B column
  const float* xq = p.x + (p.x_batch_first ? size_t(bx) * T : size_t(bx)) * I + 2 * tig;
  const size_t x_step = p.x_batch_first ? size_t(I) : size_t(B) * I;
  uint32_t x_ok = 0;
#pragma unroll
  for (int kx = 0; kx < KX; ++kx)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int k = 16 * kx + 2 * tig + (e & 1) + (e & 2 ? 8 : 0);
      if (bx < B && k < I) x_ok |= 1u << (kx * 4 + e);
    }
  float xr[KX][4];
  auto load_x = [&](int t) {
    const float* xp = xq + size_t(t) * x_step;
#pragma unroll
    for (int kx = 0; kx < KX; ++kx)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        xr[kx][e] = (x_ok >> (kx * 4 + e)) & 1u ? __ldg(xp + 16 * kx + (e & 1) + (e & 2 ? 8 : 0)) : 0.0f;
  };

  if (lrole == 0) {  // layer 1's input projection, straight from X
    uint32_t ax[kGates][KX][4];
    load_frags(ax, KX);
    float bl[kGates][2];
    load_bias(bl, 0);
    load_x(0);
    for (int t = 0; t < T; ++t) {
      float acc[kGates][4];
      start_acc(acc, bl);
#pragma unroll
      for (int kx = 0; kx < KX; ++kx) {
        const uint32_t x0 = pack2<T16>(xr[kx][0], xr[kx][1]), x1 = pack2<T16>(xr[kx][2], xr[kx][3]);
#pragma unroll
        for (int g = 0; g < kGates; ++g) mma16816<T16>(acc[g], ax[g][kx], x0, x1);
      }
      if (t + 1 < T) load_x(t + 1);  // in flight while this step's gates go out
      send_gates(t, acc);
    }
  } else if (lrole == 2) {  // layer 2's input projection: h1_t from the ring → g2_t into layer 2's ring
    uint32_t a[kGates][KT][4];
    load_frags(a, KT);
    float bl[kGates][2];
    load_bias(bl, 1);
    for (int t = 0; t < T; ++t) {
      wait_in(t, kDH);
      float acc[kGates][4];
      start_acc(acc, bl);
      h_side(&sm.ring[(t % kDH) * S::kSlotH], a, acc);
      send_gates(t, acc);
      __syncthreads();  // every warp has read the h1 slot
      release_in(t, kDH, kBytesH);
    }
  } else {  // lroles 1 and 3: a recurrence on the gate slots of its ring (wave3's CTA 0: on its own W1·x_t)
    uint32_t a[kGates][KT][4];
    load_frags(a, KT);
    float hs[4] = {0, 0, 0, 0}, cs[4] = {0, 0, 0, 0};  // fp32 h and c of the 4 cells
    // Where this thread's packed h words go: column 2·tig and 2·tig+1, k tile = warp.
    const int hw0 = ((2 * tig) * 4 + (grp & 3)) * kLS + warp * 2 + (grp >> 2), hw1 = hw0 + 4 * kLS;
    float xacc[kGates][4];  // wave3 CTA 0: b1 + W1·x of the next step, computed after h1 went out
    float bl[kGates][2];
    auto x_part = [&]() {
      start_acc(xacc, bl);
#pragma unroll
      for (int kx = 0; kx < KX; ++kx) {
        const uint32_t x0 = pack2<T16>(xr[kx][0], xr[kx][1]), x1 = pack2<T16>(xr[kx][2], xr[kx][3]);
#pragma unroll
        for (int g = 0; g < kGates; ++g) {
          const uint4 v = w1s[((warp * kGates + g) * KX + kx) * 32 + lane];
          const uint32_t af[4] = {v.x, v.y, v.z, v.w};
          mma16816<T16>(xacc[g], af, x0, x1);
        }
      }
    };
    if (own_x) {
      load_bias(bl, 0);
      load_x(0);
      x_part();
      if (T > 1) load_x(1);
    }
    for (int t = 0; t < T; ++t) {
      float acc[kGates][4];
      if (own_x) {
#pragma unroll
        for (int g = 0; g < kGates; ++g)
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[g][i] = xacc[g][i];
      } else {
        wait_in(t, kDG);
        const float4* src = reinterpret_cast<const float4*>(&sm.ring[(t % kDG) * S::kSlotG + (warp * 32 + lane) * kGateWords]);
#pragma unroll
        for (int g = 0; g < kGates; ++g) {
          const float4 v = src[g];
          acc[g][0] = v.x;
          acc[g][1] = v.y;
          acc[g][2] = v.z;
          acc[g][3] = v.w;
        }
      }
      h_side(sm.hb[(t + 1) & 1], a, acc);
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // ONNX gate order i, o, f, c
        const float ig = sig_fast(acc[0][i]), og = sig_fast(acc[1][i]), fg = sig_fast(acc[2][i]), cg_ = tanh_fast(acc[3][i]);
        cs[i] = fmaf(fg, cs[i], ig * cg_);
        hs[i] = og * tanh_fast(cs[i]);
      }
      const uint32_t w0 = pack2<T16>(hs[0], hs[2]), w1 = pack2<T16>(hs[1], hs[3]);
      sm.hb[t & 1][hw0] = w0;
      sm.hb[t & 1][hw1] = w1;
      if (lrole == 1) {  // h1_t into layer 2's input CTA's ring
        wait_out(t, kDH);
        const int slot = t % kDH;
        const uint32_t dst = ring_down + uint32_t(slot * S::kSlotH) * 4, bar = full_down + uint32_t(slot) * 8;
        st_async(dst + uint32_t(hw0) * 4, w0, bar);
        st_async(dst + uint32_t(hw1) * 4, w1, bar);
      } else if (p.y) {
        float* y = p.y + size_t(t) * B * H;
        if (bc0 < B) {
          y[size_t(bc0) * H + u0] = hs[0];
          y[size_t(bc0) * H + u1] = hs[2];
        }
        if (bc1 < B) {
          y[size_t(bc1) * H + u0] = hs[1];
          y[size_t(bc1) * H + u1] = hs[3];
        }
      }
      if (own_x && t + 1 < T) {  // the next step's input side, off the hand-over's path
        x_part();
        if (t + 2 < T) load_x(t + 2);
      }
      __syncthreads();  // h_t complete; every warp has read the gate slot
      if (!own_x) release_in(t, kDG, kBytesG);
    }
    if (lrole == 3) {
      auto store_state = [&](float* out, const float (&v)[4]) {
        if (!out) return;
        if (bc0 < B) {
          out[size_t(bc0) * H + u0] = v[0];
          out[size_t(bc0) * H + u1] = v[2];
        }
        if (bc1 < B) {
          out[size_t(bc1) * H + u0] = v[1];
          out[size_t(bc1) * H + u1] = v[3];
        }
      };
      store_state(p.yh, hs);
      store_state(p.yc, cs);
      if (p.head_w) {
        // The head from the fp32 h of the last step, through the gate ring: CTA 2 sent every
        // step and every slot was consumed before the loop's last barrier.
        float* const hlast = reinterpret_cast<float*>(&sm.ring[0]);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int u = i & 2 ? u1 : u0, b = i & 1 ? bc1 : bc0;
          if (b < B) hlast[(b - b0) * H + u] = hs[i];
        }
        __syncthreads();
        const int cols = min(kLstmWaveRows, B - b0), outs = cols * p.head_n;
        for (int o = warp; o < outs; o += kW) {
          const int c = o / p.head_n, j = o % p.head_n;
          float acc = 0.0f;
          for (int u = lane; u < H; u += 32) acc = fmaf(hlast[c * H + u], __ldg(p.head_w + size_t(j) * H + u), acc);
#pragma unroll
          for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
          if (lane == 0) {
            acc += p.head_b ? __ldg(p.head_b + j) : 0.0f;
            p.head_out[size_t(b0 + c) * p.head_n + j] = p.head_sigmoid ? 1.0f / (1.0f + __expf(-acc)) : acc;
          }
        }
      }
    }
  }
  cluster.sync();  // no CTA leaves while a peer may still signal into its shared memory
#else
  (void)p;  // no clusters before sm_90: lstm_wave_supported() is false there
#endif
}

template <int KT, int KX, typename T16, int kRoles>
Status launch_typed(const LstmWaveParams& p, cudaStream_t stream) {
  const unsigned clusters = unsigned((p.batch + kLstmWaveRows - 1) / kLstmWaveRows);
  TS_CUDA(rnn_device::launch_clustered(lstm_wave_kernel<KT, KX, T16, kRoles>, kRoles * clusters, KT * 32, kRoles, stream, p));
  return Status::ok();
}

template <typename T16>
Status launch_h(const LstmWaveParams& p, cudaStream_t s) {
  const bool kx2 = wave_kx(p.input) == 2;
  if (p.three_ctas && kx2) return p.hidden == 64 ? launch_typed<4, 2, T16, 3>(p, s) : launch_typed<8, 2, T16, 3>(p, s);
  if (p.hidden == 64) return kx2 ? launch_typed<4, 2, T16, 4>(p, s) : launch_typed<4, 4, T16, 4>(p, s);
  return kx2 ? launch_typed<8, 2, T16, 4>(p, s) : launch_typed<8, 4, T16, 4>(p, s);
}

}  // namespace

bool lstm_wave_shape_supported(int hidden, int input) {
  return (hidden == 64 || hidden == 128) && input >= 1 && input <= 64;
}

bool lstm_wave3_shape_supported(int hidden, int input) { return lstm_wave_shape_supported(hidden, input) && input <= 32; }

bool lstm_wave_supported(int hidden, int input) {
  static const bool clusters = [] {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
    return major >= 9;
  }();
  return clusters && lstm_wave_shape_supported(hidden, input);
}

std::vector<uint32_t> lstm_wave_pack(const float* w1, const float* r1, const float* w2, const float* r2, int hidden,
                                     int input, bool bf16) {
  const int kt = hidden / 16, kx = wave_kx(input), warps = kt, H = hidden, I = input;
  const int nh = kGates * 4 * kt, nx = kGates * 4 * kx;  // fragment words per thread
  std::vector<uint32_t> out(size_t(warps) * 32 * (nx + 3 * nh));
  // A fragment register i of lane: row +8 when i & 1, k +8 (mma positions) when i & 2.
  auto h_word = [&](const float* m, int w, int g, int k, int i, int lane) {
    const int row = g * H + 16 * w + (lane >> 2) + (i & 1 ? 8 : 0);
    const int c = k * 16 + (lane & 3) + (i & 2 ? 4 : 0);  // positions (2q, 2q+1) = units (q, q+8)
    return rnn_device::pack_pair_host(m[size_t(row) * H + c], m[size_t(row) * H + c + 8], bf16);
  };
  auto x_word = [&](int w, int g, int k, int i, int lane) {
    const int row = g * H + 16 * w + (lane >> 2) + (i & 1 ? 8 : 0);
    const int c = k * 16 + 2 * (lane & 3) + (i & 2 ? 8 : 0);
    const float lo = c < I ? w1[size_t(row) * I + c] : 0.0f, hi = c + 1 < I ? w1[size_t(row) * I + c + 1] : 0.0f;
    return rnn_device::pack_pair_host(lo, hi, bf16);
  };
  size_t o = 0;
  for (int w = 0; w < warps; ++w)
    for (int j = 0; j < nx; ++j)
      for (int lane = 0; lane < 32; ++lane) out[o++] = x_word(w, j / (4 * kx), (j / 4) % kx, j % 4, lane);
  for (const float* m : {r1, w2, r2})
    for (int w = 0; w < warps; ++w)
      for (int j = 0; j < nh; ++j)
        for (int lane = 0; lane < 32; ++lane) out[o++] = h_word(m, w, j / (4 * kt), (j / 4) % kt, j % 4, lane);
  return out;
}

std::vector<float> lstm_wave_bias(const std::vector<float>& b1, const std::vector<float>& b2, int hidden) {
  const size_t H = size_t(hidden), G = kGates;
  std::vector<float> out(2 * G * H, 0.0f);
  for (size_t q = 0; q < G * H; ++q) {  // B = [Wb_i, Wb_o, Wb_f, Wb_c, Rb_i, Rb_o, Rb_f, Rb_c]
    out[q] = b1[q] + b1[G * H + q];
    out[G * H + q] = b2[q] + b2[G * H + q];
  }
  return out;
}

Status launch_lstm_wave(const LstmWaveParams& p, cudaStream_t stream) {
  if (!lstm_wave_supported(p.hidden, p.input)) {
    return Status(StatusCode::kUnsupported, "lstm wave: needs a device with clusters (sm_90) and hidden 64/128, input <= 64");
  }
  if (p.head_w && (p.head_n < 1 || p.head_n > kRnnWaveMaxHead || !p.head_out)) {
    return Status(StatusCode::kInvalidArgument, "lstm wave: the head needs 1.." + std::to_string(kRnnWaveMaxHead) +
                                                    " outputs and an output buffer, got " + std::to_string(p.head_n));
  }
  if (p.t_len < 1 || p.batch < 1) return Status::ok();
  return p.bf16 ? launch_h<__nv_bfloat16>(p, stream) : launch_h<__half>(p, stream);
}

}  // namespace ts::engine::cuda
