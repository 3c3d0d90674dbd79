#pragma once
// ticksentry's own FP32 GEMM for the CPU backend ("avx2" tactic): B is packed once into panels
// of 8 columns ([N/8][K][8], zero padded to a multiple of 8) so each panel streams contiguously
// through the cache, and register-blocked AVX2+FMA micro-kernels compute C = A·B + bias with an
// activation epilogue applied in registers. Used by FusedGemm/Gemm/MatMul and by the GRU/LSTM
// input projections (all time steps in one GEMM) and recurrent steps.
#include <cstdint>
#include <string_view>
#include <vector>

namespace ts::engine::cpu {

enum class Act : uint8_t { kNone = 0, kRelu, kSigmoid, kTanh, kGelu };
// "relu"|"sigmoid"|"tanh"|"gelu"|"none"|"" → Act; false for an unknown name.
bool act_from_name(const std::string_view name, Act* out);

struct PackedB {
  int64_t k = 0, n = 0, n_pad = 0;
  std::vector<float> panels;   // n_pad/8 panels of k*8 floats
  std::vector<float> bias;     // n_pad floats, or empty
};

// Packs B ([k,n] row-major, or [n,k] when trans) and an optional bias[n].
PackedB pack_b(const float* b, int64_t k, int64_t n, bool trans, const float* bias = nullptr);
// Packs into caller memory (n_pad/8*k*8 floats) without allocating: for runtime B operands.
void pack_b_into(const float* b, int64_t k, int64_t n, bool trans, int64_t ldb, float* panels);

// C[m, n] (row stride ldc) = act(A[m, k] (row stride lda) · B + bias). bias may be null.
void gemm_packed(const float* a, int64_t lda, int64_t m, const float* panels, int64_t k, int64_t n,
                 const float* bias, float* c, int64_t ldc, Act act);
inline void gemm_packed(const float* a, int64_t lda, int64_t m, const PackedB& b, float* c,
                        int64_t ldc, Act act) {
  gemm_packed(a, lda, m, b.panels.data(), b.k, b.n, b.bias.empty() ? nullptr : b.bias.data(), c,
              ldc, act);
}

// Applies an activation in place to n floats.
void apply_act(float* x, int64_t n, Act act);

inline int64_t round_up8(int64_t v) { return (v + 7) & ~int64_t(7); }

}  // namespace ts::engine::cpu
