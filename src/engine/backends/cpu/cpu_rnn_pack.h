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

// BF16 storage (precision bf16): the same blocks, each [k][cols] with cols = G·u_pad rounded
// up to 16 (zero columns; the kernels write them to `out` too, so out needs cols floats), as
// bf16 (round to nearest even) in PAIR-INTERLEAVED order: within each group of 16 columns,
// element 2j is column j and element 2j+1 is column 8+j. One 32-byte load then yields both
// vectors with one shift (even elements) and one AND (odd elements): bf16 is the top half of
// an fp32. The math stays FP32 (FMA); only the bytes streamed per step halve.
// PERF NOTE: at batch 1 the recurrence is bound by streaming R from L2 (196 KB per step at
// H=128 in FP32, ~2 µs); bf16 halves that stream. This CPU has no bf16 arithmetic (no
// AVX512_BF16), which is why the conversion is done by hand.
struct PackedRnnR {
  int64_t hidden = 0, gates = 0;
  int64_t k = 0;                   // reduction length: hidden for R, input size for W
  int64_t max_cols = 0;            // widest block: G·u_pad ≤ 96 (bf16: rounded up to 16)
  bool bf16 = false;
  std::vector<RnnBlock> blocks;    // offset: elements of data (fp32) or data16 (bf16)
  std::vector<float, CacheLineAllocator<float>> data;  // fp32: blocks back to back, each [k][G·u_pad]
  std::vector<uint16_t, CacheLineAllocator<uint16_t>> data16;  // bf16: each [k][cols(blk)]
  // bf16 on a CPU with AVX512_BF16 (cpu_has_avx512_bf16()) and k ≤ kRnnDpMaxK: the same weights
  // again for the batch-1 GEMV's dot products (rnn_gemv_pipelined_bf16dp): each block
  // [k2 / 2][cols(blk)][2] with k2 = k rounded up to even (a zero row), element [i][c][e] = the
  // weight of column c at k = 2i + e, so one 64-byte load is 16 columns × 2 k. Block b starts at
  // b.offset / k · k2. Chosen when the kernel is made (plan load), never stored in a plan.
  std::vector<uint16_t, CacheLineAllocator<uint16_t>> data16dp;

  // Columns stored (and written to out) per block.
  int64_t cols(const RnnBlock& b) const { return bf16 ? (gates * b.u_pad + 15) / 16 * 16 : gates * b.u_pad; }
  // Sum of cols over all blocks: the width of a row holding every block's output side by side
  // (block b's output starts at column b.offset / k).
  int64_t total_cols() const { return k > 0 ? int64_t(bf16 ? data16.size() : data.size()) / k : 0; }
  size_t bytes() const {
    return data.size() * sizeof(float) + (data16.size() + data16dp.size()) * sizeof(uint16_t);
  }
};

// Packs R given as ONNX lays it out: [gates·hidden, k] row-major (row = gate·H + unit, k =
// hidden for R, or the input size when packing W), i.e. out = h · Rᵀ. bf16: BF16 storage.
PackedRnnR pack_rnn_r(const float* r, int64_t gates, int64_t hidden, int64_t k = -1, bool bf16 = false);

// FP32 → BF16, round to nearest even (finite inputs), and back.
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16_to_f32(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// out[i][c] (row stride ldo, c < p.cols(blk)) = Σ_k h[i·ldh + k] · R[block col c][k]
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

// rnn_gemv_pipelined over BF16 pair-interleaved weights (P pairs of vectors, 2P ≤ 12).
template <int P, bool Rev, typename Epi>
TS_AVX2 inline void rnn_gemv_pipelined_bf16(const float* h, const uint16_t* w, int64_t k, float* out, const Epi& epi) {
  static_assert(P >= 1 && P <= 6);
  constexpr int64_t cols = 16 * P;
  const __m256i hi_mask = _mm256_set1_epi32(int32_t(0xFFFF0000u));
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0,
         c8 = c0, c9 = c0, c10 = c0, c11 = c0;
  for (int c = 0; c < 4; ++c) {
    const int64_t i1 = k * (c + 1) / 4;
    for (int64_t i = k * c / 4; i < i1; ++i) {
      const int64_t kk = Rev ? k - 1 - i : i;
      const uint16_t* q = w + kk * cols;
      const __m256 a = _mm256_broadcast_ss(h + kk);
#define TS_RNN_PACC16(n, e, o)                                                                      \
  if constexpr (P > n) {                                                                            \
    const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 16 * n));              \
    c##e = _mm256_fmadd_ps(a, _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)), c##e);                  \
    c##o = _mm256_fmadd_ps(a, _mm256_castsi256_ps(_mm256_and_si256(x, hi_mask)), c##o);              \
  }
      TS_RNN_PACC16(0, 0, 1); TS_RNN_PACC16(1, 2, 3); TS_RNN_PACC16(2, 4, 5);
      TS_RNN_PACC16(3, 6, 7); TS_RNN_PACC16(4, 8, 9); TS_RNN_PACC16(5, 10, 11);
#undef TS_RNN_PACC16
    }
    epi(c);
  }
