#include "engine/backends/cpu/cpu_rnn_pack.h"

#include <algorithm>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {

PackedRnnR pack_rnn_r(const float* r, int64_t gates, int64_t hidden, int64_t k_len, bool bf16) {
  PackedRnnR p;
  const int64_t kl = k_len < 0 ? hidden : k_len;
  p.hidden = hidden;
  p.k = kl;
  p.gates = gates;
  p.bf16 = bf16;
  const int64_t unit_block = 8 * (12 / gates);
  int64_t total = 0;
  for (int64_t u0 = 0; u0 < hidden; u0 += unit_block) {
    RnnBlock b;
    b.u0 = u0;
    b.units = std::min(unit_block, hidden - u0);
    b.u_pad = round_up8(b.units);
    b.offset = total;
    total += kl * p.cols(b);
    p.max_cols = std::max(p.max_cols, p.cols(b));
    p.blocks.push_back(b);
  }
  if (bf16) p.data16.assign(size_t(total), 0);
  else p.data.assign(size_t(total), 0.0f);
  const int64_t k2 = (kl + 1) / 2 * 2;
  if (bf16 && kl <= kRnnDpMaxK && cpu_has_avx512_bf16()) p.data16dp.assign(size_t(total / kl * k2), 0);
  for (const RnnBlock& b : p.blocks) {
    const int64_t cols = p.cols(b);
    for (int64_t k = 0; k < kl; ++k) {
      for (int64_t g = 0; g < gates; ++g) {
        for (int64_t u = 0; u < b.units; ++u) {
          const float v = r[(g * hidden + b.u0 + u) * kl + k];
          const int64_t c = g * b.u_pad + u;
          if (bf16) {
            // Pair interleave within the 16-column group (see cpu_rnn_pack.h).
            const int64_t grp = c / 16 * 16, j = c % 16;
            p.data16[size_t(b.offset + k * cols + grp + (j < 8 ? 2 * j : 2 * (j - 8) + 1))] = f32_to_bf16(v);
            if (!p.data16dp.empty()) {
              p.data16dp[size_t(b.offset / kl * k2 + (k / 2) * 2 * cols + 2 * c + k % 2)] = f32_to_bf16(v);
            }
          } else {
            p.data[size_t(b.offset + k * cols + c)] = v;
          }
        }
      }
    }
  }
  return p;
}

namespace {

// PERF NOTE: named accumulators (not an array): GCC 12 spills an indexed accumulator array to
// the stack every k step (see cpu_gemm.cpp). V ≤ 12 independent FMA chains per k.
#define TS_RNN_ACC(n) if constexpr (V > n) c##n = _mm256_fmadd_ps(a, _mm256_loadu_ps(q + 8 * n), c##n)
#define TS_RNN_ST(n) if constexpr (V > n) _mm256_storeu_ps(out + 8 * n, c##n)

template <int V, bool Rev>
TS_AVX2 void gemv_1xv(const float* h, const float* w, int64_t k, float* out) {
  constexpr int64_t cols = 8 * V;
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0,
         c8 = c0, c9 = c0, c10 = c0, c11 = c0;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t kk = Rev ? k - 1 - i : i;
    const float* q = w + kk * cols;
    const __m256 a = _mm256_broadcast_ss(h + kk);
    TS_RNN_ACC(0); TS_RNN_ACC(1); TS_RNN_ACC(2); TS_RNN_ACC(3); TS_RNN_ACC(4); TS_RNN_ACC(5);
    TS_RNN_ACC(6); TS_RNN_ACC(7); TS_RNN_ACC(8); TS_RNN_ACC(9); TS_RNN_ACC(10); TS_RNN_ACC(11);
  }
  TS_RNN_ST(0); TS_RNN_ST(1); TS_RNN_ST(2); TS_RNN_ST(3); TS_RNN_ST(4); TS_RNN_ST(5);
  TS_RNN_ST(6); TS_RNN_ST(7); TS_RNN_ST(8); TS_RNN_ST(9); TS_RNN_ST(10); TS_RNN_ST(11);
}

#undef TS_RNN_ACC
#undef TS_RNN_ST

using GemvFn = void (*)(const float*, const float*, int64_t, float*);

