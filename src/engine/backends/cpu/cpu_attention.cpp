// FusedAttention(q, k|kT, v): y = softmax(scale · q·kᵀ) · v over the last two axes, leading
// (batch, head) axes equal across q, k, v. attrs: scale (default 1), k_transposed (1: input 1
// is kᵀ [..., d, Tk]; 0: k [..., Tk, d]). One score row at a time in scratch (Tk floats).
//
// PERF NOTE: the AVX2 path packs Kᵀ once per (batch, head) into [d][Tk rounded up to 8] so that
// the scores of 4 query rows are accumulated 8 keys at a time with FMAs (each Kᵀ vector loaded
// once for 4 rows), runs the softmax on 8-wide vectors and accumulates p·V for the same 4 rows
// 8 output columns at a time (each V vector loaded once for 4 rows), normalizing at the end.
// The scalar path before it read Kᵀ with a stride of Tk in its innermost loop; on the
// transformer-2x64 fixture (T=60, d=16 per head) this kernel was the largest cost of the model.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_layers.h"
#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {
namespace {

// Scores of R query rows (already scaled) against packed Kᵀ kt [d][tk8] into s [R][tk8], keys
// [0, cols) only (cols a multiple of 8, ≤ tk8).
template <int R>
TS_AVX2 void scores_avx2(const float* q, int64_t d, const float* kt, int64_t tk8, float scale, float* s, int64_t cols) {
  const __m256 vs = _mm256_set1_ps(scale);
  for (int64_t jb = 0; jb < cols; jb += 8) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t c = 0; c < d; ++c) {
      __m256 kv = _mm256_loadu_ps(kt + c * tk8 + jb);
      for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(q[r * d + c]), kv, acc[r]);
    }
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(s + r * tk8 + jb, _mm256_mul_ps(acc[r], vs));
  }
}

// Row softmax numerator in place over tk valid entries (pad entries become 0); returns 1/sum.
TS_AVX2 float softmax_row_avx2(float* s, int64_t tk, int64_t tk8) {
  for (int64_t j = tk; j < tk8; ++j) s[j] = -INFINITY;
  __m256 mx = _mm256_set1_ps(-INFINITY);
  for (int64_t j = 0; j < tk8; j += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(s + j));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  const __m256 vmax = _mm256_set1_ps(_mm_cvtss_f32(m4));
  __m256 sum = _mm256_setzero_ps();
  for (int64_t j = 0; j < tk8; j += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vmax));
    _mm256_storeu_ps(s + j, e);
    if (j + 8 <= tk) sum = _mm256_add_ps(sum, e);
  }
  for (int64_t j = tk; j < tk8; ++j) s[j] = 0.0f;
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  double total = 0.0;
  for (float l : lanes) total += l;
  for (int64_t j = tk & ~int64_t(7); j < tk; ++j) total += s[j];
  return float(1.0 / total);
}

// o[R][dv] = inv[r] · Σ_j p[r][j] · v[j][:], p [R][tk8].
template <int R>
TS_AVX2 void weighted_sum_avx2(const float* p, int64_t tk8, const float* v, int64_t tk, int64_t dv,
                               const float* inv, float* o) {
  int64_t cb = 0;
  for (; cb + 8 <= dv; cb += 8) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t j = 0; j < tk; ++j) {
      __m256 vv = _mm256_loadu_ps(v + j * dv + cb);
      for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(p[r * tk8 + j]), vv, acc[r]);
    }
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(o + r * dv + cb, _mm256_mul_ps(acc[r], _mm256_set1_ps(inv[r])));
  }
  for (; cb < dv; ++cb) {
    for (int r = 0; r < R; ++r) {
      float acc = 0.0f;
      for (int64_t j = 0; j < tk; ++j) acc += p[r * tk8 + j] * v[j * dv + cb];
      o[r * dv + cb] = acc * inv[r];
    }
  }
}

// causal_q: the position of query row 0 among the keys (row r sees keys 0..causal_q + r), or -1:
// every key.
template <int R>
TS_AVX2 void attention_rows_avx2(const float* q, int64_t d, const float* kt, int64_t tk, int64_t tk8,
                                 const float* v, int64_t dv, float scale, float* s, float* o, int64_t causal_q = -1) {
  float inv[R];
  // Causal rows: keys past the last row's own position are neither scored nor weighed (PERF NOTE:
  // sweep case 06 at batch 16, min P50 682 against 713 µs on one plan file, 3 alternating runs,
  // bench/results/archive/cpu-causal-scores-cpu2-20261203-0709-cpx8.txt).
  const int64_t used = causal_q < 0 ? tk : std::min(tk, causal_q + R);  // keys any of the R rows weighs
  const int64_t used8 = round_up8(used);
  scores_avx2<R>(q, d, kt, tk8, scale, s, used8);
  for (int r = 0; r < R; ++r) {
    const int64_t valid = causal_q < 0 ? tk : std::min(tk, causal_q + r + 1);
    inv[r] = softmax_row_avx2(s + r * tk8, valid, used8);
  }
  weighted_sum_avx2<R>(s, tk8, v, used, dv, inv, o);
}

