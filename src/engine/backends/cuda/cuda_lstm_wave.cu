// Tactic "wave" of LSTMStack: two stacked LSTM layers in one launch, as a wavefront over a
// thread-block cluster of four CTAs per 8·NN batch rows (Hopper, sm_90; NN n tiles per cluster,
// below). The GRU's wavefront (cuda_rnn_wave.cu) with one more CTA:
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
// st.async's its step into the consumer's ring (gate slots: 16 floats per thread and n tile,
// depth 2; h1 slots: one packed fp16/bf16 word per thread, column pair and n tile, depth 4), each store completing
// bytes on the consumer's mbarrier; the consumer hands a slot back with one remote arrive after
// the __syncthreads that ends its step. CTA 0 has no inbound ring and no barrier: its warps run
// ahead until the ring is full.
//
// Tactic "wave_split" (hidden 128, up to kLstmWaveSplitMaxBatch rows): the same four roles with
// two CTAs each, an 8-CTA cluster of 4-warp CTAs, as the GRU's "wave_split": each CTA owns 64 of
// the hidden units. The layer CTAs (1 and 3) st.async their words of h_t to their partner every
// step, completing on the partner's mbarrier (xch, double-buffered like h); both layer-1 CTAs
// send h1_t to both layer-2 input CTAs, and each input CTA feeds the layer-2 CTA of its units. A
// recurrence CTA then runs one warp per SM sub-partition instead of two: half the mma and half
// the gate math per sub-partition and step, for one DSMEM hand-over.
//
// Layout. Warp w (of the role's KT = H/16 warps) owns units 16w..16w+15 and all four gates' rows
// of them (four m16 tiles), so a thread holds i, o, f, c̃ of its 4 cells (units 16w+g, 16w+g+8;
// batch columns 2·tig, 2·tig+1) and keeps c and h in fp32 registers. h travels fp16/bf16 in the
// GRU's B-fragment order (mma positions (2q, 2q+1) of a k tile hold units (q, q+8)), stored
// k-tile-major (WaveSmem); the weights are packed in the same order on the host.
//
// n tiles (hidden 128, not split; LstmWaveParams::n_tiles, else choose_n_tiles by batch): a
// cluster serves 8·NN batch rows, each warp multiplying its resident A fragments by NN B
// fragments per k tile (NN independent accumulator chains per gate), every per-column piece (x,
// the rings' slots and byte counts, h, Y / Y_h / Y_c, the head) over the NN tiles. Fewer clusters
// for a batch: fewer waves of them where the batch does not fit the GPU at once (4-CTA clusters:
// about 30 at a time on a 132-SM device). The shared memory (72 KB at NN = 2) is dynamic.
//
// PERF NOTE (lstm3): by the builder's node times at batch 1 and T = 1..120, wave_split has the
// shortest step of the three layouts and about the same fixed part, and it stays ahead up to 64
// rows; the k-tile-major h shortened every layout's step (bench/results/lstm3-h200-20261201-0514.json,
// archive/gpu-tests-lstm3-h200-20261201-0514.log). At batch 1 only batch column 0 of the 8 is
// real; the cell then computes 2 of its 4 cells per thread (a uniform branch). Measured and not
// kept, no gain: the split's epilogue with the partner's half of the last h2 st.async'd onto an
// mbarrier (one cluster barrier instead of two) and the head's weights staged in shared memory.
// PERF NOTE (lstmwide): the gate slots laid out without bank conflicts (WaveSmem) made the step
// shorter at every batch, batch 1 included (bench/results/lstmwide-h200-20261201-0827-bench.json
// against -0825-before-bench.json). The last h2 for the head now goes into its own buffer (hl)
// during the last step, so h is not carried in registers across steps and the split with a head
// meets at one cluster barrier.
// PERF NOTE (perf4096, Nsight Compute of "wave" NN = 2 at b4096,
// bench/results/archive/perf4096-h200-20261201-0916-ncu.txt): the tensor pipe is a quarter busy,
// 2 warps per scheduler with few eligible; the recurrence CTAs spend their samples mostly on
// fixed-latency dependency chains, then on gate slots and the step's barrier. lrole 0 waits on its
// x loads most of its time, but that is slack: x two steps ahead (two register sets) left the
// time unchanged (archive/perf4096-h200-20261201-0926-xahead.*) and was not kept.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_launch.h"  // programmatic_launch_ok
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
#endif

constexpr int kGateWords = 16;   // gate pre-activations per thread, n tile and step: 4 gates × 4 cells
constexpr int kDG = 2, kDH = 4;  // ring depths: gate slots (CTA 0 → 1, 2 → 3), h1 slots (1 → 2)