template <bool Rev>
GemvFn gemv_for(int64_t v) {
  switch (v) {
    case 1: return gemv_1xv<1, Rev>;
    case 2: return gemv_1xv<2, Rev>;
    case 3: return gemv_1xv<3, Rev>;
    case 4: return gemv_1xv<4, Rev>;
    case 5: return gemv_1xv<5, Rev>;
    case 6: return gemv_1xv<6, Rev>;
    case 7: return gemv_1xv<7, Rev>;
    case 8: return gemv_1xv<8, Rev>;
    case 9: return gemv_1xv<9, Rev>;
    case 10: return gemv_1xv<10, Rev>;
    case 11: return gemv_1xv<11, Rev>;
    default: return gemv_1xv<12, Rev>;
  }
}

// R rows × S vectors (S ≤ 3) at column offset col of a block `cols` wide: R·S ≤ 12 accumulators.
template <int R, int S>
TS_AVX2 void gemm_rxs(const float* h, int64_t ldh, const float* w, int64_t k, int64_t cols, float* out,
                      int64_t ldo) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00, c20 = c00,
         c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  const float *h0 = h, *h1 = h + ldh, *h2 = h + 2 * ldh, *h3 = h + 3 * ldh;
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* q = w + kk * cols;
    const __m256 b0 = _mm256_loadu_ps(q);
    const __m256 b1 = S > 1 ? _mm256_loadu_ps(q + 8) : b0;
    const __m256 b2 = S > 2 ? _mm256_loadu_ps(q + 16) : b0;
    __m256 a = _mm256_broadcast_ss(h0 + kk);
    c00 = _mm256_fmadd_ps(a, b0, c00);
    if constexpr (S > 1) c01 = _mm256_fmadd_ps(a, b1, c01);
    if constexpr (S > 2) c02 = _mm256_fmadd_ps(a, b2, c02);
    if constexpr (R > 1) {
      a = _mm256_broadcast_ss(h1 + kk);
      c10 = _mm256_fmadd_ps(a, b0, c10);
      if constexpr (S > 1) c11 = _mm256_fmadd_ps(a, b1, c11);
      if constexpr (S > 2) c12 = _mm256_fmadd_ps(a, b2, c12);
    }
    if constexpr (R > 2) {
      a = _mm256_broadcast_ss(h2 + kk);
      c20 = _mm256_fmadd_ps(a, b0, c20);
      if constexpr (S > 1) c21 = _mm256_fmadd_ps(a, b1, c21);
      if constexpr (S > 2) c22 = _mm256_fmadd_ps(a, b2, c22);
    }
    if constexpr (R > 3) {
      a = _mm256_broadcast_ss(h3 + kk);
      c30 = _mm256_fmadd_ps(a, b0, c30);
      if constexpr (S > 1) c31 = _mm256_fmadd_ps(a, b1, c31);
      if constexpr (S > 2) c32 = _mm256_fmadd_ps(a, b2, c32);
    }
  }
  _mm256_storeu_ps(out, c00);
  if constexpr (S > 1) _mm256_storeu_ps(out + 8, c01);
  if constexpr (S > 2) _mm256_storeu_ps(out + 16, c02);
  if constexpr (R > 1) {
    _mm256_storeu_ps(out + ldo, c10);
    if constexpr (S > 1) _mm256_storeu_ps(out + ldo + 8, c11);
    if constexpr (S > 2) _mm256_storeu_ps(out + ldo + 16, c12);
  }
  if constexpr (R > 2) {
    _mm256_storeu_ps(out + 2 * ldo, c20);
    if constexpr (S > 1) _mm256_storeu_ps(out + 2 * ldo + 8, c21);
    if constexpr (S > 2) _mm256_storeu_ps(out + 2 * ldo + 16, c22);
  }
  if constexpr (R > 3) {
    _mm256_storeu_ps(out + 3 * ldo, c30);
    if constexpr (S > 1) _mm256_storeu_ps(out + 3 * ldo + 8, c31);
    if constexpr (S > 2) _mm256_storeu_ps(out + 3 * ldo + 16, c32);
  }
}

template <int R>
TS_AVX2 void rows_block(const float* h, int64_t ldh, const float* w, int64_t k, int64_t cols, int64_t col,
                        int64_t s, float* out, int64_t ldo) {
  if (s == 3) gemm_rxs<R, 3>(h, ldh, w + col, k, cols, out + col, ldo);
  else if (s == 2) gemm_rxs<R, 2>(h, ldh, w + col, k, cols, out + col, ldo);
  else gemm_rxs<R, 1>(h, ldh, w + col, k, cols, out + col, ldo);
}

struct NoEpilogue {
  void operator()(int) const {}
};

