// Normalization and reduction kernels: Softmax (along an axis), LayerNormalization (over the
// trailing axes from `axis`, with the optional Mean and InvStdDev outputs), ReduceMean (axes
// from attribute or input; keepdims).
#include <cmath>
#include <cstring>

#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_layers.h"
#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {
namespace {

Status run_softmax(int64_t axis_attr, bool flatten_tail, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x || x->dtype != DType::kF32) return bad_input("needs an f32 input");
  int rank = int(x->dims.size());
  if (rank == 0) return bad_input("Softmax of a scalar");
  auto ax = norm_axis(axis_attr, rank);
  if (!ax) return ax.status();
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < rank; ++i) {
    if (i < ax.value()) outer *= x->dims[size_t(i)];
    else if (i == ax.value() || flatten_tail) len *= x->dims[size_t(i)];
    else inner *= x->dims[size_t(i)];
  }
  RtTensor& o = *a.out[0];
  o.ensure(DType::kF32, x->dims);
  // An empty tensor has no data: offsets into it are undefined behaviour (onnx_fuzz, UBSan).
  if (outer * len * inner == 0) return Status::ok();
  const float* p = x->as<float>();
  float* q = o.as<float>();
  for (int64_t ou = 0; ou < outer; ++ou) {
    for (int64_t in = 0; in < inner; ++in) {
      const float* src = p + ou * len * inner + in;
      float* dst = q + ou * len * inner + in;
      float mx = -INFINITY;
      for (int64_t i = 0; i < len; ++i) mx = std::max(mx, src[i * inner]);
      if (inner == 1) {
        for (int64_t i = 0; i < len; ++i) dst[i] = src[i] - mx;
        exp_f32(dst, dst, len);
      } else {
        for (int64_t i = 0; i < len; ++i) dst[i * inner] = std::exp(src[i * inner] - mx);
      }
      double sum = 0.0;
      for (int64_t i = 0; i < len; ++i) sum += dst[i * inner];
      float inv = float(1.0 / sum);
      for (int64_t i = 0; i < len; ++i) dst[i * inner] *= inv;
    }
  }
  return Status::ok();
}

TS_AVX2 float hsum8(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
  return _mm_cvtss_f32(x);
}

// One LayerNorm row of len (a multiple of 8) floats; s and b are per-element or null.
// PERF NOTE: the scalar loops did not vectorize (float sums are not reassociated without
// -ffast-math); on the transformer-2x64 fixture's 4 LayerNorms over rows of 64 this path is
// several times faster.
TS_AVX2 void layer_norm_row_avx2(const float* src, float* dst, int64_t len, const float* s, const float* b,
                                 float eps, float* mean_out, float* inv_out) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < len; i += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(src + i));
  const float mean = hsum8(acc) / float(len);
  const __m256 vm = _mm256_set1_ps(mean);
  acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < len; i += 8) {
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(src + i), vm);
    acc = _mm256_fmadd_ps(d, d, acc);
  }
  const float inv = 1.0f / std::sqrt(hsum8(acc) / float(len) + eps);
  const __m256 vi = _mm256_set1_ps(inv);
  for (int64_t i = 0; i < len; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(src + i), vm), vi);
    if (s) v = _mm256_mul_ps(v, _mm256_loadu_ps(s + i));
    if (b) v = _mm256_add_ps(v, _mm256_loadu_ps(b + i));
    _mm256_storeu_ps(dst + i, v);
  }
  *mean_out = mean;
  *inv_out = inv;
}