// Shared memory (dynamic), at the same offsets in every CTA (a producer addresses its
// consumer's copy): the inbound ring (gate slots in layer CTAs, h1 slots in layer 2's input
// CTAs), the CTA's own h (layer CTAs; double-buffered), the inbound ring's "full" and the
// outbound ring's "empty" barriers, and (split) the barriers of the partner's half of h. NN n
// tiles of 8 batch columns per cluster. h is stored k-tile-major: block (k tile j, n tile n) of
// 64 words at (j·NN + n)·64 holds, at ((column·4 + (q & 3))·2 + (q >> 2)), mma positions (2q,
// 2q+1) = units (16j + q, 16j + q + 8) of that tile's batch column, so a thread's B operand of one
// k and n tile is one 8-byte load and a warp's words of h (one k tile) are NN 256-byte blocks. A
// gate slot is [n tile][gate][thread] float4s (a thread's 4 cells of one gate): a warp's float4
// st.async and loads cover 512 contiguous bytes. PERF NOTE: with a thread's 16·NN words
// contiguous instead ([thread][n tile][gate]) those accesses were 16-way (NN = 1) and 32-way
// (NN ≥ 2) bank conflicts, and more n tiles lengthened the step far more than with this layout
// (the kernel at one wave of clusters, bench/results/archive/lstmwide-h200-20261201-0825-before-tests.log
// against -0827-tests.log; this layout's ratios are step_cost below).
template <int KT, int NW, int NN>
struct WaveSmem {
  static constexpr int kSlotH = KT * 64 * NN;                 // a whole h, all 8·NN columns
  static constexpr int kSlotG = NW * 32 * kGateWords * NN;    // one step's gates of this CTA's units
  static constexpr int kRing = kDG * kSlotG > kDH * kSlotH ? kDG * kSlotG : kDH * kSlotH;
  uint32_t ring[kRing];
  uint32_t hb[2][kSlotH];
  float hl[kLstmWaveRows * NN * KT * 16];  // layer 2's (first) CTA: the last h of its rows, fp32, for the head
  uint64_t full[4], empty[4], xch[2];
};

