// GRU and LSTM (ONNX semantics: forward direction, layout 0 or 1, default activations; GRU gates
// z,r,h with linear_before_reset 0 or 1; LSTM gates i,o,f,c with optional peepholes and
// sequence_lens). PERF NOTE: the input projection of all T steps runs as ONE GEMM
// ([T*B, I] · [I, G*H]) before the recurrence. Two own tactics for the recurrence (a third,
// "onednn", is oneDNN's RNN primitive: cpu_rnn_onednn.cpp):
//  - "avx2_blocked" (default): R packed in gate-interleaved unit blocks (cpu_rnn_pack.h), one
//    contiguous 64-byte-aligned buffer per block; h is double-buffered. Batch 1: each block's
//    GEMV (≤ 12 FMA chains) carries the previous block's gate math software-pipelined into it,
//    and successive steps walk the weights in alternating order (the tail of one step's stream
//    is still in L1 when the next starts). Batch > 1: every block's small GEMM (4x3 register
//    blocks), then the gate math over whole rows.
//  - "avx2_packed": R as 8-column GEMM panels, h·Rᵀ for all gates then the gate math.
// Measured (bench/engine_rnn_bench, GRU-2x128 F=32 T=60 batch 1, one thread, shared 2-core
// EPYC at ~2.95 GHz): blocked ~385-400 µs median (min ~360) vs packed ~435-455 (min ~405).
// What is left is bound by L2→L1 bandwidth: each step streams R (196 KB at H=128) at ~2 µs,
// 120 steps ≈ 240 µs; the input projections are ~80 µs at FMA peak. Gate math uses the AVX2
// exp/tanh approximations (~2e-7).
#include <algorithm>
#include <cstring>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_math.h"
#include "engine/backends/cpu/cpu_rnn.h"
#include "engine/backends/cpu/cpu_rnn_pack.h"
#include "engine/backends/cpu/cpu_rnn_stack.h"
#include "engine/ir/rnn_weights.h"

namespace ts::engine::cpu {
namespace {

constexpr const char* kBlockedTactic = "avx2_blocked";  // default (first)
constexpr const char* kPanelTactic = "avx2_packed";
constexpr const char* kOnednnTactic = "onednn";

struct RnnWeights {
  int64_t hidden = 0, input = 0, gates = 0;
  PackedB wx;          // [I, gates*H] with the folded input-side bias
  PackedB rh;          // [H, gates*H] (GRU lbr=0: only z,r columns)
  PackedB rh_h;        // GRU lbr=0: [H, H] for the candidate gate
  std::vector<float> rbh;   // GRU lbr=1: recurrent bias of the h gate
  std::vector<float> peep;  // LSTM: [3H] i,o,f, or empty
  bool blocked = false;     // "avx2_blocked": rb/rb_n instead of rh/rh_h
  PackedRnnR rb;            // all gates (GRU lbr=0: z,r only)
  PackedRnnR rb_n;          // GRU lbr=0: the candidate gate
};

inline float* f32(void* p) { return static_cast<float*>(p); }

// Loads and stores of 8 lanes: all of them (FullLanes) or the first n < 8 (TailLanes, masked:
// lanes past n are neither read nor written, so a tail never touches memory past a row's end).
// PERF NOTE: hidden sizes that are not multiples of 8 (53, 99, 109, ...) used to run their last
// 1-7 units through std::exp/std::tanh one unit at a time; at batch 16 the LSTM-2x20 spent about
// half its time there (4 of its 20 units). Masked vectors cost one vector's gate math.
struct FullLanes {
  TS_AVX2 __m256 ld(const float* p) const { return _mm256_loadu_ps(p); }
  TS_AVX2 void st(float* p, __m256 v) const { _mm256_storeu_ps(p, v); }
};
struct TailLanes {
  __m256i m;
  TS_AVX2 explicit TailLanes(int64_t n)
      : m(_mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))) {}
  TS_AVX2 __m256 ld(const float* p) const { return _mm256_maskload_ps(p, m); }
  TS_AVX2 void st(float* p, __m256 v) const { _mm256_maskstore_ps(p, m, v); }
};

// σ(x) = ½·tanh(x/2) + ½ on tanh8's rational approximation (absolute error ~1.5e-7).
// PERF NOTE: at batch 256 the LSTM-1x53's gate math (3 σ + 2 tanh per unit) took more time than
// its recurrent GEMM; σ through tanh8 needs no exp (one division, ~17 instead of ~24 uops, a
// shorter dependency chain).
TS_AVX2 inline __m256 gate_sigmoid8(__m256 x) {
  const __m256 half = _mm256_set1_ps(0.5f);
  return _mm256_fmadd_ps(half, tanh8(_mm256_mul_ps(half, x)), half);
}

// Runs body(lanes, u) over [u, u_end) in 8-lane steps, the last one masked.
template <typename Body>
TS_AVX2 inline void for_lanes(int64_t u, int64_t u_end, const Body& body) {
  for (; u + 8 <= u_end; u += 8) body(FullLanes{}, u);
  if (u < u_end) body(TailLanes(u_end - u), u);
}

// --- step math (AVX2 with scalar tails) ---

