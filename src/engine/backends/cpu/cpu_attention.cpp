// FusedAttention(q, k|kT, v): y = softmax(scale · q·kᵀ) · v over the last two axes, leading
// (batch, head) axes equal across q, k, v. attrs: scale (default 1), k_transposed (1: input 1
// is kᵀ [..., d, Tk]; 0: k [..., Tk, d]). One score row at a time in scratch (Tk floats).
#include <cmath>
#include <cstring>

#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {
namespace {

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

void add_attention_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"FusedAttention", nullptr, {"ref"}, [](const Graph&, const Node& n, const std::string&) {
                   float scale = n.attr_f("scale", 1.0f);
                   bool kt = n.attr_i("k_transposed", 1) != 0;
                   return make_fn_kernel([scale, kt](const KernelArgs& a) { return run_attention(scale, kt, a); });
                 }});
}

}  // namespace ts::engine::cpu