// kRoles CTA roles per cluster: 4 (tactics "wave", "wave_split") or 3 (tactic "wave3": CTA 0 is
// layer 1 with its own input projection, W1's A fragments in its otherwise unused inbound ring;
// CTAs 1 and 2 the 4-role layout's 2 and 3). `lrole` below is a CTA's role in the 4-role layout.
// NS CTAs per role (tactic "wave_split": 2, each owning half of the hidden units with KT/2 warps;
// the layer CTAs swap their halves of h every step, both layer-1 CTAs feed both layer-2 input
// CTAs; else 1). Cluster rank = role·NS + part. NN n tiles (8·NN batch rows) per cluster: each
// warp multiplies its A fragments by NN B fragments per k tile (NN = 1: two accumulator chains
// per gate, even and odd k tiles; NN > 1: the n tiles are the independent chains).
template <int KT, int KX, typename T16, int kRoles, int NS, int NN>
__global__ void __launch_bounds__(KT / NS * 32, 1) lstm_wave_kernel(LstmWaveParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kW = KT / NS, H = KT * 16;  // warps per CTA, hidden units
  constexpr int kRows = kLstmWaveRows * NN;  // batch rows per cluster
  using S = WaveSmem<KT, kW, NN>;
  constexpr uint32_t kBytesG = kW * 32 * kGateWords * 4 * NN;  // per gate slot
  constexpr uint32_t kBytesH = KT * 32 * 8 * NN;               // per h1 slot (both halves when split)
  constexpr uint32_t kBytesX = kW * 32 * 8 * NN;               // the partner's half of h
  static_assert(kRoles == 4 || (kRoles == 3 && NS == 1 && sizeof(S::ring) >= size_t(kW) * kGates * KX * 32 * 16),
                "wave3: W1's fragments must fit layer 1's ring");
  static_assert(NS == 1 || (NS == 2 && kRoles == 4 && NN == 1), "the split runs the 4-role layout, 8 rows per cluster");
  extern __shared__ __align__(16) unsigned char lstm_wave_smem[];
  S& sm = *reinterpret_cast<S*>(lstm_wave_smem);
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int role = rank / NS, part = rank % NS;
  const int lrole = kRoles == 4 ? role : role + 1;
  const bool own_x = kRoles == 3 && role == 0;  // layer 1 computing W1·x_t itself
  const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, grp = lane >> 2, tig = lane & 3;
  const int gw = part * kW + warp;  // this warp's 16 hidden units (the k tile its words of h fill)
  const int B = p.batch, T = p.t_len;
  const int b0 = int(blockIdx.x / (kRoles * NS)) * kRows;
  const int u0 = gw * 16 + grp, u1 = u0 + 8;
  // Batch rows of this thread's accumulator columns in n tile n: bc0 + 8n and bc0 + 8n + 1.
  const int bc0 = b0 + 2 * tig;
  // One batch row in this cluster (batch 1): only the cells of column 0 (cells 0 and 2 of n tile
  // 0 of every thread) are computed; the others would be thrown away. Uniform across the cluster.
  const bool one_col = B - b0 == 1;

  for (int i = int(threadIdx.x); i < 2 * S::kSlotH; i += int(blockDim.x)) (&sm.hb[0][0])[i] = 0u;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 4; ++i) {
      mbar_init(smem_addr(&sm.full[i]), 1);
      mbar_init(smem_addr(&sm.empty[i]), lrole == 1 ? NS : 1);  // h1 slots: every input CTA hands them back
    }
    for (int i = 0; i < 2; ++i) mbar_init(smem_addr(&sm.xch[i]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    const int depth = lrole == 2 ? kDH : kDG;
    if (role > 0)
      for (int i = 0; i < depth && i < T; ++i) mbar_expect(smem_addr(&sm.full[i]), lrole == 2 ? kBytesH : kBytesG);
    if (NS > 1 && (lrole == 1 || lrole == 3))  // the partner's h_j for j < T - 1 lands on xch[j & 1]
      for (int i = 0; i < 2 && i < T - 1; ++i) mbar_expect(smem_addr(&sm.xch[i]), kBytesX);
  }
  uint4* const w1s = reinterpret_cast<uint4*>(&sm.ring[0]);  // wave3 CTA 0: W1 [warp][gate][kx][lane]
  if (own_x) {
    const uint4* f = reinterpret_cast<const uint4*>(p.frags);  // W1's block has this very layout
    for (int idx = int(threadIdx.x); idx < kW * kGates * KX * 32; idx += int(blockDim.x)) w1s[idx] = __ldg(f + idx);
  }
  // Peers: the consumers of this CTA's output (lrole 1: every layer-2 input CTA, else the one of
  // the same part) and the producers it hands slots back to (lrole 2: every layer-1 CTA, else the
  // one of the same part); the partner of a split layer.
  const int n_down = lrole == 1 ? NS : 1, n_up = lrole == 2 ? NS : 1;
  uint32_t ring_down[NS], full_down[NS], empty_up[NS];
#pragma unroll
  for (int q = 0; q < NS; ++q) {
    const int down = role + 1 < kRoles ? (role + 1) * NS + (n_down > 1 ? q : part) : rank;
    const int up = role > 0 ? (role - 1) * NS + (n_up > 1 ? q : part) : rank;
    ring_down[q] = peer_addr(smem_addr(&sm.ring[0]), down);
    full_down[q] = peer_addr(smem_addr(&sm.full[0]), down);
    empty_up[q] = peer_addr(smem_addr(&sm.empty[0]), up);
  }
  const int mate = role * NS + (NS - 1 - part);
  const uint32_t hb_mate = peer_addr(smem_addr(&sm.hb[0][0]), mate), xch_mate = peer_addr(smem_addr(&sm.xch[0]), mate);
  // Each role below loads its weights into registers, then joins this cluster barrier (barriers
  // initialised, h zeroed, W1 staged, every CTA running before any remote access), so that the
  // loads are in flight while the CTAs of the cluster meet. Launched as a programmatic dependent
  // (WaveKernel::launch, programmatic_launch_ok; cuda_launch.h): up to the wait only constants (the
  // weights, the biases) were read and only this CTA's shared memory written; x, which the kernel
  // before (the zero-copy copy-in) writes, and every global write come after it. A no-op when the
  // launch was not programmatic.
  auto start = [&]() {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    cluster.sync();
  };

  // This CTA's matrix (lrole 0: W1 with K = KX; lroles 1-3: R1, W2, R2 with K = KT) into registers.
  auto load_frags = [&](auto& a, int k_tiles) {
    const size_t blk0 = size_t(KT) * 32 * kGates * 4 * KX, blk = size_t(KT) * 32 * kGates * 4 * KT;
    const uint4* f = reinterpret_cast<const uint4*>(p.frags + (lrole == 0 ? 0 : blk0 + size_t(lrole - 1) * blk)) +
                     size_t(gw) * kGates * k_tiles * 32 + lane;
#pragma unroll
    for (int g = 0; g < kGates; ++g)
#pragma unroll
      for (int k = 0; k < int(sizeof(a[0]) / sizeof(a[0][0])); ++k) {
        const uint4 v = __ldg(f + (g * k_tiles + k) * 32);
        a[g][k][0] = v.x, a[g][k][1] = v.y, a[g][k][2] = v.z, a[g][k][3] = v.w;
      }
  };
  // Inbound slot t: wait until its bytes are in; after the CTA's closing __syncthreads, re-arm
  // it for step t + depth and hand it back to the producer(s).
  // CTA-scope waits and remote arrives (rnn_cluster::mbar_wait_cta): the bytes a peer's st.async
  // completed on a barrier are visible once its phase flips; the cluster-scope acquire / release
  // forms cost an L1 invalidation per wait and a MEMBAR.ALL.GPU per arrive (the GRU's PERF NOTE,
  // cuda_rnn_wave.cu).
  auto wait_in = [&](int t, int depth) { mbar_wait_cta(smem_addr(&sm.full[t % depth]), uint32_t((t / depth) & 1)); };
  auto release_in = [&](int t, int depth, uint32_t bytes) {
    if (threadIdx.x == 0) {
      const int slot = t % depth;
      if (t + depth < T) mbar_expect(smem_addr(&sm.full[slot]), bytes);
#pragma unroll
      for (int q = 0; q < NS; ++q)
        if (q < n_up) mbar_arrive_peer_cta(empty_up[q] + uint32_t(slot) * 8);
    }
  };
  // Outbound slot t: wait until the consumer(s) have handed it back (from step `depth` on).
  auto wait_out = [&](int t, int depth) {
    if (t >= depth) mbar_wait_cta(smem_addr(&sm.empty[t % depth]), uint32_t((t / depth - 1) & 1));
  };
  using Acc = float[kGates][NN][4];
  // A gate slot is [n tile][gate][thread] float4s (4 cells): this thread's float4 of block (n,
  // g) at gate_off + (n·kGates + g)·kGateBlock words, so that a warp's float4 st.async and loads
  // cover 512 contiguous bytes.
  constexpr int kGateBlock = kW * 32 * 4;
  const int gate_off = (warp * 32 + lane) * 4;
  // Gate pre-activations of step t into the next CTA's gate ring (lroles 0 and 2).
  auto send_gates = [&](int t, const Acc& acc) {
    wait_out(t, kDG);
    const int slot = t % kDG;
    const uint32_t dst = ring_down[0] + uint32_t(slot * S::kSlotG + gate_off) * 4;
    const uint32_t bar = full_down[0] + uint32_t(slot) * 8;
#pragma unroll
    for (int n = 0; n < NN; ++n)
#pragma unroll
      for (int g = 0; g < kGates; ++g)
        st_async4(dst + uint32_t((n * kGates + g) * kGateBlock) * 4, acc[g][n][0], acc[g][n][1], acc[g][n][2], acc[g][n][3], bar);
  };
  // acc_g += M_g · h for the four gate tiles of every n tile, h read from a k-tile-major buffer.
  // NN = 1: two accumulator chains per gate (even / odd k tiles), the B fragments loaded up
  // front; NN > 1: one chain per gate and n tile, B loaded per k tile (registers: no spills at
  // sm_90a, ptxas -v).
  auto h_side = [&](const uint32_t* hrow, const uint32_t (&a)[kGates][KT][4], Acc& acc) {
    const uint32_t* base = hrow + (grp * 4 + tig) * 2;
    if constexpr (NN == 1) {
      uint32_t bf[2 * KT];
#pragma unroll
      for (int k = 0; k < KT; ++k) {
        const uint2 v = *reinterpret_cast<const uint2*>(base + k * 64);
        bf[2 * k] = v.x;
        bf[2 * k + 1] = v.y;
      }
      float e[kGates][4] = {};
#pragma unroll
      for (int k = 0; k < KT; k += 2) {
#pragma unroll
        for (int g = 0; g < kGates; ++g) mma16816<T16>(acc[g][0], a[g][k], bf[2 * k], bf[2 * k + 1]);
#pragma unroll
        for (int g = 0; g < kGates; ++g) mma16816<T16>(e[g], a[g][k + 1], bf[2 * k + 2], bf[2 * k + 3]);
      }
#pragma unroll
      for (int g = 0; g < kGates; ++g)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[g][0][i] += e[g][i];
    } else {
#pragma unroll
      for (int k = 0; k < KT; ++k) {
        uint2 v[NN];
#pragma unroll
        for (int n = 0; n < NN; ++n) v[n] = *reinterpret_cast<const uint2*>(base + (k * NN + n) * 64);
#pragma unroll
        for (int g = 0; g < kGates; ++g)
#pragma unroll
          for (int n = 0; n < NN; ++n) mma16816<T16>(acc[g][n], a[g][k], v[n].x, v[n].y);
      }
    }
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
  auto start_acc = [&](Acc& acc, const float (&bl)[kGates][2]) {
#pragma unroll
    for (int g = 0; g < kGates; ++g)
#pragma unroll
      for (int n = 0; n < NN; ++n) {
        acc[g][n][0] = acc[g][n][1] = bl[g][0];
        acc[g][n][2] = acc[g][n][3] = bl[g][1];
      }
  };

  // Layer 1's input (lrole 0, or wave3's CTA 0): x_t for this thread's B column of each n tile,
  // k = 16·kx + 2·tig + {0, 1, 8, 9}: a pointer that steps by one time step ([T][B][I] or,
  // batch-first, [B][T][I]), the n tiles 8 rows apart, and a mask of the elements that exist.
  const int bx = b0 + grp, I = p.input;  // batch row of this thread's B column in n tile 0
  const float* xq = p.x + (p.x_batch_first ? size_t(bx) * T : size_t(bx)) * I + 2 * tig;
  const size_t x_step = p.x_batch_first ? size_t(I) : size_t(B) * I;
  const size_t x_tile = size_t(kLstmWaveRows) * (p.x_batch_first ? size_t(T) * I : size_t(I));
  uint32_t x_ok[NN];
#pragma unroll
  for (int n = 0; n < NN; ++n) {
    x_ok[n] = 0;
#pragma unroll
    for (int kx = 0; kx < KX; ++kx)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int k = 16 * kx + 2 * tig + (e & 1) + (e & 2 ? 8 : 0);
        if (bx + kLstmWaveRows * n < B && k < I) x_ok[n] |= 1u << (kx * 4 + e);
      }
  }
  float xr[NN][KX][4];
  size_t xo = 0;  // element offset of the next x_t to load: stepped, no per-step 64-bit multiply
  auto load_x = [&]() {
#pragma unroll
    for (int n = 0; n < NN; ++n) {
      const float* xp = xq + xo + n * x_tile;
#pragma unroll
      for (int kx = 0; kx < KX; ++kx)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          xr[n][kx][e] = (x_ok[n] >> (kx * 4 + e)) & 1u ? __ldg(xp + 16 * kx + (e & 1) + (e & 2 ? 8 : 0)) : 0.0f;
    }
    xo += x_step;
  };
  // Layer CTAs: fp32 c of this thread's 4 cells per n tile (h: per step, below).
  float cs[NN][4] = {};
  // Y_h, Y_c: this thread's cells of every n tile.
  auto store_state = [&](float* out, const float (&v)[NN][4]) {
    if (!out) return;
#pragma unroll
    for (int n = 0; n < NN; ++n) {
      const int b = bc0 + kLstmWaveRows * n;
      if (b < B) {
        out[size_t(b) * H + u0] = v[n][0];
        out[size_t(b) * H + u1] = v[n][2];
      }
      if (b + 1 < B) {
        out[size_t(b + 1) * H + u0] = v[n][1];
        out[size_t(b + 1) * H + u1] = v[n][3];
      }
    }
  };
  if (lrole == 0) {  // layer 1's input projection, straight from X
    uint32_t ax[kGates][KX][4];
    load_frags(ax, KX);
    float bl[kGates][2];
    load_bias(bl, 0);
    start();
    load_x();
    for (int t = 0; t < T; ++t) {
      Acc acc;
      start_acc(acc, bl);
#pragma unroll
      for (int kx = 0; kx < KX; ++kx)
#pragma unroll
        for (int n = 0; n < NN; ++n) {
          const uint32_t x0 = pack2<T16>(xr[n][kx][0], xr[n][kx][1]), x1 = pack2<T16>(xr[n][kx][2], xr[n][kx][3]);
#pragma unroll
          for (int g = 0; g < kGates; ++g) mma16816<T16>(acc[g][n], ax[g][kx], x0, x1);
        }
      if (t + 1 < T) load_x();  // in flight while this step's gates go out
      send_gates(t, acc);
    }
  } else if (lrole == 2) {  // layer 2's input projection: h1_t from the ring → g2_t into layer 2's ring
    uint32_t a[kGates][KT][4];
    load_frags(a, KT);
    float bl[kGates][2];
    load_bias(bl, 1);
    start();
    for (int t = 0; t < T; ++t) {
      wait_in(t, kDH);
      Acc acc;
      start_acc(acc, bl);
      h_side(&sm.ring[(t % kDH) * S::kSlotH], a, acc);
      send_gates(t, acc);
      __syncthreads();  // every warp has read the h1 slot
      release_in(t, kDH, kBytesH);
    }
  } else {  // lroles 1 and 3: a recurrence on the gate slots of its ring (wave3's CTA 0: on its own W1·x_t)
    uint32_t a[kGates][KT][4];
    load_frags(a, KT);
    start();
    // Where this thread's packed h words go (n tile 0; + 64 per n tile): k tile gw, columns
    // 2·tig and 2·tig+1, q = grp.
    const int hw0 = gw * NN * 64 + ((2 * tig) * 4 + (grp & 3)) * 2 + (grp >> 2), hw1 = hw0 + 8;
    // wave3 CTA 0: acc += W1·x_t, W1's A fragments from shared memory.
    auto w1_mma = [&](Acc& acc) {
#pragma unroll
      for (int kx = 0; kx < KX; ++kx)
#pragma unroll
        for (int n = 0; n < NN; ++n) {
          const uint32_t x0 = pack2<T16>(xr[n][kx][0], xr[n][kx][1]), x1 = pack2<T16>(xr[n][kx][2], xr[n][kx][3]);
#pragma unroll
          for (int g = 0; g < kGates; ++g) {
            const uint4 v = w1s[((warp * kGates + g) * KX + kx) * 32 + lane];
            const uint32_t af[4] = {v.x, v.y, v.z, v.w};
            mma16816<T16>(acc[g][n], af, x0, x1);
          }
        }
    };
    // wave3 CTA 0, NN = 1: b1 + W1·x of the next step, computed after h1 went out (off the
    // hand-over's path); NN > 1 computes it at the start of the step instead (the registers of a
    // second set of accumulators would spill).
    [[maybe_unused]] Acc xacc;
    float bl[kGates][2];
    if (own_x) {
      load_bias(bl, 0);
      load_x();
      if constexpr (NN == 1) {
        start_acc(xacc, bl);
        w1_mma(xacc);
        if (T > 1) load_x();
      }
    }
    for (int t = 0; t < T; ++t) {
      Acc acc;
      if (own_x) {
        if constexpr (NN == 1) {
#pragma unroll
          for (int g = 0; g < kGates; ++g)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[g][0][i] = xacc[g][0][i];
        } else {
          start_acc(acc, bl);
          w1_mma(acc);
          if (t + 1 < T) load_x();  // in flight during this step
        }
      } else {
        // The gate slot and, split, the partner's half of h_{t-1} (xch[(t-1) & 1], re-armed for
        // h_{t+1}): both polls in flight at once.
        if (NS > 1 && t > 0) {
          const int j = t - 1;
          mbar_wait2_cta(smem_addr(&sm.full[t % kDG]), uint32_t((t / kDG) & 1), smem_addr(&sm.xch[j & 1]), uint32_t((j >> 1) & 1));
          if (threadIdx.x == 0 && j + 2 < T - 1) mbar_expect(smem_addr(&sm.xch[j & 1]), kBytesX);
        } else {
          wait_in(t, kDG);
        }
        const float4* src = reinterpret_cast<const float4*>(&sm.ring[(t % kDG) * S::kSlotG + gate_off]);
#pragma unroll
        for (int n = 0; n < NN; ++n)
#pragma unroll
          for (int g = 0; g < kGates; ++g) {
            const float4 v = src[(n * kGates + g) * (kGateBlock / 4)];
            acc[g][n][0] = v.x;
            acc[g][n][1] = v.y;
            acc[g][n][2] = v.z;
            acc[g][n][3] = v.w;
          }
      }
      h_side(sm.hb[(t + 1) & 1], a, acc);
      // h_t in fp32, not carried across steps (registers: only the last one leaves the loop,
      // through Y_h and the head's copy below).
      float hs[NN][4] = {};
      auto cell = [&](int n, int i) {  // ONNX gate order i, o, f, c
        const float ig = sig_fast(acc[0][n][i]), og = sig_fast(acc[1][n][i]), fg = sig_fast(acc[2][n][i]),
                    cg_ = tanh_fast(acc[3][n][i]);
        cs[n][i] = fmaf(fg, cs[n][i], ig * cg_);
        hs[n][i] = og * tanh_fast(cs[n][i]);
      };
      if (one_col) {
        cell(0, 0), cell(0, 2);
      } else {
#pragma unroll
        for (int n = 0; n < NN; ++n)
#pragma unroll
          for (int i = 0; i < 4; ++i) cell(n, i);
      }
#pragma unroll
      for (int n = 0; n < NN; ++n) {
        const uint32_t w0 = pack2<T16>(hs[n][0], hs[n][2]), w1 = pack2<T16>(hs[n][1], hs[n][3]);
        const int o0 = hw0 + n * 64, o1 = hw1 + n * 64;
        sm.hb[t & 1][o0] = w0;
        sm.hb[t & 1][o1] = w1;
        if (NS > 1 && t < T - 1) {  // this CTA's words of h_t into the partner's h buffer
          const uint32_t dst = hb_mate + uint32_t((t & 1) * S::kSlotH) * 4, bar = xch_mate + uint32_t(t & 1) * 8;
          st_async(dst + uint32_t(o0) * 4, w0, bar);
          st_async(dst + uint32_t(o1) * 4, w1, bar);
        }
        if (lrole == 1) {  // h1_t into the ring of layer 2's input CTA(s)
          if (n == 0) wait_out(t, kDH);
          const int slot = t % kDH;
#pragma unroll
          for (int q = 0; q < NS; ++q) {
            const uint32_t dst = ring_down[q] + uint32_t(slot * S::kSlotH) * 4, bar = full_down[q] + uint32_t(slot) * 8;
            st_async(dst + uint32_t(o0) * 4, w0, bar);
            st_async(dst + uint32_t(o1) * 4, w1, bar);
          }
        }
      }
      if (lrole == 3 && p.y) {
        float* y = p.y + size_t(t) * B * H;
#pragma unroll
        for (int n = 0; n < NN; ++n) {
          const int b = bc0 + kLstmWaveRows * n;
          if (b < B) {
            y[size_t(b) * H + u0] = hs[n][0];
            y[size_t(b) * H + u1] = hs[n][2];
          }
          if (b + 1 < B) {
            y[size_t(b + 1) * H + u0] = hs[n][1];
            y[size_t(b + 1) * H + u1] = hs[n][3];
          }
        }
      }
      if (lrole == 3 && t == T - 1) {  // the last h: Y_h, and the head's copy in layer 2's first CTA
        store_state(p.yh, hs);
        if (p.head_w) {
          float* const hl = NS > 1 ? cluster.map_shared_rank(&sm.hl[0], role * NS) : &sm.hl[0];
#pragma unroll
          for (int n = 0; n < NN; ++n)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const int u = i & 2 ? u1 : u0, b = bc0 + kLstmWaveRows * n + (i & 1);
              if (b < B) hl[(b - b0) * H + u] = hs[n][i];
            }
        }
      }
      if constexpr (NN == 1) {
        if (own_x && t + 1 < T) {  // the next step's input side, off the hand-over's path
          start_acc(xacc, bl);
          w1_mma(xacc);
          if (t + 2 < T) load_x();
        }
      }
      __syncthreads();  // h_t complete; every warp has read the gate slot
      if (!own_x) release_in(t, kDG, kBytesG);
    }
  }
  // The time loop is done: a programmatic dependent launched after this kernel (the zero-copy
  // copy-out) may be scheduled now, under this tail; it waits for the whole grid before reading.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (lrole == 3) store_state(p.yc, cs);
  // The head reads the last h2 from layer 2's first CTA's hl (written in the last step; a split
  // stack's second CTA writes its half there remotely, complete after the cluster barrier, which
  // also tells every CTA that every signal is in).
  if (NS > 1) {
    cluster.sync();
  } else if (lrole == 3 && p.head_w) {
    __syncthreads();
  }
  if (lrole == 3 && part == 0 && p.head_w) {
    const float* const hlast = &sm.hl[0];
    const int cols = min(kRows, B - b0), outs = cols * p.head_n;
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
  if (NS == 1) cluster.sync();  // no CTA leaves while a peer may still signal into its shared memory
#else
  (void)p;  // no clusters before sm_90: lstm_wave_supported() is false there
#endif
}