// One (batch, head): kt scratch [d][tk8], s scratch [4][tk8].
TS_AVX2 void attention_avx2(const float* qb, const float* kb, const float* vb, float* ob, int64_t tq,
                            int64_t tk, int64_t d, int64_t dv, float scale, bool k_transposed, float* kt,
                            float* s, int64_t causal_q0 = -1) {
  const int64_t tk8 = round_up8(tk);
  for (int64_t c = 0; c < d; ++c) {
    float* row = kt + c * tk8;
    if (k_transposed) {
      std::memcpy(row, kb + c * tk, size_t(tk) * sizeof(float));
    } else {
      for (int64_t j = 0; j < tk; ++j) row[j] = kb[j * d + c];
    }
    for (int64_t j = tk; j < tk8; ++j) row[j] = 0.0f;
  }
  int64_t i = 0;
  const auto cq = [&](int64_t row) { return causal_q0 < 0 ? int64_t(-1) : causal_q0 + row; };
  for (; i + 4 <= tq; i += 4) attention_rows_avx2<4>(qb + i * d, d, kt, tk, tk8, vb, dv, scale, s, ob + i * dv, cq(i));
  for (; i < tq; ++i) attention_rows_avx2<1>(qb + i * d, d, kt, tk, tk8, vb, dv, scale, s, ob + i * dv, cq(i));
}

Status run_attention(float scale, bool k_transposed, const KernelArgs& a) {
  const RtTensor* q = a.input(0);
  const RtTensor* k = a.input(1);
  const RtTensor* v = a.input(2);
  if (!q || !k || !v) return bad_input("needs q, k and v");
  if (q->dtype != DType::kF32 || k->dtype != DType::kF32 || v->dtype != DType::kF32) return bad_input("f32 only");
  size_t r = q->dims.size();
  if (r < 2 || k->dims.size() != r || v->dims.size() != r || !rank_ok(*q)) return bad_input("q, k, v must have the same rank ≥ 2");
  int64_t tq = q->dims[r - 2], d = q->dims[r - 1];
  int64_t tk = k_transposed ? k->dims[r - 1] : k->dims[r - 2];
  int64_t kd = k_transposed ? k->dims[r - 2] : k->dims[r - 1];
  int64_t tv = v->dims[r - 2], dv = v->dims[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (k->dims[i] != q->dims[i] || v->dims[i] != q->dims[i]) return bad_input("q, k, v leading dims differ");
    batch *= q->dims[i];
  }
  if (kd != d || tv != tk) {
    return bad_input("shapes q " + dims_str(q->dims) + " k " + dims_str(k->dims) + " v " + dims_str(v->dims) + " do not match");
  }
  Dims od = dims_of(*q);
  od[int(r) - 1] = dv;
  RtTensor& o = *a.out[0];
  o.ensure(DType::kF32, od.span());
  if (tk > 0 && cpu_has_avx2_fma()) {
    const int64_t tk8 = round_up8(tk);
    float* kt = static_cast<float*>(a.scratch->get(size_t((d + 4) * tk8) * sizeof(float)));
    for (int64_t b = 0; b < batch; ++b) {
      attention_avx2(q->as<float>() + b * tq * d, k->as<float>() + b * tk * d, v->as<float>() + b * tk * dv,
                     o.as<float>() + b * tq * dv, tq, tk, d, dv, scale, k_transposed, kt, kt + d * tk8);
    }
    return Status::ok();
  }
  float* s = static_cast<float*>(a.scratch->get(size_t(std::max<int64_t>(tk, 1)) * sizeof(float)));
  for (int64_t b = 0; b < batch; ++b) {
    const float* qb = q->as<float>() + b * tq * d;
    const float* kb = k->as<float>() + b * tk * d;
    const float* vb = v->as<float>() + b * tk * dv;
    float* ob = o.as<float>() + b * tq * dv;
    for (int64_t i = 0; i < tq; ++i) {
      const float* qi = qb + i * d;
      float mx = -INFINITY;
      for (int64_t j = 0; j < tk; ++j) {
        float acc = 0.0f;
        if (k_transposed) {
          for (int64_t c = 0; c < d; ++c) acc += qi[c] * kb[c * tk + j];
        } else {
          const float* kj = kb + j * d;
          for (int64_t c = 0; c < d; ++c) acc += qi[c] * kj[c];
        }
        s[j] = acc * scale;
        mx = std::max(mx, s[j]);
      }
      for (int64_t j = 0; j < tk; ++j) s[j] -= mx;
      exp_f32(s, s, tk);
      double sum = 0.0;
      for (int64_t j = 0; j < tk; ++j) sum += s[j];
      float inv = float(1.0 / sum);
      float* oi = ob + i * dv;
      for (int64_t c = 0; c < dv; ++c) oi[c] = 0.0f;
      for (int64_t j = 0; j < tk; ++j) {
        float p = s[j] * inv;
        const float* vj = vb + j * dv;
        for (int64_t c = 0; c < dv; ++c) oi[c] += p * vj[c];
      }
    }
  }
  return Status::ok();
}

}  // namespace

void attention_head_avx2(const float* q, const float* k, const float* v, float* o, int64_t tq, int64_t tk, int64_t d,
                         float scale, int64_t causal_q0, float* scratch) {
  const int64_t tk8 = round_up8(tk);
  attention_avx2(q, k, v, o, tq, tk, d, d, scale, false, scratch, scratch + d * tk8, causal_q0);
}

void add_attention_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"FusedAttention", nullptr, {"ref"}, [](const Graph&, const Node& n, const std::string&) {
                   float scale = n.attr_f("scale", 1.0f);
                   bool kt = n.attr_i("k_transposed", 1) != 0;
                   return make_fn_kernel([scale, kt](const KernelArgs& a) { return run_attention(scale, kt, a); });
                 }});
}

}  // namespace ts::engine::cpu
