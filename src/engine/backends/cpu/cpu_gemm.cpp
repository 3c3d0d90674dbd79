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

TS_AVX2 inline __m256 act8(__m256 v, Act act) {
  switch (act) {
    case Act::kRelu: return _mm256_max_ps(v, _mm256_setzero_ps());
    case Act::kSigmoid: return sigmoid8(v);
    case Act::kTanh: return tanh8(v);
    default: return v;  // gelu runs after the store (needs erf)
  }
}

// R rows × C panels of 8 columns; k-loop over packed panels. PERF NOTE: 8 accumulators
// (R*C == 8) cover the FMA latency×throughput product on Zen/Intel cores.
template <int R, int C>
TS_AVX2 void micro(const float* a, int64_t lda, const float* panels, int64_t k, int64_t n,
                   int64_t j0, const float* bias, float* c, int64_t ldc, Act act) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < C; ++q) acc[r][q] = _mm256_setzero_ps();
  const float* bp[C];
  for (int q = 0; q < C; ++q) bp[q] = panels + (j0 / 8 + q) * k * 8;
  for (int64_t kk = 0; kk < k; ++kk) {
    __m256 bv[C];
    for (int q = 0; q < C; ++q) bv[q] = _mm256_loadu_ps(bp[q] + kk * 8);
    for (int r = 0; r < R; ++r) {
      __m256 av = _mm256_broadcast_ss(a + r * lda + kk);
      for (int q = 0; q < C; ++q) acc[r][q] = _mm256_fmadd_ps(av, bv[q], acc[r][q]);
    }
  }
  for (int q = 0; q < C; ++q) {
    int64_t j = j0 + q * 8;
    __m256 bb = bias ? _mm256_loadu_ps(bias + j) : _mm256_setzero_ps();
    for (int r = 0; r < R; ++r) {
      __m256 v = act8(_mm256_add_ps(acc[r][q], bb), act);
      float* dst = c + r * ldc + j;
      if (j + 8 <= n) {
        _mm256_storeu_ps(dst, v);
      } else {
        alignas(32) float tmp[8];
        _mm256_store_ps(tmp, v);
        for (int64_t t = 0; t < n - j; ++t) dst[t] = tmp[t];
      }
    }
  }
}

template <int R>
TS_AVX2 void row_block(const float* a, int64_t lda, const float* panels, int64_t k, int64_t n,
                       const float* bias, float* c, int64_t ldc, Act act) {
  int64_t n_pad = round_up8(n);
  int64_t j = 0;
  if constexpr (R == 1) {
    for (; j + 64 <= n_pad; j += 64) micro<1, 8>(a, lda, panels, k, n, j, bias, c, ldc, act);
    for (; j + 32 <= n_pad; j += 32) micro<1, 4>(a, lda, panels, k, n, j, bias, c, ldc, act);
  }
  for (; j + 16 <= n_pad; j += 16) micro<R, 2>(a, lda, panels, k, n, j, bias, c, ldc, act);
  for (; j < n_pad; j += 8) micro<R, 1>(a, lda, panels, k, n, j, bias, c, ldc, act);
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
    if (act != Act::kGelu) return;
    for (int64_t i = 0; i < m; ++i) apply_act(c + i * ldc, n, Act::kGelu);
    return;
  }
  gemm_scalar(a, lda, m, panels, k, n, bias, c, ldc);
  for (int64_t i = 0; i < m; ++i) apply_act(c + i * ldc, n, act);
}

}  // namespace ts::engine::cpu