// BF16 weights, R rows (≤ 4) × one 16-column group (two vectors): 8 accumulators.
template <int R>
TS_AVX2 void gemm_bf16_rx2(const float* h, int64_t ldh, const uint16_t* w, int64_t k, int64_t cols, float* out,
                           int64_t ldo) {
  const __m256i hi_mask = _mm256_set1_epi32(int32_t(0xFFFF0000u));
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + kk * cols));
    const __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
    const __m256 b1 = _mm256_castsi256_ps(_mm256_and_si256(x, hi_mask));
    __m256 a = _mm256_broadcast_ss(h + kk);
    c00 = _mm256_fmadd_ps(a, b0, c00);
    c01 = _mm256_fmadd_ps(a, b1, c01);
    if constexpr (R > 1) {
      a = _mm256_broadcast_ss(h + ldh + kk);
      c10 = _mm256_fmadd_ps(a, b0, c10);
      c11 = _mm256_fmadd_ps(a, b1, c11);
    }
    if constexpr (R > 2) {
      a = _mm256_broadcast_ss(h + 2 * ldh + kk);
      c20 = _mm256_fmadd_ps(a, b0, c20);
      c21 = _mm256_fmadd_ps(a, b1, c21);
    }
    if constexpr (R > 3) {
      a = _mm256_broadcast_ss(h + 3 * ldh + kk);
      c30 = _mm256_fmadd_ps(a, b0, c30);
      c31 = _mm256_fmadd_ps(a, b1, c31);
    }
  }
  _mm256_storeu_ps(out, c00);
  _mm256_storeu_ps(out + 8, c01);
  if constexpr (R > 1) { _mm256_storeu_ps(out + ldo, c10); _mm256_storeu_ps(out + ldo + 8, c11); }
  if constexpr (R > 2) { _mm256_storeu_ps(out + 2 * ldo, c20); _mm256_storeu_ps(out + 2 * ldo + 8, c21); }
  if constexpr (R > 3) { _mm256_storeu_ps(out + 3 * ldo, c30); _mm256_storeu_ps(out + 3 * ldo + 8, c31); }
}

// BF16 weights, R rows (≤ 3) × two 16-column groups (four vectors): 12 accumulators; each group
// is converted right before its FMAs so that only two weight vectors are live at a time.
template <int R>
TS_AVX2 void gemm_bf16_rx4(const float* h, int64_t ldh, const uint16_t* w, int64_t k, int64_t cols, float* out,
                           int64_t ldo) {
  const __m256i hi_mask = _mm256_set1_epi32(int32_t(0xFFFF0000u));
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00,
         c20 = c00, c21 = c00, c22 = c00, c23 = c00;
  for (int64_t kk = 0; kk < k; ++kk) {
    const uint16_t* q = w + kk * cols;
    const __m256 a0 = _mm256_broadcast_ss(h + kk);
    const __m256 a1 = R > 1 ? _mm256_broadcast_ss(h + ldh + kk) : a0;
    const __m256 a2 = R > 2 ? _mm256_broadcast_ss(h + 2 * ldh + kk) : a0;
    __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(q));
    __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)), b1 = _mm256_castsi256_ps(_mm256_and_si256(x, hi_mask));
    c00 = _mm256_fmadd_ps(a0, b0, c00);
    c01 = _mm256_fmadd_ps(a0, b1, c01);
    if constexpr (R > 1) { c10 = _mm256_fmadd_ps(a1, b0, c10); c11 = _mm256_fmadd_ps(a1, b1, c11); }
    if constexpr (R > 2) { c20 = _mm256_fmadd_ps(a2, b0, c20); c21 = _mm256_fmadd_ps(a2, b1, c21); }
    x = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 16));
    b0 = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
    b1 = _mm256_castsi256_ps(_mm256_and_si256(x, hi_mask));
    c02 = _mm256_fmadd_ps(a0, b0, c02);
    c03 = _mm256_fmadd_ps(a0, b1, c03);
    if constexpr (R > 1) { c12 = _mm256_fmadd_ps(a1, b0, c12); c13 = _mm256_fmadd_ps(a1, b1, c13); }
    if constexpr (R > 2) { c22 = _mm256_fmadd_ps(a2, b0, c22); c23 = _mm256_fmadd_ps(a2, b1, c23); }
  }
  float* o = out;
  _mm256_storeu_ps(o, c00); _mm256_storeu_ps(o + 8, c01); _mm256_storeu_ps(o + 16, c02); _mm256_storeu_ps(o + 24, c03);
  if constexpr (R > 1) {
    o = out + ldo;
    _mm256_storeu_ps(o, c10); _mm256_storeu_ps(o + 8, c11); _mm256_storeu_ps(o + 16, c12); _mm256_storeu_ps(o + 24, c13);
  }
  if constexpr (R > 2) {
    o = out + 2 * ldo;
    _mm256_storeu_ps(o, c20); _mm256_storeu_ps(o + 8, c21); _mm256_storeu_ps(o + 16, c22); _mm256_storeu_ps(o + 24, c23);
  }
}