// rnn_device::cluster_config with the kernel's dynamic shared memory (WaveSmem: 36 KB at NN =
// 1, hidden 128; 72 / 144 KB at NN = 2 / 4, above the 48 KB a kernel gets without opting in).
template <int KT, int KX, typename T16, int kRoles, int NS, int NN>
struct WaveKernel {
  static constexpr size_t kSmemBytes = sizeof(WaveSmem<KT, KT / NS, NN>);
  static constexpr unsigned kCluster = kRoles * NS, kThreads = KT / NS * 32;
  static cudaError_t opt_in() {
    if constexpr (kSmemBytes <= 48 * 1024) return cudaSuccess;
    return cudaFuncSetAttribute(lstm_wave_kernel<KT, KX, T16, kRoles, NS, NN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                int(kSmemBytes));
  }
  static cudaLaunchConfig_t config(unsigned clusters, cudaStream_t stream, cudaLaunchAttribute (&attr)[2], bool programmatic) {
    return rnn_device::cluster_config(kCluster * clusters, kThreads, kCluster, kSmemBytes, stream, attr, programmatic);
  }
  // Clusters resident at once on this device (one wave); 0 where the query fails.
  static int clusters_fit() {
    static const int fit = [] {
      if (opt_in() != cudaSuccess) return 0;
      cudaLaunchAttribute attr[2];
      const cudaLaunchConfig_t cfg = config(1, nullptr, attr, false);
      int n = 0;
      return cudaOccupancyMaxActiveClusters(&n, lstm_wave_kernel<KT, KX, T16, kRoles, NS, NN>, &cfg) == cudaSuccess ? n : 0;
    }();
    return fit;
  }
  static Status launch(const LstmWaveParams& p, cudaStream_t stream) {
    TS_CUDA(opt_in());
    const unsigned clusters = unsigned((p.batch + kLstmWaveRows * NN - 1) / (kLstmWaveRows * NN));
    cudaLaunchAttribute attr[2];
    const cudaLaunchConfig_t cfg = config(clusters, stream, attr, programmatic_launch_ok(stream));
    TS_CUDA(cudaLaunchKernelEx(&cfg, lstm_wave_kernel<KT, KX, T16, kRoles, NS, NN>, p));
    return Status::ok();
  }
};