Status run_layer_norm(int64_t axis_attr, float eps, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* scale = a.input(1);
  const RtTensor* bias = a.input(2);
  if (!x || x->dtype != DType::kF32) return bad_input("needs an f32 input");
  int rank = int(x->dims.size());
  if (rank == 0) return bad_input("LayerNormalization of a scalar");
  if (!rank_ok(*x)) return bad_input("rank above 8");
  auto ax = norm_axis(axis_attr, rank);
  if (!ax) return ax.status();
  int64_t outer = 1, len = 1;
  for (int i = 0; i < rank; ++i) (i < ax.value() ? outer : len) *= x->dims[size_t(i)];
  if (scale && (scale->dtype != DType::kF32 || (scale->numel() != len && scale->numel() != 1))) {
    return bad_input("scale shape " + dims_str(scale->dims) + " does not match the normalized size " + std::to_string(len));
  }
  if (bias && (bias->dtype != DType::kF32 || (bias->numel() != len && bias->numel() != 1))) {
    return bad_input("bias shape " + dims_str(bias->dims) + " does not match the normalized size " + std::to_string(len));
  }
  RtTensor& o = *a.out[0];
  o.ensure(DType::kF32, x->dims);
  // Mean and InvStdDev (optional outputs 1, 2): x's dims with the normalized axes set to 1.
  float* mean_out = nullptr;
  float* inv_out = nullptr;
  if (a.out.size() > 1 && (a.out[1] || (a.out.size() > 2 && a.out[2]))) {
    Dims sd = dims_of(*x);
    for (int i = ax.value(); i < rank; ++i) sd[i] = 1;
    if (a.out[1]) {
      a.out[1]->ensure(DType::kF32, sd.span());
      mean_out = a.out[1]->as<float>();
    }
    if (a.out.size() > 2 && a.out[2]) {
      a.out[2]->ensure(DType::kF32, sd.span());
      inv_out = a.out[2]->as<float>();
    }
  }
  const float* p = x->as<float>();
  float* q = o.as<float>();
  const float* s = scale ? scale->as<float>() : nullptr;
  const float* b = bias ? bias->as<float>() : nullptr;
  bool s1 = scale && scale->numel() == 1, b1 = bias && bias->numel() == 1;
  const bool vec = len % 8 == 0 && !s1 && !b1 && cpu_has_avx2_fma();
  for (int64_t r = 0; r < outer; ++r) {
    const float* src = p + r * len;
    float* dst = q + r * len;
    if (vec) {
      float mean, inv;
      layer_norm_row_avx2(src, dst, len, s, b, eps, &mean, &inv);
      if (mean_out) mean_out[r] = mean;
      if (inv_out) inv_out[r] = inv;
      continue;
    }
    float mean = 0.0f;
    for (int64_t i = 0; i < len; ++i) mean += src[i];
    mean /= float(len);
    float var = 0.0f;
    for (int64_t i = 0; i < len; ++i) var += (src[i] - mean) * (src[i] - mean);
    var /= float(len);
    float inv = 1.0f / std::sqrt(var + eps);
    if (mean_out) mean_out[r] = mean;
    if (inv_out) inv_out[r] = inv;
    for (int64_t i = 0; i < len; ++i) {
      float v = (src[i] - mean) * inv;
      if (s) v *= s1 ? s[0] : s[i];
      if (b) v += b1 ? b[0] : b[i];
      dst[i] = v;
    }
  }
  return Status::ok();
}

