#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {

bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

bool cpu_has_avx512_bf16() {
  static const bool has = cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return has;
}

// One AVX2 loop and one scalar loop per function (no lambdas: a lambda returning __m256
// outside a target("avx2") context changes the ABI).
#define TS_DEFINE_ARRAY_FN(name, vec, scalar)                                      \
  namespace {                                                                       \
  TS_AVX2 void name##_avx2(const float* src, float* dst, int64_t n) {              \
    int64_t i = 0;                                                                  \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, vec(_mm256_loadu_ps(src + i))); \
    for (; i < n; ++i) dst[i] = scalar(src[i]);                                     \
  }                                                                                 \
  }                                                                                 \
  void name(const float* src, float* dst, int64_t n) {                              \
    if (cpu_has_avx2_fma()) return name##_avx2(src, dst, n);                        \
    for (int64_t i = 0; i < n; ++i) dst[i] = scalar(src[i]);                        \
  }

namespace {
float exp_scalar(float v) { return std::exp(v); }
float tanh_scalar(float v) { return std::tanh(v); }
}  // namespace

TS_DEFINE_ARRAY_FN(exp_f32, exp8, exp_scalar)
TS_DEFINE_ARRAY_FN(sigmoid_f32, sigmoid8, sigmoid_scalar)
TS_DEFINE_ARRAY_FN(tanh_f32, tanh8, tanh_scalar)

#undef TS_DEFINE_ARRAY_FN

}  // namespace ts::engine::cpu