// The most n tiles a layout runs without spilling (ptxas -v, sm_90a, hidden 128): 4 for the
// four-CTA wavefront at input ≤ 32 (246 registers), else 2 (at NN = 4 wave3 spills 408 bytes,
// the four-CTA one at input 64 224). NN = 2: 206 (wave), 244 (wave3); NN = 1: 202, 240.
template <int KX, int kRoles>
constexpr int kMaxNTiles = kRoles == 4 && KX == 2 ? 4 : 2;

// The time of one wave of clusters at NN = 1, 2, 4 n tiles relative to NN = 1, per layout
// (4-CTA "wave", 3-CTA "wave3"; 0: not run). PERF NOTE: measured for LSTM-2x128 FP16, input 32,
// T = 60, the kernel alone with batch-first X and the head, by the timing loop
// CudaLstmWave.ForcedNTilesMatchOneTile had (bench/results/archive/lstmwide-h200-20261201-0827-tests.log):
// every batch took its number of waves times one wave's time, and a wave's time grew with NN by
// these ratios; "wave3" grows faster (its layer-1 CTA's W1·x_t runs in the step at NN > 1) and is
// never fewer waves by enough. NN = 4 never won.
constexpr double step_cost(int roles, int nn_index) {
  constexpr double wave[3] = {1.0, 1.64, 3.4}, wave3[3] = {1.0, 1.97, 0.0};
  return roles == 4 ? wave[nn_index] : wave3[nn_index];
}

