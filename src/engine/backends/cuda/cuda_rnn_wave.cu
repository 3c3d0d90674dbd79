// Tactic "wave": two stacked GRU layers in one launch, as a wavefront over a thread-block
// cluster of three CTAs per 8 batch rows (Hopper, sm_90):
//
//   CTA 0: layer 1         h1_t = cell(gx1_t + R1·h1_{t-1})         → h1_t into CTA 1's smem
//   CTA 1: the input sides gx1_t = W1·x_t + b1 (ahead of time)       → gx1_t into CTA 0's smem
//                          g2_t  = W2·h1_t + b2                      → g2_t into CTA 2's smem
//   CTA 2: layer 2         h2_t = cell(g2_t + R2·h2_{t-1})          → Y, Y_h, the head
//
// Each CTA runs its own loop; they meet only through rings in shared memory: CTA 0 st.async's
// h1_t into CTA 1's ring (depth 4), CTA 1 st.async's gx1 into CTA 0's ring and g2_t into CTA 2's
// ring (depth 2 each), each store completing bytes on the consumer's mbarrier, and a consumer
// hands a slot back with one remote mbarrier arrive. So the two recurrent CTAs (0 and 2) run
// the same loop — the h-side mma on their own h, the cell, one __syncthreads — and everything
// that does not depend on their own previous step (both input projections, the x loads) is in
// CTA 1, off the recurrences' critical paths. Each CTA keeps its matrices in registers for all
// T steps (A fragments of mma.sync m16n8k16: weight rows are the m dimension, the 8 batch rows
// of the cluster the n dimension, so batch 1 costs what batch 8 costs); h travels fp16/bf16 in
// the B-fragment order (see below); the fp32 state and the gate math stay in the registers of
// the thread that owns the cell. A recurrent CTA waits for its next ring slot and loads it
// before the step's barrier, so after the barrier only h is loaded.
//
// PERF NOTE: synchronisation (H200, GRU-2x128 FP16 batch 1, T = 30/60/120, kernel alone).
//  - Lockstep, one barrier.cluster per step: 1.09-1.19 µs per step.
//  - Decoupled CTAs through rings (x-side in CTA 0, cluster-scope acquire waits and release
//    arrives): 0.744 µs per step. ncu: CTA 1 and 2 spin on their full barriers (12-15 polls per
//    step), so CTA 0 set the pace; its acquire.cluster waits compile to an L1 invalidation
//    (CCTL.IVALL, the top stall), the release.cluster arrives to MEMBAR.ALL.GPU.
//  - CTA-scope waits and arrives (as CUTLASS's cluster barriers): 0.665 µs per step.
//  - Measured and dropped: tanh.approx.f16x2 for two cells per MUFU (0.692 vs 0.665: MUFU is
//    not the limit); 16 warps with a warp pair splitting the k tiles and swapping partial sums
//    through shared memory (1.30 µs per step: the pair barrier and the exchange cost more than
//    the shorter mma chains save).
//
// Layout. H/16 warps per CTA; warp w owns units 16w..16w+15 and all three gates' rows of them
// (three m16 tiles), so a thread holds z, r and both halves of n for its 4 cells (units
// 16w+g, 16w+g+8; batch columns 2·tig, 2·tig+1): no exchange inside the CTA for the cell.
// k order within each 16-wide k tile of h: mma positions (2q, 2q+1) hold units (q, q+8), so
// the owner of units (q, q+8) writes ONE packed 32-bit word per column, and a consumer thread
// reads its whole B operand (2 words per k tile) as contiguous 16-byte loads (row padded by 4
// words: conflict-free). The weights are packed in the same order on the host, each lane's A
// fragment as one 16-byte word.
//
// PERF NOTE: registers. CTA 1 holds W2 (12·H/16 words) and W1 (12·ceil(I/16) words) per thread,
// ~120 of its registers at H = 128, I = 32; one CTA per SM. 8 batch rows per cluster: batch
// ≤ 8·44 runs in one wave on the 132 SMs of an H200; larger batches run in waves (the builder
// times this tactic against the layer-by-layer ones).
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_rnn_mma_device.cuh"
#include "engine/backends/cuda/cuda_rnn_wave.h"