TS_AVX2 void gru_step_avx2(const float* g, const float* hr, const float* rbh, const float* hr_h,
                           bool /*lbr*/, int64_t h, float* state, float* cand_r /*lbr0: r*H out*/,
                           int phase) {
  // phase 0 (lbr=1): full update. phase 1 (lbr=0): compute z (into cand_r+h) and r*H (cand_r).
  // phase 2 (lbr=0): candidate from hr_h, update state.
  if (phase == 0) {
    for_lanes(0, h, [&](const auto& l, int64_t j) TS_AVX2 {
      __m256 z = gate_sigmoid8(_mm256_add_ps(l.ld(g + j), l.ld(hr + j)));
      __m256 r = gate_sigmoid8(_mm256_add_ps(l.ld(g + h + j), l.ld(hr + h + j)));
      __m256 rh = _mm256_add_ps(l.ld(hr + 2 * h + j), l.ld(rbh + j));
      __m256 n = tanh8(_mm256_fmadd_ps(r, rh, l.ld(g + 2 * h + j)));
      l.st(state + j, _mm256_fmadd_ps(z, _mm256_sub_ps(l.ld(state + j), n), n));
    });
  } else if (phase == 1) {
    for_lanes(0, h, [&](const auto& l, int64_t j) TS_AVX2 {
      l.st(cand_r + h + j, gate_sigmoid8(_mm256_add_ps(l.ld(g + j), l.ld(hr + j))));
      __m256 r = gate_sigmoid8(_mm256_add_ps(l.ld(g + h + j), l.ld(hr + h + j)));
      l.st(cand_r + j, _mm256_mul_ps(r, l.ld(state + j)));
    });
  } else {
    for_lanes(0, h, [&](const auto& l, int64_t j) TS_AVX2 {
      __m256 n = tanh8(_mm256_add_ps(l.ld(g + 2 * h + j), l.ld(hr_h + j)));
      l.st(state + j, _mm256_fmadd_ps(l.ld(cand_r + h + j), _mm256_sub_ps(l.ld(state + j), n), n));
    });
  }
}

void gru_step_scalar(const float* g, const float* hr, const float* rbh, const float* hr_h, bool,
                     int64_t h, float* state, float* cand_r, int phase) {
  for (int64_t j = 0; j < h; ++j) {
    if (phase == 0) {
      float z = sigmoid_scalar(g[j] + hr[j]), r = sigmoid_scalar(g[h + j] + hr[h + j]);
      float n = std::tanh(g[2 * h + j] + r * (hr[2 * h + j] + rbh[j]));
      state[j] = n + z * (state[j] - n);
    } else if (phase == 1) {
      cand_r[h + j] = sigmoid_scalar(g[j] + hr[j]);
      cand_r[j] = sigmoid_scalar(g[h + j] + hr[h + j]) * state[j];
    } else {
      float n = std::tanh(g[2 * h + j] + hr_h[j]);
      state[j] = n + cand_r[h + j] * (state[j] - n);
    }
  }
}

TS_AVX2 void lstm_step_avx2(const float* g, const float* hr, const float* p, int64_t h, float* hs, float* cs) {
  const __m256 zero = _mm256_setzero_ps();
  for_lanes(0, h, [&](const auto& l, int64_t j) TS_AVX2 {
    __m256 c = l.ld(cs + j);
    __m256 pi = p ? l.ld(p + j) : zero, po = p ? l.ld(p + h + j) : zero, pf = p ? l.ld(p + 2 * h + j) : zero;
    __m256 i = gate_sigmoid8(_mm256_fmadd_ps(pi, c, _mm256_add_ps(l.ld(g + j), l.ld(hr + j))));
    __m256 f = gate_sigmoid8(_mm256_fmadd_ps(pf, c, _mm256_add_ps(l.ld(g + 2 * h + j), l.ld(hr + 2 * h + j))));
    __m256 cc = tanh8(_mm256_add_ps(l.ld(g + 3 * h + j), l.ld(hr + 3 * h + j)));
    c = _mm256_fmadd_ps(f, c, _mm256_mul_ps(i, cc));
    __m256 o = gate_sigmoid8(_mm256_fmadd_ps(po, c, _mm256_add_ps(l.ld(g + h + j), l.ld(hr + h + j))));
    l.st(cs + j, c);
    l.st(hs + j, _mm256_mul_ps(o, tanh8(c)));
  });
}

void lstm_step_scalar(const float* g, const float* hr, const float* p, int64_t h, float* hs, float* cs) {
  for (int64_t j = 0; j < h; ++j) {
    float c = cs[j];
    float i = sigmoid_scalar(g[j] + hr[j] + (p ? p[j] * c : 0.0f));
    float f = sigmoid_scalar(g[2 * h + j] + hr[2 * h + j] + (p ? p[2 * h + j] * c : 0.0f));
    float cc = std::tanh(g[3 * h + j] + hr[3 * h + j]);
    c = f * c + i * cc;
    float o = sigmoid_scalar(g[h + j] + hr[h + j] + (p ? p[h + j] * c : 0.0f));
    cs[j] = c;
    hs[j] = o * std::tanh(c);
  }
}

// --- block gate math ("avx2_blocked"): units [blk.u0, blk.u0 + blk.units) of one batch row.
// g: the row's input projection [G*H]; acc: the block's h·Rᵀ, gate-interleaved [G][u_pad];
// hp: previous h (row), hn: new h (row). AVX2 for whole vectors, scalar for the tail (from u).