// n tiles per cluster at `batch` rows: the NN of the fewest waves · a wave's time (step_cost),
// from the clusters that fit at once (cudaOccupancyMaxActiveClusters; about 30 for "wave" on a
// 132-SM device, as the measured waves showed). "wave" there: NN = 2 at 241-480 rows and above
// 720, else NN = 1, which the kernel's times at b256..b4096 agree with (same log as step_cost);
// "wave3": NN = 1 at every batch.
template <int KX, typename T16, int kRoles>
int choose_n_tiles(int batch) {
  const int fits[3] = {WaveKernel<8, KX, T16, kRoles, 1, 1>::clusters_fit(), WaveKernel<8, KX, T16, kRoles, 1, 2>::clusters_fit(),
                       kMaxNTiles<KX, kRoles> >= 4 ? WaveKernel<8, KX, T16, kRoles, 1, kMaxNTiles<KX, kRoles>>::clusters_fit() : 0};
  int best = 1;
  double best_cost = 0.0;
  for (int i = 0; i < 3; ++i) {
    if (fits[i] < 1 || step_cost(kRoles, i) <= 0.0) continue;
    const int nn = 1 << i, rows = kLstmWaveRows * nn;
    const int clusters = (batch + rows - 1) / rows, waves = (clusters + fits[i] - 1) / fits[i];
    const double cost = waves * step_cost(kRoles, i);
    if (best_cost == 0.0 || cost < best_cost - 1e-9) best = nn, best_cost = cost;
  }
  return best;
}

