#pragma once
// Internal to the CPU backend: the pieces of the attention and LayerNorm kernels that the fused
// encoder layer (cpu_encoder.cpp) runs on its own buffers.
#include <cstdint>

namespace ts::engine::cpu {

// One head of softmax(scale · q·kᵀ) · v, q [tq][d], k and v [tk][d], o [tq][d], all row-major and
// contiguous (cpu_attention.cpp; needs AVX2+FMA). causal_q0 ≥ 0: query row i sees keys
// 0..causal_q0 + i only (the causal mask; causal_q0 = tk − tq for the last tq positions); −1: all.
// scratch: (d + 4) · round_up8(tk) floats.
void attention_head_avx2(const float* q, const float* k, const float* v, float* o, int64_t tq, int64_t tk, int64_t d,
                         float scale, int64_t causal_q0, float* scratch);

// LayerNorm over each of `rows` rows of len floats (s, b per element, or null), src may be dst
// (cpu_norm.cpp).
void layer_norm_rows(const float* src, float* dst, int64_t rows, int64_t len, const float* s, const float* b, float eps);

}  // namespace ts::engine::cpu
