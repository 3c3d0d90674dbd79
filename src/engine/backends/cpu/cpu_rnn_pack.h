#pragma once
// Recurrent weights of GRU/LSTM packed for the per-step h·Rᵀ ("avx2_blocked" tactic).
//
// Layout: the hidden units are split into blocks of U units (U = 8·⌊12/G⌋ for G gates: GRU 32,
// LSTM 24, GRU lbr=0's z,r pair 48, a single gate 96), so one block's outputs for all G gates
// are at most 12 AVX2 vectors (12 accumulators + 1 broadcast + loads fit the 16 registers).
// A block stores its columns gate-interleaved (column g·u_pad + u = gate g, unit u0 + u; u_pad
// = units rounded up to 8, zero padded) and k-major ([H][G·u_pad]), so one block is ONE
// contiguous buffer streamed front to back, and the gate math for its units can run right
// after its GEMV while the pre-activations are still in L1.
//
// Batch 1 (a GEMV) uses a 1×V kernel (V ≤ 12 independent FMA chains); batch > 1 uses 4×3
// (4 rows × 24 columns) register blocks, i.e. a small GEMM per block.
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {

struct RnnBlock {
  int64_t u0 = 0;       // first hidden unit
  int64_t units = 0;    // units in this block (≤ U)
  int64_t u_pad = 0;    // units rounded up to 8
  int64_t offset = 0;   // floats from PackedRnnR::data's start
};

// 64-byte-aligned storage: every 32-byte load of a block row then stays inside one cache line
// (rows are G·u_pad·4 = multiples of 32 bytes, blocks multiples of 64 bytes at H even).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};

struct PackedRnnR {
  int64_t hidden = 0, gates = 0;
  int64_t k = 0;                   // reduction length: hidden for R, input size for W
  int64_t max_cols = 0;            // widest block: G·u_pad ≤ 96
  std::vector<RnnBlock> blocks;
  std::vector<float, CacheLineAllocator<float>> data;  // blocks back to back, each [hidden][G·u_pad]
};

// Packs R given as ONNX lays it out: [gates·hidden, k] row-major (row = gate·H + unit, k =
// hidden for R, or the input size when packing W), i.e. out = h · Rᵀ.
PackedRnnR pack_rnn_r(const float* r, int64_t gates, int64_t hidden, int64_t k = -1);

// out[i][c] (row stride ldo, c < G·u_pad of the block) = Σ_k h[i·ldh + k] · R[block col c][k]
// for rows i < rows. reverse_k runs k from H-1 down to 0 (batch-1 path only; it lets successive
// steps traverse the weights in alternating order so the tail of one step's stream is still in
// L1 when the next step starts). AVX2+FMA only: call when cpu_has_avx2_fma().
void rnn_block_gemm(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p, const RnnBlock& blk,
                    bool reverse_k, float* out, int64_t ldo);

// Batch-1 GEMV of one block of V vectors (out[0, 8V)) with an epilogue software-pipelined into
// it: epi(c) runs after the c-th quarter of the k loop, c = 0..3. The recurrence passes the
// PREVIOUS block's gate math as epi, so the gate math's long exp/div/tanh dependency chains
// execute while this block's weights stream from L2 (the GEMV is L2-bandwidth-bound and leaves
// the FMA ports half idle), instead of stalling the stream between blocks.
template <int V, bool Rev, typename Epi>
TS_AVX2 inline void rnn_gemv_pipelined(const float* h, const float* w, int64_t k, float* out, const Epi& epi) {
  static_assert(V >= 1 && V <= 12);
  constexpr int64_t cols = 8 * V;
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0,
         c8 = c0, c9 = c0, c10 = c0, c11 = c0;
  for (int c = 0; c < 4; ++c) {
    const int64_t i1 = k * (c + 1) / 4;
    for (int64_t i = k * c / 4; i < i1; ++i) {
      const int64_t kk = Rev ? k - 1 - i : i;
      const float* q = w + kk * cols;
      const __m256 a = _mm256_broadcast_ss(h + kk);
#define TS_RNN_PACC(n) if constexpr (V > n) c##n = _mm256_fmadd_ps(a, _mm256_loadu_ps(q + 8 * n), c##n)
      TS_RNN_PACC(0); TS_RNN_PACC(1); TS_RNN_PACC(2); TS_RNN_PACC(3); TS_RNN_PACC(4); TS_RNN_PACC(5);
      TS_RNN_PACC(6); TS_RNN_PACC(7); TS_RNN_PACC(8); TS_RNN_PACC(9); TS_RNN_PACC(10); TS_RNN_PACC(11);
#undef TS_RNN_PACC
    }
    epi(c);
  }
#define TS_RNN_PST(n) if constexpr (V > n) _mm256_storeu_ps(out + 8 * n, c##n)
  TS_RNN_PST(0); TS_RNN_PST(1); TS_RNN_PST(2); TS_RNN_PST(3); TS_RNN_PST(4); TS_RNN_PST(5);
  TS_RNN_PST(6); TS_RNN_PST(7); TS_RNN_PST(8); TS_RNN_PST(9); TS_RNN_PST(10); TS_RNN_PST(11);
#undef TS_RNN_PST
}

// Dispatches rnn_gemv_pipelined on the block's width (G·u_pad/8 vectors) and k order.
template <typename Epi>
TS_AVX2 inline void rnn_block_gemv_pipelined(const float* h, const PackedRnnR& p, const RnnBlock& blk, bool rev,
                                              float* out, const Epi& epi) {
  const float* w = p.data.data() + blk.offset;
  const int64_t k = p.k;
#define TS_RNN_CASE(v) \
  case v: return rev ? rnn_gemv_pipelined<v, true>(h, w, k, out, epi) : rnn_gemv_pipelined<v, false>(h, w, k, out, epi)
  switch (p.gates * blk.u_pad / 8) {
    TS_RNN_CASE(1); TS_RNN_CASE(2); TS_RNN_CASE(3); TS_RNN_CASE(4); TS_RNN_CASE(5); TS_RNN_CASE(6);
    TS_RNN_CASE(7); TS_RNN_CASE(8); TS_RNN_CASE(9); TS_RNN_CASE(10); TS_RNN_CASE(11);
    default: TS_RNN_CASE(12);
  }
#undef TS_RNN_CASE
}

// Portable reference of rnn_block_gemm (no AVX2), same contract (reverse_k ignored).
void rnn_block_gemm_scalar(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p,
                           const RnnBlock& blk, float* out, int64_t ldo);

}  // namespace ts::engine::cpu