// Hidden 128, not split, at nn n tiles (n_tiles_h()).
template <int KX, typename T16, int kRoles>
Status launch_n_tiles(int nn, const LstmWaveParams& p, cudaStream_t s) {
  if (nn == 4) return WaveKernel<8, KX, T16, kRoles, 1, kMaxNTiles<KX, kRoles>>::launch(p, s);
  if (nn == 2) return WaveKernel<8, KX, T16, kRoles, 1, 2>::launch(p, s);
  return WaveKernel<8, KX, T16, kRoles, 1, 1>::launch(p, s);
}

// The kernel of a shape, tactic and n-tile count: the split and hidden 64 at NN = 1; hidden
// 128 at p.n_tiles, else chosen by batch (choose_n_tiles).
template <typename T16>
int n_tiles_h(const LstmWaveParams& p) {
  const bool kx2 = wave_kx(p.input) == 2;
  const bool three = (p.three_ctas || p.split) && lstm_wave3_shape_supported(p.hidden, p.input);
  if ((p.split && p.hidden == 128 && p.batch <= kLstmWaveSplitMaxBatch) || p.hidden == 64) return 1;
  if (p.n_tiles > 0) return std::min(p.n_tiles, three ? kMaxNTiles<2, 3> : kx2 ? kMaxNTiles<2, 4> : kMaxNTiles<4, 4>);
  if (three) return choose_n_tiles<2, T16, 3>(p.batch);
  return kx2 ? choose_n_tiles<2, T16, 4>(p.batch) : choose_n_tiles<4, T16, 4>(p.batch);
}