void gru_lbr_units_scalar(const float* g, const float* acc, const float* rbh, int64_t h, const RnnBlock& blk,
                          int64_t u, int64_t u_end, const float* hp, float* hn) {
  const int64_t up = blk.u_pad;
  for (; u < u_end; ++u) {
    int64_t j = blk.u0 + u;
    float z = sigmoid_scalar(g[j] + acc[u]), r = sigmoid_scalar(g[h + j] + acc[up + u]);
    float n = std::tanh(g[2 * h + j] + r * (acc[2 * up + u] + rbh[j]));
    hn[j] = n + z * (hp[j] - n);
  }
}

TS_AVX2 void gru_lbr_units_avx2(const float* g, const float* acc, const float* rbh, int64_t h, const RnnBlock& blk,
                                int64_t u, int64_t u_end, const float* hp, float* hn) {
  const int64_t up = blk.u_pad;
  for_lanes(u, u_end, [&](const auto& l, int64_t v) TS_AVX2 {
    const int64_t j = blk.u0 + v;
    __m256 z = gate_sigmoid8(_mm256_add_ps(l.ld(g + j), l.ld(acc + v)));
    __m256 r = gate_sigmoid8(_mm256_add_ps(l.ld(g + h + j), l.ld(acc + up + v)));
    __m256 rh = _mm256_add_ps(l.ld(acc + 2 * up + v), l.ld(rbh + j));
    __m256 n = tanh8(_mm256_fmadd_ps(r, rh, l.ld(g + 2 * h + j)));
    l.st(hn + j, _mm256_fmadd_ps(z, _mm256_sub_ps(l.ld(hp + j), n), n));
  });
}

// GRU lbr=0, phase 1 (block of the z,r pack): z → zb, r ⊙ h_prev → rh.
void gru_zr_units_scalar(const float* g, const float* acc, int64_t h, const RnnBlock& blk, int64_t u,
                         const float* hp, float* zb, float* rh) {
  const int64_t up = blk.u_pad;
  for (; u < blk.units; ++u) {
    int64_t j = blk.u0 + u;
    zb[j] = sigmoid_scalar(g[j] + acc[u]);
    rh[j] = sigmoid_scalar(g[h + j] + acc[up + u]) * hp[j];
  }
}

TS_AVX2 void gru_zr_units_avx2(const float* g, const float* acc, int64_t h, const RnnBlock& blk, const float* hp,
                               float* zb, float* rh) {
  const int64_t up = blk.u_pad;
  for_lanes(0, blk.units, [&](const auto& l, int64_t v) TS_AVX2 {
    const int64_t j = blk.u0 + v;
    l.st(zb + j, gate_sigmoid8(_mm256_add_ps(l.ld(g + j), l.ld(acc + v))));
    __m256 r = gate_sigmoid8(_mm256_add_ps(l.ld(g + h + j), l.ld(acc + up + v)));
    l.st(rh + j, _mm256_mul_ps(r, l.ld(hp + j)));
  });
}

// GRU lbr=0, phase 2 (block of the candidate pack, acc = (r ⊙ h_prev)·Rhᵀ).
void gru_n_units_scalar(const float* g, const float* acc, int64_t h, const RnnBlock& blk, int64_t u,
                        const float* zb, const float* hp, float* hn) {
  for (; u < blk.units; ++u) {
    int64_t j = blk.u0 + u;
    float n = std::tanh(g[2 * h + j] + acc[u]);
    hn[j] = n + zb[j] * (hp[j] - n);
  }
}

TS_AVX2 void gru_n_units_avx2(const float* g, const float* acc, int64_t h, const RnnBlock& blk, const float* zb,
                              const float* hp, float* hn) {
  for_lanes(0, blk.units, [&](const auto& l, int64_t v) TS_AVX2 {
    const int64_t j = blk.u0 + v;
    __m256 n = tanh8(_mm256_add_ps(l.ld(g + 2 * h + j), l.ld(acc + v)));
    l.st(hn + j, _mm256_fmadd_ps(l.ld(zb + j), _mm256_sub_ps(l.ld(hp + j), n), n));
  });
}

// LSTM (gates i,o,f,c; peepholes p = [3H] i,o,f or null). c is updated in place.
void lstm_units_scalar(const float* g, const float* acc, const float* p, int64_t h, const RnnBlock& blk, int64_t u,
                       int64_t u_end, float* cs, float* hn) {
  const int64_t up = blk.u_pad;
  for (; u < u_end; ++u) {
    int64_t j = blk.u0 + u;
    float c = cs[j];
    float i = sigmoid_scalar(g[j] + acc[u] + (p ? p[j] * c : 0.0f));
    float f = sigmoid_scalar(g[2 * h + j] + acc[2 * up + u] + (p ? p[2 * h + j] * c : 0.0f));
    float cc = std::tanh(g[3 * h + j] + acc[3 * up + u]);
    c = f * c + i * cc;
    float o = sigmoid_scalar(g[h + j] + acc[up + u] + (p ? p[h + j] * c : 0.0f));
    cs[j] = c;
    hn[j] = o * std::tanh(c);
  }
}