namespace ts::engine::cuda {
namespace {

namespace cg = cooperative_groups;
using namespace rnn_device;  // tanh_fast, sig_fast, pack2, mma16816, pack_pair_host

constexpr int kRoles = 3;

// Input k tiles of layer 1: 2 up to 32 features, 4 up to 64.
inline int wave_kx(int input) { return input <= 32 ? 2 : 4; }

// The kernel's device-only pieces exist only where the kernel does (sm_90): no unused-variable
// warnings from the sm_80 and host passes.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using rnn_cluster::mbar_arrive_peer_cta;
using rnn_cluster::mbar_expect;
using rnn_cluster::mbar_init;
using rnn_cluster::mbar_wait_cta;
using rnn_cluster::peer_addr;
using rnn_cluster::smem_addr;
using rnn_cluster::st_async;
using rnn_cluster::st_async4;

// Ring depths: h1 slots (CTA 0 → 1), gx1 slots (CTA 1 → 0), g2 slots (CTA 1 → 2).
constexpr int kD1 = 4, kDX = 2, kD2 = 2;
constexpr int kGxF = 12;  // floats of a gate input per thread and slot (3 gates × 4 cells)
#endif

template <int KT, int KX, typename T16>
__global__ void __launch_bounds__(KT * 32, 1) rnn_wave_kernel(RnnWaveParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kLS = 2 * KT + 4;  // words per (column, tig) slot of h, padded
  constexpr int H = KT * 16;
  // Shared memory at role-independent offsets (peers address each other's regions with mapa):
  // region A: h double buffer (CTA 0, 2) or the h1 ring (CTA 1); region G: the gate-input
  // ring of a recurrent CTA (gx1 in CTA 0, g2 in CTA 2), reused by the head after the loop.
  constexpr int kWordsA = kD1 * 32 * kLS;
  constexpr int kSlotG = KT * 32 * kGxF;  // floats
  static_assert(kDX == kD2, "CTA 0 and 2 share the ring layout");
  static_assert(kD2 * kSlotG >= kRnnWaveRows * H, "the head's scratch must fit the ring");
  __shared__ __align__(16) uint32_t sm[kWordsA + kD2 * kSlotG];
  __shared__ __align__(8) uint64_t full1[kD1], empty1[kD1], full2[kD2], empty2[kD2], fullx[kDX], emptyx[kDX];
  uint32_t* const h1r = sm;  // CTA 1
  float* const ring = reinterpret_cast<float*>(sm + kWordsA);

  cg::cluster_group cluster = cg::this_cluster();
  const int role = int(cluster.block_rank());
  const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, grp = lane >> 2, tig = lane & 3;
  const int B = p.batch, T = p.t_len, I = p.input;
  const int b0 = int(blockIdx.x / kRoles) * kRnnWaveRows;
  const int u0 = warp * 16 + grp, u1 = u0 + 8;
  const int bc0 = b0 + 2 * tig, bc1 = bc0 + 1;  // batch rows of this thread's accumulator columns
  const int bx = b0 + grp;                      // batch row of this thread's B column (x)

  uint32_t ah[3][KT][4];  // h-side A fragments: R1 (CTA 0), W2 (CTA 1), R2 (CTA 2)
  uint32_t ax[3][KX][4];  // W1 (CTA 1)
  {
    constexpr int kJ0 = 3 * KT + 3 * KX, kJ = 3 * KT;  // A fragments per lane: role 0's block (R1, W1), the others
    const size_t blk0 = size_t(KT) * 32 * kJ0, blk = size_t(KT) * 32 * kJ;
    const uint4* frags = reinterpret_cast<const uint4*>(p.frags);
    const uint4* f = frags + (role == 0 ? 0 : role == 1 ? blk0 : blk0 + blk) + size_t(warp) * (role == 0 ? kJ0 : kJ) * 32 + lane;
    const uint4* fx = frags + size_t(warp) * kJ0 * 32 + lane + 3 * KT * 32;  // W1, in role 0's block
#pragma unroll
    for (int g = 0; g < 3; ++g)
#pragma unroll
      for (int k = 0; k < KT; ++k) {
        const uint4 v = __ldg(f + (g * KT + k) * 32);
        ah[g][k][0] = v.x, ah[g][k][1] = v.y, ah[g][k][2] = v.z, ah[g][k][3] = v.w;
      }
#pragma unroll
    for (int g = 0; g < 3; ++g)
#pragma unroll
      for (int k = 0; k < KX; ++k) {
        const uint4 v = role == 1 ? __ldg(fx + (g * KX + k) * 32) : make_uint4(0, 0, 0, 0);
        ax[g][k][0] = v.x, ax[g][k][1] = v.y, ax[g][k][2] = v.z, ax[g][k][3] = v.w;
      }
  }
  // Biases (rnn_wave_bias): CTA 1 starts gx1 from role 0's z, r, x-side n and g2 from role 1's;
  // CTA 0 and 2 start the h-side n from their own.
  auto bias_of = [&](int r, int j, int u) { return __ldg(p.bias + (size_t(r) * 4 + j) * H + u); };
  const float bh0 = bias_of(role, 3, u0), bh1 = bias_of(role, 3, u1);

  for (int i = int(threadIdx.x); i < 2 * 32 * kLS; i += int(blockDim.x)) sm[i] = 0u;
  constexpr uint32_t kBytes1 = KT * 32 * 8, kBytesG = KT * 32 * kGxF * 4;  // per slot
  if (threadIdx.x == 0) {
    for (int i = 0; i < kD1; ++i) {
      mbar_init(smem_addr(&full1[i]), 1);
      mbar_init(smem_addr(&empty1[i]), 1);
    }
    for (int i = 0; i < kD2; ++i) {
      mbar_init(smem_addr(&full2[i]), 1);
      mbar_init(smem_addr(&empty2[i]), 1);
      mbar_init(smem_addr(&fullx[i]), 1);
      mbar_init(smem_addr(&emptyx[i]), 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (role == 1)
      for (int i = 0; i < kD1 && i < T; ++i) mbar_expect(smem_addr(&full1[i]), kBytes1);
    if (role != 1)  // CTA 0: gx1 slots, CTA 2: g2 slots
      for (int i = 0; i < kD2 && i < T; ++i) mbar_expect(smem_addr(role == 0 ? &fullx[i] : &full2[i]), kBytesG);
  }
  // Peer addresses: CTA 0 → CTA 1's h1 ring, full1 and emptyx; CTA 1 → CTA 0's ring, fullx and
  // empty1, CTA 2's ring and full2; CTA 2 → CTA 1's empty2.
  const uint32_t h1r_peer = peer_addr(smem_addr(h1r), 1), full1_peer = peer_addr(smem_addr(&full1[0]), 1);
  const uint32_t ring0_peer = peer_addr(smem_addr(ring), 0), fullx_peer = peer_addr(smem_addr(&fullx[0]), 0);
  const uint32_t ring2_peer = peer_addr(smem_addr(ring), 2), full2_peer = peer_addr(smem_addr(&full2[0]), 2);
  const uint32_t empty1_peer = peer_addr(smem_addr(&empty1[0]), 0), emptyx_peer = peer_addr(smem_addr(&emptyx[0]), 1);
  const uint32_t empty2_peer = peer_addr(smem_addr(&empty2[0]), 1);
  cluster.sync();  // barriers initialised, buffers zeroed, every CTA running before any remote access

  // g_i += M_i · h for the three gate tiles; two accumulator chains per gate (even/odd k tiles).
  auto h_side = [&](const uint32_t* hrow, float (&g0)[4], float (&g1)[4], float (&g2)[4]) {
    uint32_t bf[2 * KT];
    const uint4* h4 = reinterpret_cast<const uint4*>(hrow + (grp * 4 + tig) * kLS);
#pragma unroll
    for (int q = 0; q < KT / 2; ++q) {
      const uint4 v = h4[q];
      bf[4 * q] = v.x, bf[4 * q + 1] = v.y, bf[4 * q + 2] = v.z, bf[4 * q + 3] = v.w;
    }
    float e0[4] = {0, 0, 0, 0}, e1[4] = {0, 0, 0, 0}, e2[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < KT; k += 2) {
      mma16816<T16>(g0, ah[0][k], bf[2 * k], bf[2 * k + 1]);
      mma16816<T16>(g1, ah[1][k], bf[2 * k], bf[2 * k + 1]);
      mma16816<T16>(g2, ah[2][k], bf[2 * k], bf[2 * k + 1]);
      mma16816<T16>(e0, ah[0][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
      mma16816<T16>(e1, ah[1][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
      mma16816<T16>(e2, ah[2][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      g0[i] += e0[i];
      g1[i] += e1[i];
      g2[i] += e2[i];
    }
  };
  const int my_g = (warp * 32 + lane) * kGxF;  // this thread's floats in a ring slot

  if (role == 1) {  // the input sides: gx1 ahead of time into CTA 0's ring, g2_t into CTA 2's ring
    const float bz0 = bias_of(0, 0, u0), bz1 = bias_of(0, 0, u1), br0 = bias_of(0, 1, u0), br1 = bias_of(0, 1, u1);
    const float bn0 = bias_of(0, 2, u0), bn1 = bias_of(0, 2, u1);
    const float cz0 = bias_of(1, 0, u0), cz1 = bias_of(1, 0, u1), cr0 = bias_of(1, 1, u0), cr1 = bias_of(1, 1, u1);
    const float cn0 = bias_of(1, 2, u0), cn1 = bias_of(1, 2, u1);
    // x_t for this thread's B column, k = 16·kx + 2·tig + {0, 1, 8, 9}: a pointer that steps by
    // one time step and a mask of the elements that exist (batch row < B, k < I).
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
    // gx1_t from the x in registers into CTA 0's slot; then the x of step t + 1 is loaded.
    auto send_x = [&](int t) {
      float z[4] = {bz0, bz0, bz1, bz1}, r[4] = {br0, br0, br1, br1}, n[4] = {bn0, bn0, bn1, bn1};
#pragma unroll
      for (int kx = 0; kx < KX; ++kx) {
        const uint32_t x0 = pack2<T16>(xr[kx][0], xr[kx][1]), x1 = pack2<T16>(xr[kx][2], xr[kx][3]);
        mma16816<T16>(z, ax[0][kx], x0, x1);
        mma16816<T16>(r, ax[1][kx], x0, x1);
        mma16816<T16>(n, ax[2][kx], x0, x1);
      }
      if (t + 1 < T) load_x(t + 1);
      const int slot = t % kDX;
      if (t >= kDX) mbar_wait_cta(smem_addr(&emptyx[slot]), uint32_t((t / kDX - 1) & 1));  // CTA 0 done with it
      const uint32_t dst = ring0_peer + uint32_t(slot * kSlotG + my_g) * 4, bar = fullx_peer + uint32_t(slot) * 8;
      st_async4(dst, z[0], z[1], z[2], z[3], bar);
      st_async4(dst + 16, r[0], r[1], r[2], r[3], bar);
      st_async4(dst + 32, n[0], n[1], n[2], n[3], bar);
    };
    load_x(0);
    for (int t = 0; t < kDX && t < T; ++t) send_x(t);
    for (int t = 0; t < T; ++t) {
      if (t + kDX < T) send_x(t + kDX);  // before waiting for h1_t: this is where CTA 1 has slack
      const int slot = t % kD1, slot2 = t % kD2;
      mbar_wait_cta(smem_addr(&full1[slot]), uint32_t((t / kD1) & 1));
      float z[4] = {cz0, cz0, cz1, cz1}, r[4] = {cr0, cr0, cr1, cr1}, n[4] = {cn0, cn0, cn1, cn1};
      h_side(h1r + slot * 32 * kLS, z, r, n);
      if (t >= kD2) mbar_wait_cta(smem_addr(&empty2[slot2]), uint32_t((t / kD2 - 1) & 1));
      const uint32_t dst = ring2_peer + uint32_t(slot2 * kSlotG + my_g) * 4, bar = full2_peer + uint32_t(slot2) * 8;
      st_async4(dst, z[0], z[1], z[2], z[3], bar);
      st_async4(dst + 16, r[0], r[1], r[2], r[3], bar);
      st_async4(dst + 32, n[0], n[1], n[2], n[3], bar);
      __syncthreads();  // every warp has read the h1 slot
      if (threadIdx.x == 0) {
        if (t + kD1 < T) mbar_expect(smem_addr(&full1[slot]), kBytes1);
        mbar_arrive_peer_cta(empty1_peer + uint32_t(slot) * 8);
      }
    }
  } else {  // CTA 0 (layer 1) and CTA 2 (layer 2): a recurrence on the gate inputs from the ring
    const bool l1 = role == 0;
    uint64_t* const rfull = l1 ? fullx : full2;
    const uint32_t rempty_peer = l1 ? emptyx_peer : empty2_peer;
    uint32_t* const hb0 = sm;             // h written at even steps
    uint32_t* const hb1 = sm + 32 * kLS;  // odd
    // Where this thread's packed h words go: column 2·tig and 2·tig+1, k tile = warp.
    const int hw0 = ((2 * tig) * 4 + (grp & 3)) * kLS + warp * 2 + (grp >> 2);
    const int hw1 = hw0 + 4 * kLS;
    float z[4], r[4], n[4];  // the gate inputs of the next step, from the ring
    auto take = [&](int t) {
      const int slot = t % kD2;
      mbar_wait_cta(smem_addr(&rfull[slot]), uint32_t((t / kD2) & 1));
      const float4* src = reinterpret_cast<const float4*>(ring + slot * kSlotG + my_g);
      const float4 v0 = src[0], v1 = src[1], v2 = src[2];
      z[0] = v0.x, z[1] = v0.y, z[2] = v0.z, z[3] = v0.w;
      r[0] = v1.x, r[1] = v1.y, r[2] = v1.z, r[3] = v1.w;
      n[0] = v2.x, n[1] = v2.y, n[2] = v2.z, n[3] = v2.w;
    };
    // After the barrier that follows take(t): the slot goes back to CTA 1.
    auto give_back = [&](int t) {
      if (threadIdx.x != 0 || t + kD2 >= T) return;
      const int slot = t % kD2;
      mbar_expect(smem_addr(&rfull[slot]), kBytesG);
      mbar_arrive_peer_cta(rempty_peer + uint32_t(slot) * 8);
    };
    float hs[4] = {0, 0, 0, 0};  // fp32 state of the 4 cells
    take(0);
    __syncthreads();
    give_back(0);
    for (int t = 0; t < T; ++t) {
      float nh[4] = {bh0, bh0, bh1, bh1};
      h_side((t & 1) ? hb0 : hb1, z, r, nh);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float zz = sig_fast(z[i]), rr = sig_fast(r[i]);
        const float nn = tanh_fast(n[i] + rr * nh[i]);
        hs[i] = nn + zz * (hs[i] - nn);
      }
      const uint32_t w0 = pack2<T16>(hs[0], hs[2]), w1 = pack2<T16>(hs[1], hs[3]);
      uint32_t* hb = (t & 1) ? hb1 : hb0;
      hb[hw0] = w0;
      hb[hw1] = w1;
      if (l1) {  // h1_t into CTA 1's ring
        const int slot = t % kD1;
        if (t >= kD1) mbar_wait_cta(smem_addr(&empty1[slot]), uint32_t((t / kD1 - 1) & 1));  // CTA 1 done with it
        const uint32_t dst = h1r_peer + uint32_t(slot * 32 * kLS) * 4, bar = full1_peer + uint32_t(slot) * 8;
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
      if (t + 1 < T) take(t + 1);
      __syncthreads();  // h_t complete; every warp has read the ring slot of t + 1
      if (t + 1 < T) give_back(t + 1);
    }
    if (!l1) {  // Y_h and the head, from the fp32 state
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int u = i & 2 ? u1 : u0, b = i & 1 ? bc1 : bc0;
        if (b < B) {
          if (p.yh) p.yh[size_t(b) * H + u] = hs[i];
          if (p.head_w) ring[(b - b0) * H + u] = hs[i];  // the ring is free: every slot was consumed
        }
      }
      if (p.head_w) {
        __syncthreads();
        const int cols = min(kRnnWaveRows, B - b0), outs = cols * p.head_n;
        for (int o = warp; o < outs; o += KT) {
          const int c = o / p.head_n, j = o % p.head_n;
          float acc = 0.0f;
          for (int u = lane; u < H; u += 32) acc = fmaf(ring[c * H + u], __ldg(p.head_w + size_t(j) * H + u), acc);
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
  (void)p;  // no clusters before sm_90: rnn_wave_supported() is false there
#endif
}

// One warp per (row, output): a dot product over the hidden units and a shuffle reduction.
__global__ void rnn_head_kernel(const float* h, const float* w, const float* bias, float* out, int batch, int hidden,
                                int outs, bool sigmoid) {
  const int o = int(blockIdx.x) * (int(blockDim.x) >> 5) + (int(threadIdx.x) >> 5), lane = int(threadIdx.x) & 31;
  if (o >= batch * outs) return;
  const int b = o / outs, j = o % outs;
  float acc = 0.0f;
  for (int u = lane; u < hidden; u += 32) acc = fmaf(h[size_t(b) * hidden + u], w[size_t(j) * hidden + u], acc);
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) {
    acc += bias ? bias[j] : 0.0f;
    out[o] = sigmoid ? 1.0f / (1.0f + __expf(-acc)) : acc;
  }
}

template <int KT, int KX, typename T16>
Status launch_typed(const RnnWaveParams& p, cudaStream_t stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(kRoles * ((p.batch + kRnnWaveRows - 1) / kRnnWaveRows)));
  cfg.blockDim = dim3(KT * 32);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kRoles;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  TS_CUDA(cudaLaunchKernelEx(&cfg, rnn_wave_kernel<KT, KX, T16>, p));
  return Status::ok();
}

template <typename T16>
Status launch_h(const RnnWaveParams& p, cudaStream_t s) {
  const bool kx2 = wave_kx(p.input) == 2;
  if (p.hidden == 64) return kx2 ? launch_typed<4, 2, T16>(p, s) : launch_typed<4, 4, T16>(p, s);
  return kx2 ? launch_typed<8, 2, T16>(p, s) : launch_typed<8, 4, T16>(p, s);
}

}  // namespace

bool rnn_wave_shape_supported(int hidden, int input, bool lbr1) {
  return lbr1 && (hidden == 64 || hidden == 128) && input >= 1 && input <= 64;
}

bool rnn_wave_supported(int hidden, int input, bool lbr1) {
  static const bool clusters = [] {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
    return major >= 9;
  }();
  return clusters && rnn_wave_shape_supported(hidden, input, lbr1);
}

std::vector<uint32_t> rnn_wave_pack(const float* w1, const float* r1, const float* w2, const float* r2, int hidden,
                                    int input, bool bf16) {
  const int kt = hidden / 16, kx = wave_kx(input), H = hidden, I = input;
  const int j0 = 3 * kt + 3 * kx, j1 = 3 * kt;  // A fragments (4 words each) per lane: role 0 (R1, W1), roles 1 and 2
  std::vector<uint32_t> out(size_t(kt) * 32 * 4 * (j0 + 2 * j1));
  // A fragment register i of lane: row +8 when i & 1, k +8 (mma positions) when i & 2.
  auto h_word = [&](const float* m, int w, int g, int k, int i, int lane) {
    const int row = g * H + 16 * w + (lane >> 2) + (i & 1 ? 8 : 0);
    const int c = k * 16 + (lane & 3) + (i & 2 ? 4 : 0);  // positions (2q, 2q+1) = units (q, q+8)
    return pack_pair_host(m[size_t(row) * H + c], m[size_t(row) * H + c + 8], bf16);
  };
  auto x_word = [&](int w, int g, int k, int i, int lane) {
    const int row = g * H + 16 * w + (lane >> 2) + (i & 1 ? 8 : 0);
    const int c = k * 16 + 2 * (lane & 3) + (i & 2 ? 8 : 0);
    const float lo = c < I ? w1[size_t(row) * I + c] : 0.0f, hi = c + 1 < I ? w1[size_t(row) * I + c + 1] : 0.0f;
    return pack_pair_host(lo, hi, bf16);
  };
  size_t o = 0;
  for (int role = 0; role < kRoles; ++role) {
    const float* m = role == 0 ? r1 : role == 1 ? w2 : r2;
    const int nj = role == 0 ? j0 : j1;
    for (int w = 0; w < kt; ++w)
      for (int j = 0; j < nj; ++j)
        for (int lane = 0; lane < 32; ++lane)
          for (int i = 0; i < 4; ++i) {
            if (j < 3 * kt) {
              out[o++] = h_word(m, w, j / kt, j % kt, i, lane);
            } else {
              const int jx = j - 3 * kt;
              out[o++] = x_word(w, jx / kx, jx % kx, i, lane);
            }
          }
  }
  return out;
}

std::vector<float> rnn_wave_bias(const std::vector<float>& b1, const std::vector<float>& b2, int hidden) {
  const size_t H = size_t(hidden);
  std::vector<float> out(kRoles * 4 * H, 0.0f);
  for (size_t u = 0; u < H; ++u) {
    // b = [Wb_z, Wb_r, Wb_h, Rb_z, Rb_r, Rb_h]
    out[u] = b1[u] + b1[3 * H + u];
    out[H + u] = b1[H + u] + b1[4 * H + u];
    out[2 * H + u] = b1[2 * H + u];
    out[3 * H + u] = b1[5 * H + u];
    out[4 * H + u] = b2[u] + b2[3 * H + u];
    out[5 * H + u] = b2[H + u] + b2[4 * H + u];
    out[6 * H + u] = b2[2 * H + u];
    out[11 * H + u] = b2[5 * H + u];
  }
  return out;
}

Status launch_rnn_wave(const RnnWaveParams& p, cudaStream_t stream) {
  if (!rnn_wave_supported(p.hidden, p.input, true)) {
    return Status(StatusCode::kUnsupported, "rnn wave: needs a device with clusters (sm_90) and hidden 64/128, input <= 64");
  }
  if (p.head_w && (p.head_n < 1 || p.head_n > kRnnWaveMaxHead || !p.head_out)) {
    return Status(StatusCode::kInvalidArgument, "rnn wave: the head needs 1.." + std::to_string(kRnnWaveMaxHead) +
                                                    " outputs and an output buffer, got " + std::to_string(p.head_n));
  }
  if (p.t_len < 1 || p.batch < 1) return Status::ok();
  return p.bf16 ? launch_h<__nv_bfloat16>(p, stream) : launch_h<__half>(p, stream);
}

Status launch_rnn_head(const float* h, const float* w, const float* bias, float* out, int batch, int hidden, int outs,
                       bool sigmoid, cudaStream_t stream) {
  const int64_t warps = int64_t(batch) * outs;
  if (warps <= 0) return Status::ok();
  if (warps > INT32_MAX) return Status(StatusCode::kInvalidArgument, "rnn head: batch x outputs is too large");
  constexpr int kWarps = 8;
  rnn_head_kernel<<<unsigned((warps + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(h, w, bias, out, batch, hidden, outs,
                                                                                      sigmoid);
  TS_CUDA_LAUNCHED("rnn_head_kernel");
  return Status::ok();
}

}  // namespace ts::engine::cuda
