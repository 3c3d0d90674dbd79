// Tactic "wave": two stacked GRU layers in one launch, as a wavefront over a thread-block
// cluster of three CTAs per 8 batch rows (Hopper, sm_90):
//
//   CTA 0: layer 1        h1_t  = cell(W1·x_t + R1·h1_{t-1})      → h1_t into CTA 1's smem
//   CTA 1: layer 2's input g2_t  = W2·h1_t + biases                → g2_t into CTA 2's smem
//   CTA 2: layer 2        h2_t  = cell(g2_t + R2·h2_{t-1})        → Y, Y_h, the head
//
// Each CTA runs its own loop; they meet only through rings in shared memory: CTA 0 st.async's
// h1_t into CTA 1's ring (depth 4), CTA 1 st.async's g2_t into CTA 2's ring (depth 2), each
// store completing bytes on the consumer's mbarrier, and a consumer hands a slot back with one
// remote mbarrier arrive. So a CTA's step is its own work plus one __syncthreads (CTA 0 and 2:
// their h for the next step), no cluster-wide barrier: the critical path is T steps of the
// slowest CTA plus the two hand-overs, instead of the 2·T steps of two launches, and layer 2's
// input projection (a second matrix–vector product per step) is off its recurrence's path. Each
// CTA keeps its matrix in registers for all T steps (A fragments of mma.sync m16n8k16: weight
// rows are the m dimension, the 8 batch rows of the cluster the n dimension, so batch 1 costs
// what batch 8 costs); h travels fp16/bf16 in the B-fragment order (see below); the fp32 state
// and the gate math stay in the registers of the thread that owns the cell.
//
// Tactic "wave_split" (hidden 128, up to kRnnWaveSplitMaxBatch rows): the same with NS = 2 CTAs
// per role, a 6-CTA cluster of 4-warp CTAs. Each layer-1 / layer-2 CTA owns 64 hidden units
// (half the mma per step) and st.async's its words of h_t to its partner every step, completing
// on the partner's mbarrier (xch, double-buffered like h); each input-side CTA computes W2·h1_t
// for its 64 units from the whole h1_t (both layer-1 CTAs send to both) for the layer-2 CTA of
// the same units. The step is then the half-size product, the cell and one DSMEM hand-over.
//
// PERF NOTE: synchronisation, measured on GRU-2x128 FP16 batch 1, T = 30/60/120, this kernel
// alone (CUDA-graph replays), µs per step in bench/results/archive/rnn-wave-gru1-h200-20261130-2224.txt
// and archive/rnn-wave-gru2-h200-20261201-0207.txt (docs/performance.md, history rows 46556c3,
// e733767, c4b4d18).
//  - Lockstep, one barrier.cluster per step: the slowest.
//  - Decoupled CTAs through rings, cluster-scope acquire waits and release arrives: shorter.
//    ncu: CTA 1 and 2 spin on their full barriers, so CTA 0 sets the pace; its acquire.cluster
//    waits compile to an L1 invalidation (CCTL.IVALL, the top stall), the release.cluster
//    arrives to MEMBAR.ALL.GPU.
//  - CTA-scope waits and arrives (rnn_cluster::mbar_wait_cta, as CUTLASS's cluster barriers):
//    shorter again (kept, with x read through a stepped pointer).
//  - Measured and dropped: tanh.approx.f16x2 for two cells per MUFU (slower: MUFU is not the
//    limit); 16 warps, a warp pair splitting the k tiles and swapping partial sums through
//    shared memory (much slower: the pair barrier and the exchange cost more than the shorter
//    mma chains save); W1·x_t computed ahead by CTA 1 into a ring of CTA 0 (much slower: CTA 0
//    then waits on CTA 1, which waits on CTA 2's ring, so the three run in lockstep).
//  - gru2 (kernel alone, b1, head on): the split over 6 CTAs has a shorter step than the 3-CTA
//    kernel; the next step's W1·x among this step's mma (XI) helps the split (not the 3-CTA
//    kernel); four accumulator chains per gate instead of two: no gain (dropped). ncu of the
//    split kernel (warp-state samples, layer-1 CTAs): a fifth of the loop waiting for the
//    partner's half of h, a tenth computing x addresses (a 64-bit multiply per step: now a
//    stepped offset), a third the mma and the cell; the input side and layer 2 wait on their
//    full barriers (layer 1 sets the pace). Second call, all variants with the stepped x offset:
//    k-tile-major h (KTM: a warp's st.async of h covers 4 sectors instead of 16) shortened the
//    step again; h1_t into the input side's ring after the step's barrier, and the own half of
//    h multiplied while the partner's is in flight, did not (the partner wait fell to a twentieth
//    of layer 1's samples, but the step did not shorten). Kept: XI and KTM (the engine's batch-1
//    time against the late send + overlap); the late send, the overlap and the driver's variant
//    entry point were removed after it.
//
// Layout. H/16 warps per CTA; warp w owns units 16w..16w+15 and all three gates' rows of them
// (three m16 tiles), so a thread holds z, r and both halves of n for its 4 cells (units
// 16w+g, 16w+g+8; batch columns 2·tig, 2·tig+1): no exchange inside the CTA for the cell.
// k order within each 16-wide k tile of h: mma positions (2q, 2q+1) hold units (q, q+8), so
// the owner of units (q, q+8) writes ONE packed 32-bit word per column, and a consumer thread
// reads its whole B operand (2 words per k tile) with one 8-byte load per k tile from a
// k-tile-major buffer ([k tile][column·4 + q & 3][q >> 2]: conflict-free; each warp's words of h
// in one 256-byte block, so that a warp's st.async of h to a peer covers 4 sectors instead of the
// 16 of the row-major layout with padded rows it replaced). The weights are packed in the same order on the host, each lane's A
// fragment as one 16-byte word.
//
// PERF NOTE (perf4096, Nsight Compute of the 3-CTA kernel at b2048,
// bench/results/archive/perf4096-h200-20261201-0916-ncu.txt): the tensor pipe is under a quarter
// busy (an m16n8k16 issues every few times the pipe's own rate), 2 warps per scheduler with few
// eligible: the step is a latency chain, not mma throughput. Layer 1 sets the pace (layer 2 waits
// for g2, the input side for h1); layer 1's own samples: the step's first instruction (long
// scoreboard: the pack of x, which also overwrites the address register of the previous step's
// last st.async), dependency chains, then the step's barrier. x two steps ahead did not change
// the step (archive/perf4096-h200-20261201-0926-xahead.*): not kept.
// PERF NOTE: registers. CTA 0 holds R1 (12·H/16 words) and W1 (12·ceil(I/16) words) per thread,
// ~120 of its registers at H = 128, I = 32; one CTA per SM. 8 batch rows per cluster: batch
// ≤ 8·44 runs in one wave on a 132-SM device; larger batches run in waves (the builder
// times this tactic against the layer-by-layer ones).
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/backends/cuda/cuda_launch.h"
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
using rnn_cluster::mbar_wait2_cta;
using rnn_cluster::peer_addr;
using rnn_cluster::smem_addr;
using rnn_cluster::st_async;
using rnn_cluster::st_async4;