Status run_reduce_mean(const std::vector<int64_t>& attr_axes, bool keepdims, bool noop_empty,
                       const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x || x->dtype != DType::kF32) return bad_input("needs an f32 input");
  if (!rank_ok(*x)) return bad_input("rank above 8");
  int rank = int(x->dims.size());
  std::array<bool, kMaxRank> red{};
  Dims axes = Dims::of(attr_axes);
  if (const RtTensor* at = a.input(1)) {
    if (!read_ints(*at, &axes)) return bad_input("axes must be an int64 tensor of ≤ 8 values");
  }
  if (axes.n == 0) {
    if (noop_empty) return run_noop(a);
    for (int i = 0; i < rank; ++i) red[size_t(i)] = true;
  }
  for (int i = 0; i < axes.n; ++i) {
    auto ax = norm_axis(axes[i], rank);
    if (!ax) return ax.status();
    red[size_t(ax.value())] = true;
  }
  Dims od, kd;  // output dims, dims with reduced axes kept as 1
  for (int i = 0; i < rank; ++i) {
    int64_t d = red[size_t(i)] ? 1 : x->dims[size_t(i)];
    kd.push(d);
    if (!red[size_t(i)] || keepdims) od.push(d);
  }
  RtTensor& o = *a.out[0];
  o.ensure(DType::kF32, od.span());
  float* q = o.as<float>();
  int64_t on = kd.numel();
  for (int64_t i = 0; i < on; ++i) q[i] = 0.0f;
  Dims xd = dims_of(*x);
  Dims st = broadcast_strides(kd, xd);
  // Walk x once, accumulating into the reduced position.
  std::array<int64_t, kMaxRank> idx{};
  int64_t n = x->numel(), off = 0;
  const float* p = x->as<float>();
  for (int64_t i = 0; i < n; ++i) {
    q[off] += p[i];
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[size_t(d)];
      off += st[d];
      if (idx[size_t(d)] < xd[d]) break;
      off -= st[d] * xd[d];
      idx[size_t(d)] = 0;
    }
  }
  float inv = n ? float(on) / float(n) : 0.0f;
  for (int64_t i = 0; i < on; ++i) q[i] *= inv;
  return Status::ok();
}

}  // namespace

Status run_noop(const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, x->dims);
  if (x->bytes()) std::memcpy(o.data, x->data, x->bytes());
  return Status::ok();
}

void layer_norm_rows(const float* src, float* dst, int64_t rows, int64_t len, const float* s, const float* b, float eps) {
  const bool vec = len % 8 == 0 && cpu_has_avx2_fma();
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = src + r * len;
    float* y = dst + r * len;
    float mean = 0.0f, inv = 0.0f;
    if (vec) {
      layer_norm_row_avx2(x, y, len, s, b, eps, &mean, &inv);
      continue;
    }
    for (int64_t i = 0; i < len; ++i) mean += x[i];
    mean /= float(len);
    float var = 0.0f;
    for (int64_t i = 0; i < len; ++i) var += (x[i] - mean) * (x[i] - mean);
    inv = 1.0f / std::sqrt(var / float(len) + eps);
    for (int64_t i = 0; i < len; ++i) y[i] = (x[i] - mean) * inv * (s ? s[i] : 1.0f) + (b ? b[i] : 0.0f);
  }
}

void add_norm_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"Softmax", nullptr, {"ref"}, [](const Graph& g, const Node& n, const std::string&) {
                   bool old = g.opset > 0 && g.opset < 13;
                   int64_t axis = n.attr_i("axis", old ? 1 : -1);
                   return make_fn_kernel([axis, old](const KernelArgs& a) { return run_softmax(axis, old, a); });
                 }});
  ops.push_back({"LayerNormalization",
                 [](const Graph&, const Node& n) {
                   // Mean/InvStdDev are computed in f32 (stash_type 1, the default) only.
                   int64_t stash = n.attr_i("stash_type", 1);
                   if (stash != 1) {
                     return unsupported(n, "stash_type=" + std::to_string(stash) +
                                               " is not supported by the cpu backend (1 = float only)");
                   }
                   if (n.outputs.size() > 3) return unsupported(n, "has more than 3 outputs");
                   return Status::ok();
                 },
                 {"ref"},
                 [](const Graph&, const Node& n, const std::string&) {
                   int64_t axis = n.attr_i("axis", -1);
                   float eps = n.attr_f("epsilon", 1e-5f);
                   return make_fn_kernel([axis, eps](const KernelArgs& a) { return run_layer_norm(axis, eps, a); });
                 }});
  ops.push_back({"ReduceMean", nullptr, {"ref"}, [](const Graph&, const Node& n, const std::string&) {
                   auto axes = n.attr_ints("axes");
                   bool keep = n.attr_i("keepdims", 1) != 0, noop = n.attr_i("noop_with_empty_axes", 0) != 0;
                   return make_fn_kernel([axes, keep, noop](const KernelArgs& a) { return run_reduce_mean(axes, keep, noop, a); });
                 }});
}

}  // namespace ts::engine::cpu