TS_AVX2 void lstm_units_avx2(const float* g, const float* acc, const float* p, int64_t h, const RnnBlock& blk,
                             int64_t u, int64_t u_end, float* cs, float* hn) {
  const int64_t up = blk.u_pad;
  const __m256 zero = _mm256_setzero_ps();
  for_lanes(u, u_end, [&](const auto& l, int64_t v) TS_AVX2 {
    const int64_t j = blk.u0 + v;
    __m256 c = l.ld(cs + j);
    __m256 pi = p ? l.ld(p + j) : zero, po = p ? l.ld(p + h + j) : zero, pf = p ? l.ld(p + 2 * h + j) : zero;
    __m256 i = gate_sigmoid8(_mm256_fmadd_ps(pi, c, _mm256_add_ps(l.ld(g + j), l.ld(acc + v))));
    __m256 f = gate_sigmoid8(_mm256_fmadd_ps(pf, c, _mm256_add_ps(l.ld(g + 2 * h + j), l.ld(acc + 2 * up + v))));
    __m256 cc = tanh8(_mm256_add_ps(l.ld(g + 3 * h + j), l.ld(acc + 3 * up + v)));
    c = _mm256_fmadd_ps(f, c, _mm256_mul_ps(i, cc));
    __m256 o = gate_sigmoid8(_mm256_fmadd_ps(po, c, _mm256_add_ps(l.ld(g + h + j), l.ld(acc + up + v))));
    l.st(cs + j, c);
    l.st(hn + j, _mm256_mul_ps(o, tanh8(c)));
  });
}

// Gate math of one block as a rnn_gemv_pipelined epilogue, in two halves (units [0, 16) after
// the first quarter of the next block's k loop, the rest after the third): two vectors of
// independent dependency chains at a time measured ~3% faster than one vector per quarter or
// all at once. blk == null: no-op.
inline void chunk_units(const RnnBlock& blk, int c, int64_t* u0, int64_t* u1) {
  const int64_t half = std::min<int64_t>(16, blk.units);
  *u0 = c == 0 ? 0 : half;
  *u1 = c == 0 ? half : c == 2 ? blk.units : half;
}

struct GruLbrEpi {
  const float* g = nullptr;
  const float* acc = nullptr;
  const float* rbh = nullptr;
  int64_t h = 0;
  const RnnBlock* blk = nullptr;
  const float* hp = nullptr;
  float* hn = nullptr;
  TS_AVX2 void operator()(int c) const {
    if (!blk) return;
    int64_t u0, u1;
    chunk_units(*blk, c, &u0, &u1);
    if (u0 < u1) gru_lbr_units_avx2(g, acc, rbh, h, *blk, u0, u1, hp, hn);
  }
};

struct LstmEpi {
  const float* g = nullptr;
  const float* acc = nullptr;
  const float* peep = nullptr;
  int64_t h = 0;
  const RnnBlock* blk = nullptr;
  float* cs = nullptr;
  float* hn = nullptr;
  TS_AVX2 void operator()(int c) const {
    if (!blk) return;
    int64_t u0, u1;
    chunk_units(*blk, c, &u0, &u1);
    if (u0 < u1) lstm_units_avx2(g, acc, peep, h, *blk, u0, u1, cs, hn);
  }
};

// One batch-1 step: every block's GEMV with the previous block's gate math pipelined into it
// (tmp holds two [ldt] pre-activation buffers, alternating), then the last block's gate math.
template <typename Epi>
TS_AVX2 void pipelined_step(const PackedRnnR& p, const float* hp, bool rev, float* tmp, int64_t ldt, Epi proto) {
  Epi prev = proto;
  prev.blk = nullptr;
  const size_t nb = p.blocks.size();
  for (size_t q = 0; q < nb; ++q) {
    const RnnBlock& blk = p.blocks[rev ? nb - 1 - q : q];
    float* out = tmp + int64_t(q & 1) * ldt;
    rnn_block_gemv_pipelined(hp, p, blk, rev, out, prev);
    prev = proto;
    prev.acc = out;
    prev.blk = &blk;
  }
  for (int c = 0; c < 4; ++c) prev(c);
}

class RnnKernel final : public Kernel {
 public:
  RnnKernel(RnnWeights w, bool lstm, bool lbr, bool batch_major)
      : w_(std::move(w)), lstm_(lstm), lbr_(lbr), batch_major_(batch_major) {}
  bool bf16() const { return w_.rb.bf16; }