TS_AVX2 void block_gemm_bf16_avx2(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p,
                                  const RnnBlock& blk, bool reverse_k, float* out, int64_t ldo) {
  if (rows == 1) {
    rnn_block_gemv_pipelined(h, p, blk, reverse_k, out, NoEpilogue{});
    return;
  }
  const int64_t cols = p.cols(blk), k = p.k;
  const uint16_t* w = p.data16.data() + blk.offset;
  // Column strips of 32 (3 rows × 4 vectors), a last strip of 16 (4 rows × 2 vectors).
  int64_t col = 0;
  for (; col + 32 <= cols; col += 32) {
    int64_t i = 0;
    for (; i + 3 <= rows; i += 3) gemm_bf16_rx4<3>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo);
    if (rows - i == 2) gemm_bf16_rx4<2>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo);
    if (rows - i == 1) gemm_bf16_rx4<1>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo);
  }
  if (col < cols) {
    int64_t i = 0;
    for (; i + 4 <= rows; i += 4) gemm_bf16_rx2<4>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo);
    switch (rows - i) {
      case 3: gemm_bf16_rx2<3>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo); break;
      case 2: gemm_bf16_rx2<2>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo); break;
      case 1: gemm_bf16_rx2<1>(h + i * ldh, ldh, w + col, k, cols, out + i * ldo + col, ldo); break;
      default: break;
    }
  }
}

// Weight of block column c (gate-major, c < cols) at reduction index k, whatever the storage.
float packed_weight(const PackedRnnR& p, const RnnBlock& blk, int64_t k, int64_t c) {
  const int64_t cols = p.cols(blk);
  if (!p.bf16) return p.data[size_t(blk.offset + k * cols + c)];
  const int64_t grp = c / 16 * 16, j = c % 16;
  return bf16_to_f32(p.data16[size_t(blk.offset + k * cols + grp + (j < 8 ? 2 * j : 2 * (j - 8) + 1))]);
}

TS_AVX2 void block_gemm_avx2(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p,
                             const RnnBlock& blk, bool reverse_k, float* out, int64_t ldo) {
  if (p.bf16) {
    block_gemm_bf16_avx2(h, ldh, rows, p, blk, reverse_k, out, ldo);
    return;
  }
  const int64_t cols = p.gates * blk.u_pad, k = p.k;
  const float* w = p.data.data() + blk.offset;
  if (rows == 1) {
    (reverse_k ? gemv_for<true>(cols / 8) : gemv_for<false>(cols / 8))(h, w, k, out);
    return;
  }
  // Column strips of ≤ 3 vectors (the strip, ≤ 12 KB at H=128, stays in L1 across row groups).
  for (int64_t col = 0; col < cols; col += 24) {
    const int64_t s = std::min<int64_t>(3, (cols - col) / 8);
    int64_t i = 0;
    for (; i + 4 <= rows; i += 4) rows_block<4>(h + i * ldh, ldh, w, k, cols, col, s, out + i * ldo, ldo);
    switch (rows - i) {
      case 3: rows_block<3>(h + i * ldh, ldh, w, k, cols, col, s, out + i * ldo, ldo); break;
      case 2: rows_block<2>(h + i * ldh, ldh, w, k, cols, col, s, out + i * ldo, ldo); break;
      case 1: rows_block<1>(h + i * ldh, ldh, w, k, cols, col, s, out + i * ldo, ldo); break;
      default: break;
    }
  }
}

}  // namespace

void rnn_block_gemm(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p, const RnnBlock& blk,
                    bool reverse_k, float* out, int64_t ldo) {
  block_gemm_avx2(h, ldh, rows, p, blk, reverse_k, out, ldo);
}

void rnn_block_gemm_scalar(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p,
                           const RnnBlock& blk, float* out, int64_t ldo) {
  const int64_t cols = p.cols(blk), k = p.k;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      float s = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) s += h[i * ldh + kk] * packed_weight(p, blk, kk, c);
      out[i * ldo + c] = s;
    }
  }
}

}  // namespace ts::engine::cpu
