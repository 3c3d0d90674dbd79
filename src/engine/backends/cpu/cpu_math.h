#pragma once
// Fast vector math for the CPU backend: exp, sigmoid, tanh on 8 floats (AVX2+FMA), accurate to
// ~2e-7 relative (exp, sigmoid) and ~3e-7 absolute/relative (tanh), plus array helpers that
// dispatch at run time between AVX2 and scalar code. The AVX2 functions carry a target
// attribute so this compiles without -mavx2 (sanitizer builds); call them only when
// cpu_has_avx2_fma() is true.
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#define TS_AVX2 __attribute__((target("avx2,fma")))
// AVX-512 with BF16 dot products (vdpbf16ps): the batch-1 recurrence of BF16 plans (cpu_rnn_pack.h).
#define TS_AVX512_BF16 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16")))

namespace ts::engine::cpu {

bool cpu_has_avx2_fma();
// AVX-512 F/BW/VL and AVX512_BF16 (plus AVX2/FMA): the CPU can run TS_AVX512_BF16 code.
bool cpu_has_avx512_bf16();

// Cephes-style exp: range reduction by ln 2, degree-6 polynomial, 2^n by exponent bits.
TS_AVX2 static inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f), lo = _mm256_set1_ps(-88.3762626647949f);
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
  __m256 x2 = _mm256_mul_ps(x, x);
  y = _mm256_fmadd_ps(y, x2, _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i n = _mm256_cvttps_epi32(fx);
  n = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(n));
}

// 1 / (1 + exp(-x)): no cancellation, so relative accuracy holds in the tails too.
TS_AVX2 static inline __m256 sigmoid8(__m256 x) {
  __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// Rational minimax approximation (as in Eigen's fast tanh): odd degree-13 / even degree-6,
// clamped where tanh rounds to ±1 in float.
TS_AVX2 static inline __m256 tanh8(__m256 x) {
  const __m256 clamp = _mm256_set1_ps(7.90531110763549805f);
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_sub_ps(_mm256_setzero_ps(), clamp)), clamp);
  __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-2.76076847742355e-16f);
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(2.00018790482477e-13f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-8.60467152213735e-11f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(5.12229709037114e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(1.48572235717979e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(6.37261928875436e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(4.89352455891786e-03f));
  p = _mm256_mul_ps(x, p);
  __m256 q = _mm256_set1_ps(1.19825839466702e-06f);
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(1.18534705686654e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(2.26843463243900e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(4.89352518554385e-03f));
  return _mm256_div_ps(p, q);
}

inline float sigmoid_scalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Array helpers (dst may equal src). n elements.
void exp_f32(const float* src, float* dst, int64_t n);
void sigmoid_f32(const float* src, float* dst, int64_t n);
void tanh_f32(const float* src, float* dst, int64_t n);

}  // namespace ts::engine::cpu