  Status run(const KernelArgs& a) const override {
    const RtTensor* x = a.input(0);
    if (!x || x->dtype != DType::kF32 || x->dims.size() != 3) {
      return bad_input(batch_major_ ? "X must be f32 [batch, seq, input]" : "X must be f32 [seq, batch, input]");
    }
    int64_t t_len = x->dims[batch_major_ ? 1 : 0], b = x->dims[batch_major_ ? 0 : 1], h = w_.hidden;
    if (x->dims[2] != w_.input) {
      return bad_input("X shape " + dims_str(x->dims) + " does not match input_size " + std::to_string(w_.input));
    }
    const RtTensor* lens = a.input(4);
    const RtTensor* h0 = a.input(5);
    const RtTensor* c0 = lstm_ ? a.input(6) : nullptr;
    if (lens && (lens->numel() != b || (lens->dtype != DType::kI32 && lens->dtype != DType::kI64))) {
      return bad_input("sequence_lens must be int32 [batch]");
    }
    if (h0 && (h0->dtype != DType::kF32 || h0->numel() != b * h)) return bad_input("initial_h must be f32 [1, batch, hidden]");
    if (c0 && (c0->dtype != DType::kF32 || c0->numel() != b * h)) return bad_input("initial_c must be f32 [1, batch, hidden]");
    if (w_.blocked) return run_blocked(a, *x, lens, h0, c0);

    int64_t gh = w_.gates * h, npad = round_up8(gh);
    size_t g_sz = size_t(t_len * b * gh), hr_sz = size_t(b * npad), st_sz = size_t(b * h);
    size_t aux_sz = size_t(b * 2 * h) + size_t(b * round_up8(h));
    float* base = f32(a.scratch->get((g_sz + hr_sz + 2 * st_sz + aux_sz + 64) * sizeof(float)));
    float* g = base;
    float* hr = g + g_sz;
    float* hs = hr + hr_sz;
    float* cs = hs + st_sz;
    float* aux = cs + st_sz;            // GRU lbr=0: [b][2h] r*H and z
    float* hr_h = aux + size_t(b * 2 * h);  // GRU lbr=0: [b][h] candidate projection

    // Input projection of every step at once.
    gemm_packed(x->as<float>(), w_.input, t_len * b, w_.wx, g, gh, Act::kNone);
    if (h0) std::memcpy(hs, h0->data, st_sz * sizeof(float));
    else std::memset(hs, 0, st_sz * sizeof(float));
    if (c0) std::memcpy(cs, c0->data, st_sz * sizeof(float));
    else std::memset(cs, 0, st_sz * sizeof(float));

    RtTensor* y = a.out.size() > 0 ? a.out[0] : nullptr;
    if (y) {
      const int64_t yd[4] = {t_len, 1, b, h}, yd_bm[4] = {b, t_len, 1, h};
      y->ensure(DType::kF32, batch_major_ ? yd_bm : yd);
    }
    bool avx2 = cpu_has_avx2_fma();
    auto len_of = [&](int64_t bi) -> int64_t {
      if (!lens) return t_len;
      return lens->dtype == DType::kI32 ? lens->as<int32_t>()[bi] : lens->as<int64_t>()[bi];
    };
    for (int64_t t = 0; t < t_len; ++t) {
      gemm_packed(hs, h, b, w_.rh, hr, npad, Act::kNone);
      if (lstm_) {
        for (int64_t bi = 0; bi < b; ++bi) {
          if (t >= len_of(bi)) continue;
          const float* p = w_.peep.empty() ? nullptr : w_.peep.data();
          if (avx2) lstm_step_avx2(g + row(t, bi, t_len, b) * gh, hr + bi * npad, p, h, hs + bi * h, cs + bi * h);
          else lstm_step_scalar(g + row(t, bi, t_len, b) * gh, hr + bi * npad, p, h, hs + bi * h, cs + bi * h);
        }
      } else if (lbr_) {
        for (int64_t bi = 0; bi < b; ++bi) {
          if (t >= len_of(bi)) continue;
          if (avx2) gru_step_avx2(g + row(t, bi, t_len, b) * gh, hr + bi * npad, w_.rbh.data(), nullptr, true, h, hs + bi * h, nullptr, 0);
          else gru_step_scalar(g + row(t, bi, t_len, b) * gh, hr + bi * npad, w_.rbh.data(), nullptr, true, h, hs + bi * h, nullptr, 0);
        }
      } else {
        for (int64_t bi = 0; bi < b; ++bi) {
          if (avx2) gru_step_avx2(g + row(t, bi, t_len, b) * gh, hr + bi * npad, nullptr, nullptr, false, h, hs + bi * h, aux + bi * 2 * h, 1);
          else gru_step_scalar(g + row(t, bi, t_len, b) * gh, hr + bi * npad, nullptr, nullptr, false, h, hs + bi * h, aux + bi * 2 * h, 1);
        }
        gemm_packed(aux, 2 * h, b, w_.rh_h, hr_h, h, Act::kNone);
        for (int64_t bi = 0; bi < b; ++bi) {
          if (t >= len_of(bi)) continue;
          if (avx2) gru_step_avx2(g + row(t, bi, t_len, b) * gh, nullptr, nullptr, hr_h + bi * h, false, h, hs + bi * h, aux + bi * 2 * h, 2);
          else gru_step_scalar(g + row(t, bi, t_len, b) * gh, nullptr, nullptr, hr_h + bi * h, false, h, hs + bi * h, aux + bi * 2 * h, 2);
        }
      }
      if (y) write_y_step(y, t, t_len, b, hs, len_of);
    }
    write_states(a, b, hs, cs);
    return Status::ok();
  }