// Ring depths: h1 slots (CTA 0 → 1) and g2 slots (CTA 1 → 2): how far a CTA may run ahead.
constexpr int kD1 = 4, kD2 = 2;
constexpr int kGxF = 12;  // floats of layer 2's input projection per thread and slot (3 gates × 4 cells)
#endif

// NS CTAs per recurrence: 1 (tactic "wave": 3 CTAs of KT warps per cluster) or 2 (tactic
// "wave_split": 6 CTAs of KT/2 warps; each layer's recurrence and layer 2's input projection
// split by hidden units, the halves of h swapped through distributed shared memory every step).
// Layer 1 issues the next step's input projection W1·x_{t+1} among this step's h-side mma
// (instead of after the cell); h lives in shared memory k-tile-major (see above).
template <int KT, int KX, typename T16, int NS>
__global__ void __launch_bounds__(KT / NS * 32, 1) rnn_wave_kernel(RnnWaveParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int NW = KT / NS;      // warps per CTA
  constexpr int kHW = KT * 64;     // words per h buffer
  constexpr int H = KT * 16;
  constexpr int kSlotG = NW * 32 * kGxF;  // floats per g2 slot
  static_assert(kD2 * kSlotG >= kRnnWaveRows * H, "the head's scratch must fit the g2 ring");
  static_assert(NS == 1 || NS == 2, "one or two CTAs per recurrence");
  __shared__ __align__(16) uint32_t hb[2][kHW];     // layer 1 and 2: h, double-buffered
  __shared__ __align__(16) uint32_t h1r[kD1][kHW];  // layer 2's input side: h1 ring
  __shared__ __align__(16) float gxb[kD2][kSlotG];       // layer 2: g2 ring (after the loop: the head's h2)
  __shared__ __align__(8) uint64_t full1[kD1], empty1[kD1], full2[kD2], empty2[kD2], xch[2];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int role = rank / NS, part = rank % NS;  // role 0: layer 1, 1: layer 2's input side, 2: layer 2
  const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, grp = lane >> 2, tig = lane & 3;
  const int gw = part * NW + warp;  // this warp's 16 hidden units: the k tile its h words fill
  const int B = p.batch, T = p.t_len, I = p.input;
  const int b0 = int(blockIdx.x / (kRoles * NS)) * kRnnWaveRows;
  const int u0 = gw * 16 + grp, u1 = u0 + 8;
  const int bc0 = b0 + 2 * tig, bc1 = bc0 + 1;  // batch rows of this thread's accumulator columns
  const int bx = b0 + grp;                      // batch row of this thread's B column (x)

  uint32_t ah[3][KT][4];  // h-side A fragments: R1 (layer 1), W2 (layer 2's input side), R2 (layer 2)
  uint32_t ax[3][KX][4];  // W1 (layer 1)
  {
    constexpr int kJ0 = 3 * KT + 3 * KX, kJ = 3 * KT;  // A fragments per lane: role 0 (R1, W1), roles 1 and 2
    const size_t blk0 = size_t(KT) * 32 * kJ0, blk = size_t(KT) * 32 * kJ;
    const int nj = role == 0 ? kJ0 : kJ;
    const uint4* f = reinterpret_cast<const uint4*>(p.frags) + (role == 0 ? 0 : role == 1 ? blk0 : blk0 + blk) +
                     size_t(gw) * nj * 32 + lane;
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
        const uint4 v = role == 0 ? __ldg(f + (3 * KT + g * KX + k) * 32) : make_uint4(0, 0, 0, 0);
        ax[g][k][0] = v.x, ax[g][k][1] = v.y, ax[g][k][2] = v.z, ax[g][k][3] = v.w;
      }
  }
  const float* bias = p.bias + size_t(role) * 4 * H;
  const float bz0 = bias[u0], bz1 = bias[u1], br0 = bias[H + u0], br1 = bias[H + u1];
  const float bn0 = bias[2 * H + u0], bn1 = bias[2 * H + u1], bh0 = bias[3 * H + u0], bh1 = bias[3 * H + u1];

  for (int i = int(threadIdx.x); i < 2 * kHW; i += int(blockDim.x)) (&hb[0][0])[i] = 0u;
  // Bytes per slot: a whole h (both halves when split), a g2 slot, the partner's half of h.
  constexpr uint32_t kBytes1 = KT * 32 * 8, kBytes2 = NW * 32 * kGxF * 4, kBytesX = NW * 32 * 8;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kD1; ++i) {
      mbar_init(smem_addr(&full1[i]), 1);
      mbar_init(smem_addr(&empty1[i]), NS);  // every input-side CTA hands the slot back
    }
    for (int i = 0; i < kD2; ++i) {
      mbar_init(smem_addr(&full2[i]), 1);
      mbar_init(smem_addr(&empty2[i]), 1);
    }
    for (int i = 0; i < 2; ++i) mbar_init(smem_addr(&xch[i]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (role == 1)
      for (int i = 0; i < kD1 && i < T; ++i) mbar_expect(smem_addr(&full1[i]), kBytes1);
    if (role == 2)
      for (int i = 0; i < kD2 && i < T; ++i) mbar_expect(smem_addr(&full2[i]), kBytes2);
    if (NS > 1 && role != 1)  // the partner's h_j for j < T - 1 lands on xch[j & 1]
      for (int i = 0; i < 2 && i < T - 1; ++i) mbar_expect(smem_addr(&xch[i]), kBytesX);
  }
  // Peer addresses (rank = role·NS + part): layer 1 → each input-side CTA's h1 ring and full1;
  // input side q → layer-2 CTA q's g2 ring and full2, each layer-1 CTA's empty1; layer 2 → its
  // input side's empty2; layers 1 and 2 when split → the partner's h buffers and xch.
  uint32_t h1r_peer[NS], full1_peer[NS], empty1_peer[NS];
#pragma unroll
  for (int q = 0; q < NS; ++q) {
    h1r_peer[q] = peer_addr(smem_addr(&h1r[0][0]), NS + q);
    full1_peer[q] = peer_addr(smem_addr(&full1[0]), NS + q);
    empty1_peer[q] = peer_addr(smem_addr(&empty1[0]), q);
  }
  const uint32_t gx_peer = peer_addr(smem_addr(&gxb[0][0]), 2 * NS + part),
                 full2_peer = peer_addr(smem_addr(&full2[0]), 2 * NS + part);
  const uint32_t empty2_peer = peer_addr(smem_addr(&empty2[0]), NS + part);
  const int mate = role * NS + (NS - 1 - part);  // the partner CTA of a split recurrence
  const uint32_t hb_mate = peer_addr(smem_addr(&hb[0][0]), mate), xch_mate = peer_addr(smem_addr(&xch[0]), mate);
  // Launched as a programmatic dependent (launch_typed, programmatic_launch_ok): up to here only
  // constants (the weights, the biases) were read and only this CTA's shared memory written; x,
  // which the kernel before (the zero-copy copy-in) writes, and every global write come after
  // the wait. A no-op when the launch was not programmatic.
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  cluster.sync();  // barriers initialised, buffers zeroed, every CTA running before any remote access

  // Where this thread's packed h words go: column 2·tig and 2·tig+1, k tile = gw; row (column c,
  // q & 3) holds word q >> 2 of mma positions (2q, 2q+1), q = the unit within the tile mod 8.
  const int hw0 = gw * 64 + ((2 * tig) * 4 + (grp & 3)) * 2 + (grp >> 2);
  const int hw1 = hw0 + 8;

  // x_t for this thread's B column, k = 16·kx + 2·tig + {0, 1, 8, 9}: a pointer that steps by one
  // time step ([T][B][I] or, batch-first, [B][T][I]) and a mask of the elements that exist.
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
  float xr[KX][4] = {};
  size_t xo = 0;  // element offset of the next x_t to load: stepped, no per-step 64-bit multiply
  auto load_x = [&]() {
    const float* xp = xq + xo;
    xo += x_step;
#pragma unroll
    for (int kx = 0; kx < KX; ++kx)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        xr[kx][e] = (x_ok >> (kx * 4 + e)) & 1u ? __ldg(xp + 16 * kx + (e & 1) + (e & 2 ? 8 : 0)) : 0.0f;
  };
  float az[4], ar[4], an[4];  // layer 1: z, r and x-side n of the step (biases + W1·x)
  auto x_init = [&](float (&z)[4], float (&r)[4], float (&n)[4]) {
    z[0] = z[1] = bz0;
    z[2] = z[3] = bz1;
    r[0] = r[1] = br0;
    r[2] = r[3] = br1;
    n[0] = n[1] = bn0;
    n[2] = n[3] = bn1;
  };
  auto x_part = [&]() {
    x_init(az, ar, an);
#pragma unroll
    for (int kx = 0; kx < KX; ++kx) {
      const uint32_t x0 = pack2<T16>(xr[kx][0], xr[kx][1]), x1 = pack2<T16>(xr[kx][2], xr[kx][3]);
      mma16816<T16>(az, ax[0][kx], x0, x1);
      mma16816<T16>(ar, ax[1][kx], x0, x1);
      mma16816<T16>(an, ax[2][kx], x0, x1);
    }
  };
  // g_i += M_i · h for the three gate tiles, two accumulator chains per gate (even/odd register
  // positions): h_load fetches the B words of positions [P0, P1), h_mma multiplies them. With
  // with_x (layer 1) also the next step's x side into xz, xrr, xn: one k tile of x after each
  // pair of h tiles, so that those mma fill the h chains' latency.
  uint32_t xb[KX][2];
  float xz[4], xrr[4], xn[4];
  uint32_t bf[2 * KT];
  auto h_load = [&](const uint32_t* hrow, auto p0c, auto p1c) {
    constexpr int P0 = decltype(p0c)::value, P1 = decltype(p1c)::value;
    const uint32_t* base = hrow + (grp * 4 + tig) * 2;
#pragma unroll
    for (int k = P0; k < P1; ++k) {
      const uint2 v = *reinterpret_cast<const uint2*>(base + k * 64);
      bf[2 * k] = v.x, bf[2 * k + 1] = v.y;
    }
  };
  auto h_mma = [&](auto p0c, auto p1c, float (&g0)[4], float (&g1)[4], float (&g2)[4], float (&e0)[4], float (&e1)[4],
                   float (&e2)[4], auto with_x) {
    constexpr int P0 = decltype(p0c)::value, P1 = decltype(p1c)::value;
    constexpr bool kX = decltype(with_x)::value;
#pragma unroll
    for (int k = P0; k < P1; k += 2) {
      mma16816<T16>(g0, ah[0][k], bf[2 * k], bf[2 * k + 1]);
      mma16816<T16>(g1, ah[1][k], bf[2 * k], bf[2 * k + 1]);
      mma16816<T16>(g2, ah[2][k], bf[2 * k], bf[2 * k + 1]);
      mma16816<T16>(e0, ah[0][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
      mma16816<T16>(e1, ah[1][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
      mma16816<T16>(e2, ah[2][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
      if constexpr (kX) {
        if ((k - P0) / 2 < KX) {
          const int kx = (k - P0) / 2;
          mma16816<T16>(xz, ax[0][kx], xb[kx][0], xb[kx][1]);
          mma16816<T16>(xrr, ax[1][kx], xb[kx][0], xb[kx][1]);
          mma16816<T16>(xn, ax[2][kx], xb[kx][0], xb[kx][1]);
        }
      }
    }
    if constexpr (kX) {
#pragma unroll
      for (int kx = (P1 - P0) / 2; kx < KX; ++kx) {
        mma16816<T16>(xz, ax[0][kx], xb[kx][0], xb[kx][1]);
        mma16816<T16>(xrr, ax[1][kx], xb[kx][0], xb[kx][1]);
        mma16816<T16>(xn, ax[2][kx], xb[kx][0], xb[kx][1]);
      }
    }
  };
  auto add_to = [](float (&g)[4], const float (&e)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) g[i] += e[i];
  };
  using P_0 = std::integral_constant<int, 0>;
  using P_KT = std::integral_constant<int, KT>;
  // The whole product in one go (no overlap): g_i += M_i · h.
  auto h_side = [&](const uint32_t* hrow, float (&g0)[4], float (&g1)[4], float (&g2)[4], auto with_x) {
    float e0[4] = {0, 0, 0, 0}, e1[4] = {0, 0, 0, 0}, e2[4] = {0, 0, 0, 0};
    h_load(hrow, P_0{}, P_KT{});
    h_mma(P_0{}, P_KT{}, g0, g1, g2, e0, e1, e2, with_x);
    add_to(g0, e0), add_to(g1, e1), add_to(g2, e2);
  };
  using NoX = std::integral_constant<bool, false>;
  float hs[4] = {0, 0, 0, 0};  // fp32 state of the 4 cells (layer 1: h1, layer 2: h2)
  auto cell = [&](const float (&z)[4], const float (&r)[4], const float (&nx)[4], const float (&nh)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float zz = sig_fast(z[i]), rr = sig_fast(r[i]);
      const float n = tanh_fast(nx[i] + rr * nh[i]);
      hs[i] = n + zz * (hs[i] - n);
    }
  };
  // Split recurrence: wait for the partner's half of h_{s-1} (xch[(s-1) & 1]) and re-arm that
  // barrier for h_{s+1}; send this CTA's words of h_s to the partner (not the last step's: no one
  // reads it).
  auto mate_wait = [&](int s) {
    if constexpr (NS > 1) {
      if (s > 0) {
        const int j = s - 1;
        mbar_wait_cta(smem_addr(&xch[j & 1]), uint32_t((j >> 1) & 1));
        if (threadIdx.x == 0 && j + 2 < T - 1) mbar_expect(smem_addr(&xch[j & 1]), kBytesX);
      }
    }
  };
  auto mate_send = [&](int s, uint32_t w0, uint32_t w1) {
    if constexpr (NS > 1) {
      if (s < T - 1) {
        const uint32_t dst = hb_mate + uint32_t((s & 1) * kHW) * 4, bar = xch_mate + uint32_t(s & 1) * 8;
        st_async(dst + uint32_t(hw0) * 4, w0, bar);
        st_async(dst + uint32_t(hw1) * 4, w1, bar);
      }
    } else {
      (void)s, (void)w0, (void)w1;
    }
  };

  if (role == 0) {  // layer 1: its own recurrence; h1_t into the input side's ring
    load_x();
    x_part();
    if (T > 1) load_x();
    for (int s = 0; s < T; ++s) {
      const int slot = s % kD1;
      const uint32_t* hprev = hb[(s + 1) & 1];
      float nh[4] = {bh0, bh0, bh1, bh1};
#pragma unroll
      for (int kx = 0; kx < KX; ++kx) xb[kx][0] = pack2<T16>(xr[kx][0], xr[kx][1]), xb[kx][1] = pack2<T16>(xr[kx][2], xr[kx][3]);
      if (s + 2 < T) load_x();
      x_init(xz, xrr, xn);
      mate_wait(s);
      h_side(hprev, az, ar, nh, std::true_type{});
      cell(az, ar, an, nh);
      const uint32_t w0 = pack2<T16>(hs[0], hs[2]), w1 = pack2<T16>(hs[1], hs[3]);
      hb[s & 1][hw0] = w0;
      hb[s & 1][hw1] = w1;
      mate_send(s, w0, w1);
      if (s >= kD1) mbar_wait_cta(smem_addr(&empty1[slot]), uint32_t((s / kD1 - 1) & 1));  // the input side is done with it
#pragma unroll
      for (int q = 0; q < NS; ++q) {
        const uint32_t dst = h1r_peer[q] + uint32_t(slot * kHW) * 4, bar = full1_peer[q] + uint32_t(slot) * 8;
        st_async(dst + uint32_t(hw0) * 4, w0, bar);
        st_async(dst + uint32_t(hw1) * 4, w1, bar);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) az[i] = xz[i], ar[i] = xrr[i], an[i] = xn[i];
      __syncthreads();
    }
  } else if (role == 1) {  // layer 2's input projection: h1_t from the ring → g2_t into layer 2's ring
    for (int t = 0; t < T; ++t) {
      const int slot = t % kD1, slot2 = t % kD2;
      mbar_wait_cta(smem_addr(&full1[slot]), uint32_t((t / kD1) & 1));
      float z[4] = {bz0, bz0, bz1, bz1}, r[4] = {br0, br0, br1, br1}, n[4] = {bn0, bn0, bn1, bn1};
      h_side(h1r[slot], z, r, n, NoX{});
      if (t >= kD2) mbar_wait_cta(smem_addr(&empty2[slot2]), uint32_t((t / kD2 - 1) & 1));
      const uint32_t dst = gx_peer + uint32_t(slot2 * kSlotG + (warp * 32 + lane) * kGxF) * 4,
                     bar = full2_peer + uint32_t(slot2) * 8;
      st_async4(dst, z[0], z[1], z[2], z[3], bar);
      st_async4(dst + 16, r[0], r[1], r[2], r[3], bar);
      st_async4(dst + 32, n[0], n[1], n[2], n[3], bar);
      __syncthreads();  // every warp has read the h1 slot
      if (threadIdx.x == 0) {
        if (t + kD1 < T) mbar_expect(smem_addr(&full1[slot]), kBytes1);
#pragma unroll
        for (int q = 0; q < NS; ++q) mbar_arrive_peer_cta(empty1_peer[q] + uint32_t(slot) * 8);
      }
    }
  } else {  // layer 2: its own recurrence on g2_t from the ring
    for (int t = 0; t < T; ++t) {
      const int slot2 = t % kD2;
      const uint32_t* hprev = hb[(t + 1) & 1];
      if constexpr (NS > 1) {
        if (t > 0) {  // g2_t and the partner's half of h2_{t-1}: both polls in flight at once
          const int j = t - 1;
          mbar_wait2_cta(smem_addr(&full2[slot2]), uint32_t((t / kD2) & 1), smem_addr(&xch[j & 1]), uint32_t((j >> 1) & 1));
          if (threadIdx.x == 0 && j + 2 < T - 1) mbar_expect(smem_addr(&xch[j & 1]), kBytesX);
        } else {
          mbar_wait_cta(smem_addr(&full2[slot2]), 0u);
        }
      } else {
        mbar_wait_cta(smem_addr(&full2[slot2]), uint32_t((t / kD2) & 1));
      }
      const float4* src = reinterpret_cast<const float4*>(&gxb[slot2][(warp * 32 + lane) * kGxF]);
      const float4 v0 = src[0], v1 = src[1], v2 = src[2];
      float z[4] = {v0.x, v0.y, v0.z, v0.w}, r[4] = {v1.x, v1.y, v1.z, v1.w};
      const float n[4] = {v2.x, v2.y, v2.z, v2.w};
      float nh[4] = {bh0, bh0, bh1, bh1};
      h_side(hprev, z, r, nh, NoX{});
      cell(z, r, n, nh);
      const uint32_t w0 = pack2<T16>(hs[0], hs[2]), w1 = pack2<T16>(hs[1], hs[3]);
      hb[t & 1][hw0] = w0;
      hb[t & 1][hw1] = w1;
      mate_send(t, w0, w1);
      if (p.y) {
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
      __syncthreads();  // h2_t complete; every warp has read the g2 slot
      if (threadIdx.x == 0) {
        if (t + kD2 < T) mbar_expect(smem_addr(&full2[slot2]), kBytes2);
        mbar_arrive_peer_cta(empty2_peer + uint32_t(slot2) * 8);
      }
    }
  }
  // The time loop is done: a programmatic dependent launched after this kernel (the zero-copy
  // copy-out) may be scheduled now, under this tail; it waits for the whole grid before reading.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  // Y_h and the head, from layer 2's fp32 state. The head's h2 goes to the g2 ring of layer 2's
  // first CTA: free once its loop is done (every slot consumed before its last barrier), which a
  // split stack knows only after a cluster barrier.
  if constexpr (NS > 1) cluster.sync();
  if (role == 2) {
    float* const hlast = NS > 1 ? cluster.map_shared_rank(&gxb[0][0], 2 * NS) : &gxb[0][0];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int u = i & 2 ? u1 : u0, b = i & 1 ? bc1 : bc0;
      if (b < B) {
        if (p.yh) p.yh[size_t(b) * H + u] = hs[i];
        if (p.head_w) hlast[(b - b0) * H + u] = hs[i];
      }
    }
  }
  if constexpr (NS > 1) {
    if (p.head_w) cluster.sync();
  } else if (role == 2 && p.head_w) {
    __syncthreads();
  }
  if (role == 2 && part == 0 && p.head_w) {
    const float* const hlast = &gxb[0][0];
    const int cols = min(kRnnWaveRows, B - b0), outs = cols * p.head_n;
    for (int o = warp; o < outs; o += NW) {
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
  if constexpr (NS == 1) cluster.sync();  // no CTA leaves while a peer may still signal into its shared memory
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

template <int KT, int KX, typename T16, int NS>
Status launch_typed(const RnnWaveParams& p, cudaStream_t stream) {
  const unsigned clusters = unsigned((p.batch + kRnnWaveRows - 1) / kRnnWaveRows);
  TS_CUDA(rnn_device::launch_clustered(rnn_wave_kernel<KT, KX, T16, NS>, kRoles * NS * clusters, KT / NS * 32,
                                       kRoles * NS, stream, p, programmatic_launch_ok(stream)));
  return Status::ok();
}

// The production kernels: "wave" and, at hidden 128, "wave_split" up to kRnnWaveSplitMaxBatch.

template <typename T16>
Status launch_h(const RnnWaveParams& p, cudaStream_t s) {
  const bool kx2 = wave_kx(p.input) == 2;
  if (p.hidden == 64) return kx2 ? launch_typed<4, 2, T16, 1>(p, s) : launch_typed<4, 4, T16, 1>(p, s);
  if (p.split && p.batch <= kRnnWaveSplitMaxBatch) {
    return kx2 ? launch_typed<8, 2, T16, 2>(p, s) : launch_typed<8, 4, T16, 2>(p, s);
  }
  return kx2 ? launch_typed<8, 2, T16, 1>(p, s) : launch_typed<8, 4, T16, 1>(p, s);
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
