#include "engine/backends/cpu/cpu_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {

bool act_from_name(const std::string_view name, Act* out) {
  if (name.empty() || name == "none") *out = Act::kNone;
  else if (name == "relu") *out = Act::kRelu;
  else if (name == "sigmoid") *out = Act::kSigmoid;
  else if (name == "tanh") *out = Act::kTanh;
  else if (name == "gelu") *out = Act::kGelu;
  else return false;
  return true;
}

void pack_b_into(const float* b, int64_t k, int64_t n, bool trans, int64_t ldb, float* panels) {
  int64_t n_pad = round_up8(n);
  for (int64_t jp = 0; jp < n_pad / 8; ++jp) {
    float* dst = panels + jp * k * 8;
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t c = 0; c < 8; ++c) {
        int64_t j = jp * 8 + c;
        float v = 0.0f;
        if (j < n) v = trans ? b[j * ldb + kk] : b[kk * ldb + j];
        dst[kk * 8 + c] = v;
      }
    }
  }
}

PackedB pack_b(const float* b, int64_t k, int64_t n, bool trans, const float* bias) {
  PackedB p;
  p.k = k;
  p.n = n;
  p.n_pad = round_up8(n);
  p.panels.assign(size_t(p.n_pad * k), 0.0f);
  pack_b_into(b, k, n, trans, trans ? k : n, p.panels.data());
  if (bias) {
    p.bias.assign(size_t(p.n_pad), 0.0f);
    std::memcpy(p.bias.data(), bias, size_t(n) * sizeof(float));
  }
  return p;
}

void apply_act(float* x, int64_t n, Act act) {
  switch (act) {
    case Act::kNone: return;
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return;
    case Act::kSigmoid: sigmoid_f32(x, x, n); return;
    case Act::kTanh: tanh_f32(x, x, n); return;
    case Act::kGelu:
      for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
      return;
  }
}

namespace {

// erf on 8 floats: x clamped to ±4, x·P(x²)/Q(x²) (the rational approximation Eigen uses for
// float erf; a few ulp against std::erf, absolute error < 2e-7). PERF NOTE: GELU through
// std::erf after the store was 26% of a d16 encoder layer's time at batch 256 (perf, sweep case 22).
TS_AVX2 inline __m256 erf8(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(4.f)), _mm256_set1_ps(-4.f));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-2.72614225801306e-10f);
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(2.77068142495902e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.10102402082508e-06f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-5.69250639462346e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-7.34990630326855e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.95459980854025e-03f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-1.60960333262415e-02f));
  p = _mm256_mul_ps(x, p);
  __m256 q = _mm256_set1_ps(-1.45660718464996e-05f);
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-2.13374055278905e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.68282697438203e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-7.37332916720468e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.42647390514189e-02f));
  return _mm256_div_ps(p, q);
}

// GELU (erf form, PyTorch's default): 0.5·x·(1 + erf(x/√2)).
TS_AVX2 inline __m256 gelu8(__m256 v) {
  const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.f), e));
}

TS_AVX2 inline __m256 act8(__m256 v, Act act) {
  switch (act) {
    case Act::kRelu: return _mm256_max_ps(v, _mm256_setzero_ps());
    case Act::kSigmoid: return sigmoid8(v);
    case Act::kTanh: return tanh8(v);
    case Act::kGelu: return gelu8(v);
    default: return v;
  }
}

// Epilogue: bias, activation, store (partial last panel through a temporary).
TS_AVX2 inline void store8(__m256 acc, const float* bias, int64_t j, int64_t n, float* dst, Act act) {
  __m256 v = acc;
  if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + j));
  v = act8(v, act);
  if (j + 8 <= n) {
    _mm256_storeu_ps(dst + j, v);
  } else {
    alignas(32) float tmp[8];
    _mm256_store_ps(tmp, v);
    for (int64_t t = 0; t < n - j; ++t) dst[j + t] = tmp[t];
  }
}

// PERF NOTE: the two hot shapes have named accumulators. With an accumulator array indexed in
// loops GCC 12 kept the array on the stack and stored all 8 vectors every k step, which made
// the batch-1 recurrent step (1 row × 384 columns) 4x slower than this version.
// 1 row × 64 columns (8 panels): the batch-1 matvec of the recurrent step.
TS_AVX2 void micro_1x8(const float* a, const float* panels, int64_t k, int64_t n, int64_t j0,
                       const float* bias, float* c, Act act) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  const float* p = panels + (j0 / 8) * k * 8;
  const int64_t ps = k * 8;  // panel stride in floats
  for (int64_t kk = 0; kk < k; ++kk) {
    __m256 av = _mm256_broadcast_ss(a + kk);
    const float* q = p + kk * 8;
    c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q), c0);
    c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + ps), c1);
    c2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + 2 * ps), c2);
    c3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + 3 * ps), c3);
    c4 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + 4 * ps), c4);
    c5 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + 5 * ps), c5);
    c6 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + 6 * ps), c6);
    c7 = _mm256_fmadd_ps(av, _mm256_loadu_ps(q + 7 * ps), c7);
  }
  store8(c0, bias, j0, n, c, act);
  store8(c1, bias, j0 + 8, n, c, act);
  store8(c2, bias, j0 + 16, n, c, act);
  store8(c3, bias, j0 + 24, n, c, act);
  store8(c4, bias, j0 + 32, n, c, act);
  store8(c5, bias, j0 + 40, n, c, act);
  store8(c6, bias, j0 + 48, n, c, act);
  store8(c7, bias, j0 + 56, n, c, act);
}