 private:
  // The "avx2_blocked" recurrence (see the file comment). Inputs already validated.
  Status run_blocked(const KernelArgs& a, const RtTensor& x, const RtTensor* lens, const RtTensor* h0,
                     const RtTensor* c0) const {
    const int64_t t_len = x.dims[batch_major_ ? 1 : 0], b = x.dims[batch_major_ ? 0 : 1], h = w_.hidden,
                  gh = w_.gates * h;
    // tmp row: h·Rᵀ of every block of a pack side by side (block q at column offset/k).
    auto col_of = [](const PackedRnnR& p, const RnnBlock& blk) { return blk.offset / p.k; };
    const int64_t ldt = std::max(w_.rb.total_cols(), w_.rb_n.total_cols());
    const size_t g_sz = size_t(t_len * b * gh), tmp_sz = size_t(std::max<int64_t>(b, 2) * ldt), st_sz = size_t(b * h);
    float* base = f32(a.scratch->get((g_sz + tmp_sz + 5 * st_sz + 64) * sizeof(float)));
    float* g = base;
    float* tmp = g + g_sz;   // [b][ldt]: h·Rᵀ, blocks side by side
    float* hp = tmp + tmp_sz;  // h of the previous step
    float* hn = hp + st_sz;    // h of this step
    float* cs = hn + st_sz;    // LSTM c (in place)
    float* zb = cs + st_sz;    // GRU lbr=0: z
    float* rh = zb + st_sz;    // GRU lbr=0: r ⊙ h_prev

    gemm_packed(x.as<float>(), w_.input, t_len * b, w_.wx, g, gh, Act::kNone);
    if (h0) std::memcpy(hp, h0->data, st_sz * sizeof(float));
    else std::memset(hp, 0, st_sz * sizeof(float));
    if (c0) std::memcpy(cs, c0->data, st_sz * sizeof(float));
    else std::memset(cs, 0, st_sz * sizeof(float));
    RtTensor* y = a.out.size() > 0 ? a.out[0] : nullptr;
    if (y) {
      const int64_t yd[4] = {t_len, 1, b, h}, yd_bm[4] = {b, t_len, 1, h};
      y->ensure(DType::kF32, batch_major_ ? yd_bm : yd);
    }
    const bool avx2 = cpu_has_avx2_fma();
    auto len_of = [&](int64_t bi) -> int64_t {
      if (!lens) return t_len;
      return lens->dtype == DType::kI32 ? lens->as<int32_t>()[bi] : lens->as<int64_t>()[bi];
    };
    const float* peep = w_.peep.empty() ? nullptr : w_.peep.data();
    const float* rbh = w_.rbh.data();
    // Batch 1, GRU lbr=1 / LSTM: gate math software-pipelined into the next block's GEMV.
    const bool pipelined = b == 1 && avx2 && (lstm_ || lbr_);
    // Every block of a pack: h·Rᵀ for all rows into tmp (serpentine k order at batch 1), then
    // the gate math row by row (batch > 1: a small GEMM, then gates over whole rows).
    auto pack_gemm = [&](const float* hin, const PackedRnnR& p, bool rev) {
      const size_t nbk = p.blocks.size();
      for (size_t q = 0; q < nbk; ++q) {
        const RnnBlock& blk = p.blocks[rev ? nbk - 1 - q : q];
        float* out = tmp + col_of(p, blk);
        if (avx2) rnn_block_gemm(hin, h, b, p, blk, rev && b == 1, out, ldt);
        else rnn_block_gemm_scalar(hin, h, b, p, blk, out, ldt);
      }
    };
    for (int64_t t = 0; t < t_len; ++t) {
      const bool rev = (t & 1) != 0;
      for (int64_t bi = 0; bi < b; ++bi) {
        if (t >= len_of(bi)) std::memcpy(hn + bi * h, hp + bi * h, size_t(h) * sizeof(float));
      }
      const PackedRnnR& p = w_.rb;
      if (pipelined) {
        if (t < len_of(0)) {
          const float* gt = g + row(t, 0, t_len, b) * gh;  // batch 1
          if (lstm_) pipelined_step(p, hp, rev, tmp, ldt, LstmEpi{gt, nullptr, peep, h, nullptr, cs, hn});
          else pipelined_step(p, hp, rev, tmp, ldt, GruLbrEpi{gt, nullptr, rbh, h, nullptr, hp, hn});
        }
      } else {
        pack_gemm(hp, p, rev);
        for (int64_t bi = 0; bi < b; ++bi) {
          if (t >= len_of(bi)) continue;
          for (const RnnBlock& blk : p.blocks) {
            const float* gr = g + row(t, bi, t_len, b) * gh;
            const float* acc = tmp + bi * ldt + col_of(p, blk);
            if (lstm_) {
              if (avx2) lstm_units_avx2(gr, acc, peep, h, blk, 0, blk.units, cs + bi * h, hn + bi * h);
              else lstm_units_scalar(gr, acc, peep, h, blk, 0, blk.units, cs + bi * h, hn + bi * h);
            } else if (lbr_) {
              if (avx2) gru_lbr_units_avx2(gr, acc, rbh, h, blk, 0, blk.units, hp + bi * h, hn + bi * h);
              else gru_lbr_units_scalar(gr, acc, rbh, h, blk, 0, blk.units, hp + bi * h, hn + bi * h);
            } else {
              if (avx2) gru_zr_units_avx2(gr, acc, h, blk, hp + bi * h, zb + bi * h, rh + bi * h);
              else gru_zr_units_scalar(gr, acc, h, blk, 0, hp + bi * h, zb + bi * h, rh + bi * h);
            }
          }
        }
      }
      if (!lstm_ && !lbr_) {
        const PackedRnnR& pn = w_.rb_n;
        pack_gemm(rh, pn, rev);
        for (int64_t bi = 0; bi < b; ++bi) {
          if (t >= len_of(bi)) continue;
          const float* gr = g + row(t, bi, t_len, b) * gh;
          for (const RnnBlock& blk : pn.blocks) {
            const float* acc = tmp + bi * ldt + col_of(pn, blk);
            if (avx2) gru_n_units_avx2(gr, acc, h, blk, zb + bi * h, hp + bi * h, hn + bi * h);
            else gru_n_units_scalar(gr, acc, h, blk, 0, zb + bi * h, hp + bi * h, hn + bi * h);
          }
        }
      }
      std::swap(hp, hn);
      if (y) write_y_step(y, t, t_len, b, hp, len_of);
    }
    write_states(a, b, hp, cs);
    return Status::ok();
  }