template <typename T16>
Status launch_h(const LstmWaveParams& p, cudaStream_t s) {
  const bool kx2 = wave_kx(p.input) == 2;
  if (p.split && p.hidden == 128 && p.batch <= kLstmWaveSplitMaxBatch) {
    return kx2 ? WaveKernel<8, 2, T16, 4, 2, 1>::launch(p, s) : WaveKernel<8, 4, T16, 4, 2, 1>::launch(p, s);
  }
  const bool three = (p.three_ctas || p.split) && lstm_wave3_shape_supported(p.hidden, p.input);
  if (p.hidden == 64) {
    if (three) return WaveKernel<4, 2, T16, 3, 1, 1>::launch(p, s);
    return kx2 ? WaveKernel<4, 2, T16, 4, 1, 1>::launch(p, s) : WaveKernel<4, 4, T16, 4, 1, 1>::launch(p, s);
  }
  const int nn = n_tiles_h<T16>(p);
  if (three) return launch_n_tiles<2, T16, 3>(nn, p, s);
  return kx2 ? launch_n_tiles<2, T16, 4>(nn, p, s) : launch_n_tiles<4, T16, 4>(nn, p, s);
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
  // Per matrix: [warp][fragment g·k_tiles + k][lane][4 registers]: a lane's fragment is one
  // 16-byte word.
  for (int w = 0; w < warps; ++w)
    for (int j = 0; j < nx / 4; ++j)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) out[o++] = x_word(w, j / kx, j % kx, i, lane);
  for (const float* m : {r1, w2, r2})
    for (int w = 0; w < warps; ++w)
      for (int j = 0; j < nh / 4; ++j)
        for (int lane = 0; lane < 32; ++lane)
          for (int i = 0; i < 4; ++i) out[o++] = h_word(m, w, j / kt, j % kt, i, lane);
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

int lstm_wave_n_tiles(const LstmWaveParams& p) {
  if (!lstm_wave_supported(p.hidden, p.input)) return 0;
  return p.bf16 ? n_tiles_h<__nv_bfloat16>(p) : n_tiles_h<__half>(p);
}

Status launch_lstm_wave(const LstmWaveParams& p, cudaStream_t stream) {
  if (!lstm_wave_supported(p.hidden, p.input)) {
    return Status(StatusCode::kUnsupported, "lstm wave: needs a device with clusters (sm_90) and hidden 64/128, input <= 64");
  }
  if (p.head_w && (p.head_n < 1 || p.head_n > kRnnWaveMaxHead || !p.head_out)) {
    return Status(StatusCode::kInvalidArgument, "lstm wave: the head needs 1.." + std::to_string(kRnnWaveMaxHead) +
                                                    " outputs and an output buffer, got " + std::to_string(p.head_n));
  }
  if (p.n_tiles != 0 && p.n_tiles != 1 && p.n_tiles != 2 && p.n_tiles != 4) {
    return Status(StatusCode::kInvalidArgument, "lstm wave: n_tiles must be 0 (by batch), 1, 2 or 4, got " + std::to_string(p.n_tiles));
  }
  if (p.t_len < 1 || p.batch < 1) return Status::ok();
  return p.bf16 ? launch_h<__nv_bfloat16>(p, stream) : launch_h<__half>(p, stream);
}

}  // namespace ts::engine::cuda