// 4 rows × 16 columns (2 panels): GEMMs over many rows (input projections, batches).
TS_AVX2 void micro_4x2(const float* a, int64_t lda, const float* panels, int64_t k, int64_t n,
                       int64_t j0, const float* bias, float* c, int64_t ldc, Act act) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00;
  const float* p0 = panels + (j0 / 8) * k * 8;
  const float* p1 = p0 + k * 8;
  const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
  for (int64_t kk = 0; kk < k; ++kk) {
    __m256 b0 = _mm256_loadu_ps(p0 + kk * 8), b1 = _mm256_loadu_ps(p1 + kk * 8);
    __m256 v = _mm256_broadcast_ss(a0 + kk);
    c00 = _mm256_fmadd_ps(v, b0, c00);
    c01 = _mm256_fmadd_ps(v, b1, c01);
    v = _mm256_broadcast_ss(a1 + kk);
    c10 = _mm256_fmadd_ps(v, b0, c10);
    c11 = _mm256_fmadd_ps(v, b1, c11);
    v = _mm256_broadcast_ss(a2 + kk);
    c20 = _mm256_fmadd_ps(v, b0, c20);
    c21 = _mm256_fmadd_ps(v, b1, c21);
    v = _mm256_broadcast_ss(a3 + kk);
    c30 = _mm256_fmadd_ps(v, b0, c30);
    c31 = _mm256_fmadd_ps(v, b1, c31);
  }
  store8(c00, bias, j0, n, c, act);
  store8(c01, bias, j0 + 8, n, c, act);
  store8(c10, bias, j0, n, c + ldc, act);
  store8(c11, bias, j0 + 8, n, c + ldc, act);
  store8(c20, bias, j0, n, c + 2 * ldc, act);
  store8(c21, bias, j0 + 8, n, c + 2 * ldc, act);
  store8(c30, bias, j0, n, c + 3 * ldc, act);
  store8(c31, bias, j0 + 8, n, c + 3 * ldc, act);
}

// Tails: R rows × 1 panel (R ≤ 4 accumulators, named through a switch-free unrolled body).
template <int R>
TS_AVX2 void micro_rx1(const float* a, int64_t lda, const float* panels, int64_t k, int64_t n,
                       int64_t j0, const float* bias, float* c, int64_t ldc, Act act) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
  const float* p = panels + (j0 / 8) * k * 8;
  for (int64_t kk = 0; kk < k; ++kk) {
    __m256 b = _mm256_loadu_ps(p + kk * 8);
    c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + kk), b, c0);
    if constexpr (R > 1) c1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + lda + kk), b, c1);
    if constexpr (R > 2) c2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 2 * lda + kk), b, c2);
    if constexpr (R > 3) c3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 3 * lda + kk), b, c3);
  }
  store8(c0, bias, j0, n, c, act);
  if constexpr (R > 1) store8(c1, bias, j0, n, c + ldc, act);
  if constexpr (R > 2) store8(c2, bias, j0, n, c + 2 * ldc, act);
  if constexpr (R > 3) store8(c3, bias, j0, n, c + 3 * ldc, act);
}

template <int R>
TS_AVX2 void row_block(const float* a, int64_t lda, const float* panels, int64_t k, int64_t n,
                       const float* bias, float* c, int64_t ldc, Act act) {
  int64_t n_pad = round_up8(n);
  int64_t j = 0;
  if constexpr (R == 1) {
    for (; j + 64 <= n_pad; j += 64) micro_1x8(a, panels, k, n, j, bias, c, act);
  }
  if constexpr (R == 4) {
    for (; j + 16 <= n_pad; j += 16) micro_4x2(a, lda, panels, k, n, j, bias, c, ldc, act);
  }
  for (; j < n_pad; j += 8) micro_rx1<R>(a, lda, panels, k, n, j, bias, c, ldc, act);
}

TS_AVX2 void gemm_avx2(const float* a, int64_t lda, int64_t m, const float* panels, int64_t k,
                       int64_t n, const float* bias, float* c, int64_t ldc, Act act) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) row_block<4>(a + i * lda, lda, panels, k, n, bias, c + i * ldc, ldc, act);
  for (; i < m; ++i) row_block<1>(a + i * lda, lda, panels, k, n, bias, c + i * ldc, ldc, act);
}

void gemm_scalar(const float* a, int64_t lda, int64_t m, const float* panels, int64_t k, int64_t n,
                 const float* bias, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const float* p = panels + (j / 8) * k * 8 + (j % 8);
      float s = bias ? bias[j] : 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) s += a[i * lda + kk] * p[kk * 8];
      c[i * ldc + j] = s;
    }
  }
}

}  // namespace

void gemm_packed(const float* a, int64_t lda, int64_t m, const float* panels, int64_t k, int64_t n,
                 const float* bias, float* c, int64_t ldc, Act act) {
  if (cpu_has_avx2_fma()) {
    gemm_avx2(a, lda, m, panels, k, n, bias, c, ldc, act);
    return;
  }
  gemm_scalar(a, lda, m, panels, k, n, bias, c, ldc);
  for (int64_t i = 0; i < m; ++i) apply_act(c + i * ldc, n, act);
}

}  // namespace ts::engine::cpu