  // Row of step t, batch row bi in X, the input projections and Y: ONNX layout 0 is [seq, batch,
  // ...], layout 1 [batch, seq, ...]. The input projection GEMM runs over X's rows in X's order.
  int64_t row(int64_t t, int64_t bi, int64_t t_len, int64_t b) const {
    return batch_major_ ? bi * t_len + t : t * b + bi;
  }

  // Y at step t: h of every batch row still inside its sequence, zeros past its end.
  template <typename LenOf>
  void write_y_step(RtTensor* y, int64_t t, int64_t t_len, int64_t b, const float* hs, const LenOf& len_of) const {
    const int64_t h = w_.hidden;
    for (int64_t bi = 0; bi < b; ++bi) {
      float* yt = y->as<float>() + row(t, bi, t_len, b) * h;
      if (t < len_of(bi)) std::memcpy(yt, hs + bi * h, size_t(h) * sizeof(float));
      else std::memset(yt, 0, size_t(h) * sizeof(float));
    }
  }

  // Y_h (and LSTM Y_c): [1, batch, hidden], or [batch, 1, hidden] in layout 1 (same memory).
  void write_states(const KernelArgs& a, int64_t b, const float* hs, const float* cs) const {
    const int64_t h = w_.hidden, sd[3] = {1, b, h}, sd_bm[3] = {b, 1, h};
    const size_t bytes = size_t(b * h) * sizeof(float);
    if (a.out.size() > 1 && a.out[1]) {
      a.out[1]->ensure(DType::kF32, batch_major_ ? sd_bm : sd);
      std::memcpy(a.out[1]->data, hs, bytes);
    }
    if (lstm_ && a.out.size() > 2 && a.out[2]) {
      a.out[2]->ensure(DType::kF32, batch_major_ ? sd_bm : sd);
      std::memcpy(a.out[2]->data, cs, bytes);
    }
  }

  RnnWeights w_;
  bool lstm_, lbr_, batch_major_;
};

// W, R, B and the LSTM's peepholes: constants in exported models, runtime inputs in ONNX's
// node tests.
constexpr size_t kWeightInputs[] = {1, 2, 3, 7};

bool has_runtime_weights(const Graph& g, const Node& n) {
  for (size_t i : kWeightInputs) {
    if (i < n.inputs.size() && n.inputs[i] != kNoValue && !is_const(g, n.inputs[i])) return true;
  }
  return false;
}

}  // namespace

Status check_rnn(const Graph& g, const Node& n, bool lstm) {
  std::string dir = n.attr_s("direction", "forward");
  if (dir != "forward") return unsupported(n, "direction=" + dir + " is not supported by the cpu backend (forward only)");
  if (n.has_attr("clip")) return unsupported(n, "clip is not supported by the cpu backend");
  if (lstm && n.attr_i("input_forget", 0) != 0) return unsupported(n, "input_forget=1 is not supported by the cpu backend");
  if (n.has_attr("activations")) {
    auto it = n.attrs.find("activations");
    auto* v = std::get_if<std::string>(&it->second);
    std::string want = lstm ? "Sigmoid,Tanh,Tanh" : "Sigmoid,Tanh";
    if (!v || *v != want) return unsupported(n, "non-default activations are not supported by the cpu backend");
  }
  if (n.inputs.size() < 3) return unsupported(n, "needs X, W and R");
  for (size_t i : kWeightInputs) {
    if (i >= n.inputs.size() || n.inputs[i] == kNoValue) continue;
    const Value& v = g.value(n.inputs[i]);
    if (v.dtype != DType::kF32) return unsupported(n, "needs f32 weights (input " + std::to_string(i) + ") on the cpu backend");
    // Runtime weights of unknown shape are checked when they arrive (RuntimeWeightsRnnKernel).
    if (!v.is_constant && (!v.rank_known || !shape_is_known(v.shape))) return Status::ok();
  }
  int64_t hs = n.attr_i("hidden_size", 0);
  auto wd = g.value(n.inputs[1]).const_dims();
  auto rd = g.value(n.inputs[2]).const_dims();
  int64_t ng = lstm ? 4 : 3;
  if (wd.size() != 3 || rd.size() != 3 || wd[0] != 1 || rd[0] != 1 || wd[1] != ng * hs || rd[1] != ng * hs || rd[2] != hs || hs <= 0) {
    return unsupported(n, "has weight shapes inconsistent with hidden_size " + std::to_string(hs));
  }
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue && shape_numel(g.value(n.inputs[3]).const_dims()) != 2 * ng * hs) {
    return unsupported(n, "has a bias of the wrong size");
  }
  if (lstm && n.inputs.size() > 7 && n.inputs[7] != kNoValue && shape_numel(g.value(n.inputs[7]).const_dims()) != 3 * hs) {
    return unsupported(n, "has peepholes of the wrong size");
  }
  return Status::ok();
}