#define TS_RNN_PST(n) if constexpr (2 * P > n) _mm256_storeu_ps(out + 8 * n, c##n)
  TS_RNN_PST(0); TS_RNN_PST(1); TS_RNN_PST(2); TS_RNN_PST(3); TS_RNN_PST(4); TS_RNN_PST(5);
  TS_RNN_PST(6); TS_RNN_PST(7); TS_RNN_PST(8); TS_RNN_PST(9); TS_RNN_PST(10); TS_RNN_PST(11);
#undef TS_RNN_PST
}

constexpr int64_t kRnnDpMaxK = 512;  // the bf16 copy of h the dot-product GEMV keeps on its stack

// rnn_gemv_pipelined over PackedRnnR::data16dp with AVX512_BF16 dot products (P groups of 16
// columns, P ≤ 6): h is rounded to bf16 once per call, each k pair broadcast as one 32-bit word,
// and vdpbf16ps adds both k's products of 16 columns in one instruction — a quarter of the
// AVX2 path's instructions per weight and half its bytes. PERF NOTE (microbenchmark, this
// 2-core EPYC, one core: 120 GEMVs of 384 × 128 as GRU-2×128 batch 1 runs them): AVX2 FP32
// broadcast-FMA 205 µs, this 104 µs; the rounding of h to bf16 adds ~4e-3 relative error per
// GEMV (BF16 plans' tolerance: 1e-2).
template <int P, bool Rev, typename Epi>
TS_AVX512_BF16 inline void rnn_gemv_pipelined_bf16dp(const float* h, const uint16_t* w, int64_t k, float* out,
                                                     const Epi& epi) {
  static_assert(P >= 1 && P <= 6);
  constexpr int64_t cols = 16 * P;
  const int64_t pairs = (k + 1) / 2;
  alignas(64) uint16_t hb[kRnnDpMaxK];
  for (int64_t i = 0; i < 2 * pairs; i += 16) {
    const __mmask16 m = i + 16 <= k ? __mmask16(0xFFFF) : __mmask16(i < k ? (1u << (k - i)) - 1 : 0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hb + i), (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, h + i)));
  }
  const uint32_t* h2 = reinterpret_cast<const uint32_t*>(hb);
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  for (int c = 0; c < 4; ++c) {
    const int64_t i1 = pairs * (c + 1) / 4;
    for (int64_t i = pairs * c / 4; i < i1; ++i) {
      const int64_t kk = Rev ? pairs - 1 - i : i;
      const uint16_t* q = w + kk * 2 * cols;
      const __m512bh a = (__m512bh)_mm512_set1_epi32(int32_t(h2[kk]));
#define TS_RNN_DP(n) \
  if constexpr (P > n) c##n = _mm512_dpbf16_ps(c##n, a, (__m512bh)_mm512_load_si512(q + 32 * n))
      TS_RNN_DP(0); TS_RNN_DP(1); TS_RNN_DP(2); TS_RNN_DP(3); TS_RNN_DP(4); TS_RNN_DP(5);
#undef TS_RNN_DP
    }
    epi(c);
  }
#define TS_RNN_DPST(n) if constexpr (P > n) _mm512_storeu_ps(out + 16 * n, c##n)
  TS_RNN_DPST(0); TS_RNN_DPST(1); TS_RNN_DPST(2); TS_RNN_DPST(3); TS_RNN_DPST(4); TS_RNN_DPST(5);
#undef TS_RNN_DPST
}

// Dispatches rnn_gemv_pipelined(_bf16, _bf16dp) on the block's width (cols/8 vectors) and k order.
template <typename Epi>
TS_AVX2 inline void rnn_block_gemv_pipelined(const float* h, const PackedRnnR& p, const RnnBlock& blk, bool rev,
                                              float* out, const Epi& epi) {
  const int64_t k = p.k;
  if (p.bf16 && !p.data16dp.empty()) {
    const uint16_t* wd = p.data16dp.data() + blk.offset / k * ((k + 1) / 2 * 2);
#define TS_RNN_CASEDP(n)                                                                  \
  case n:                                                                                 \
    return rev ? rnn_gemv_pipelined_bf16dp<n, true>(h, wd, k, out, epi)                   \
               : rnn_gemv_pipelined_bf16dp<n, false>(h, wd, k, out, epi)
    switch (p.cols(blk) / 16) {
      TS_RNN_CASEDP(1); TS_RNN_CASEDP(2); TS_RNN_CASEDP(3); TS_RNN_CASEDP(4); TS_RNN_CASEDP(5);
      default: TS_RNN_CASEDP(6);
    }
#undef TS_RNN_CASEDP
  }
  if (p.bf16) {
    const uint16_t* w16 = p.data16.data() + blk.offset;
#define TS_RNN_CASE16(n) \
  case n: return rev ? rnn_gemv_pipelined_bf16<n, true>(h, w16, k, out, epi) : rnn_gemv_pipelined_bf16<n, false>(h, w16, k, out, epi)
    switch (p.cols(blk) / 16) {
      TS_RNN_CASE16(1); TS_RNN_CASE16(2); TS_RNN_CASE16(3); TS_RNN_CASE16(4); TS_RNN_CASE16(5);
      default: TS_RNN_CASE16(6);
    }
#undef TS_RNN_CASE16
  }
  const float* w = p.data.data() + blk.offset;
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