namespace {

// A GRU/LSTM whose weights are runtime inputs: on every run the weights that arrived become
// constants of a one-node graph, are checked as the builder checks constant ones, and packed
// into the kernel of `tactic`, which then runs.
// PERF NOTE: packing costs about one pass over the weights per run, the order of one batch-1
// step; exported models carry their weights as initializers and never take this path.
class RuntimeWeightsRnnKernel final : public Kernel {
 public:
  RuntimeWeightsRnnKernel(const Graph& g, const Node& n, std::string tactic, bool bf16)
      : node_(n), tactic_(std::move(tactic)), bf16_(bf16) {
    for (ValueId v : n.inputs) values_.push_back(v == kNoValue ? Value{} : g.value(v));
  }

  Status run(const KernelArgs& a) const override {
    Graph g;
    Node n = node_;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == kNoValue) continue;
      Value v = values_[i];
      const RtTensor* t = a.input(i);
      const bool weight = std::find(std::begin(kWeightInputs), std::end(kWeightInputs), i) != std::end(kWeightInputs);
      if (weight && t) {
        if (t->dtype != DType::kF32) return bad_input("weight input " + std::to_string(i) + " must be f32");
        v.is_constant = true;
        v.rank_known = true;
        v.shape = shape_of(t->dims);
        v.data.assign(t->data, t->data + t->bytes());
      }
      n.inputs[i] = g.add_value(std::move(v));
    }
    for (ValueId& o : n.outputs) {
      if (o != kNoValue) o = g.add_value(Value{});
    }
    TS_RETURN_IF_ERROR(check_rnn(g, n, n.op == "LSTM"));
    auto k = make_rnn_kernel(g, n, tactic_, bf16_);
    if (!k) return k.status();
    auto state = k.value()->make_state();
    KernelArgs inner = a;
    inner.state = state.get();
    return k.value()->run(inner);
  }

 private:
  Node node_;
  std::vector<Value> values_;  // metadata of the node's inputs (weights' data arrive at run time)
  std::string tactic_;
  bool bf16_;
};

}  // namespace

Result<KernelPtr> make_rnn_kernel(const Graph& g, const Node& n, const std::string& tactic, bool bf16_weights) {
  if (has_runtime_weights(g, n)) return KernelPtr(new RuntimeWeightsRnnKernel(g, n, tactic, bf16_weights));
  if (tactic == kOnednnTactic) return make_rnn_onednn(g, n);
  const bool lstm = n.op == "LSTM";
  RnnWeights w;
  int64_t h = n.attr_i("hidden_size", 0), ng = lstm ? 4 : 3;
  bool lbr = !lstm && n.attr_i("linear_before_reset", 0) != 0;
  const Value& wv = g.value(n.inputs[1]);
  const Value& rv = g.value(n.inputs[2]);
  w.hidden = h;
  w.input = wv.const_dims()[2];
  w.gates = ng;
  const std::vector<float> bias = rnn_bias(g, n, ng, h);
  const std::vector<float> in_bias = rnn_input_bias(bias, ng, h, lbr);
  w.wx = pack_b(wv.as<float>(), w.input, ng * h, true, in_bias.data());
  const float* r = rv.as<float>();
  w.blocked = tactic.empty() || tactic == kBlockedTactic;
  const bool bf16 = bf16_weights && w.blocked;
  if (w.blocked && !lstm && !lbr) {
    w.rb = pack_rnn_r(r, 2, h, -1, bf16);
    w.rb_n = pack_rnn_r(r + 2 * h * h, 1, h, -1, bf16);
  } else if (w.blocked) {
    w.rb = pack_rnn_r(r, ng, h, -1, bf16);
  } else if (!lstm && !lbr) {
    w.rh = pack_b(r, h, 2 * h, true);
    w.rh_h = pack_b(r + 2 * h * h, h, h, true);
  } else {
    w.rh = pack_b(r, h, ng * h, true);
  }
  if (lbr) w.rbh.assign(bias.begin() + 5 * h, bias.begin() + 6 * h);
  if (lstm && n.inputs.size() > 7 && n.inputs[7] != kNoValue) {
    const float* p = g.value(n.inputs[7]).as<float>();
    w.peep.assign(p, p + 3 * h);
  }
  return KernelPtr(new RnnKernel(std::move(w), lstm, lbr, n.attr_i("layout", 0) == 1));
}

bool rnn_kernel_is_bf16(const Kernel& k) {
  auto* r = dynamic_cast<const RnnKernel*>(&k);
  return (r && r->bf16()) || rnn_stack_kernel_is_bf16(k);
}

void add_rnn_ops(std::vector<OpInfo>& ops) {
  // Own tactics always; oneDNN's where it can run the node (no sequence_lens).
  auto tactics_for = [](const Graph& g, const Node& n) {
    std::vector<std::string> t = {kBlockedTactic, kPanelTactic};
    if (has_runtime_weights(g, n)) return t;  // oneDNN's primitive is made with its weights
    if (onednn_rnn_supports(n)) t.push_back(kOnednnTactic);
    return t;
  };
  auto make = [](const Graph& g, const Node& n, const std::string& t) { return make_rnn_kernel(g, n, t, false); };
  ops.push_back({"GRU", [](const Graph& g, const Node& n) { return check_rnn(g, n, false); },
                 {kBlockedTactic, kPanelTactic, kOnednnTactic}, make, tactics_for});
  ops.push_back({"LSTM", [](const Graph& g, const Node& n) { return check_rnn(g, n, true); },
                 {kBlockedTactic, kPanelTactic, kOnednnTactic}, make, tactics_for});
  add_rnn_stack_ops(ops);
}

}  // namespace ts::engine::cpu
