// LayerNormalization, FusedAttention and Conv (1-D) nodes on the device: the layers the
// Transformer and TCN models need beyond GEMMs and elementwise ops. All three compute in FP32
// at every precision (FP16 plans keep FP16 for the GEMM weights and recurrences, where the
// bandwidth is); their weights (LayerNorm scale/bias, Conv W/B) are read from the constants
// the executor uploads.
#include <algorithm>

#include "engine/backends/cuda/cuda_encoder.h"
#include "engine/backends/cuda/cuda_layers.h"
#include "engine/backends/cuda/cuda_ops.h"

namespace ts::engine::cuda {
namespace {

Status need_f32(const DevTensor* t, const char* what) {
  TS_RETURN_IF_ERROR(need_device(t, what));
  if (t->dtype != DType::kF32) return bad_input(std::string(what) + " must be f32, got " + dtype_name(t->dtype));
  return Status::ok();
}

Status run_layer_norm(int64_t axis, float eps, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  TS_RETURN_IF_ERROR(need_f32(x, "the input"));
  const int r = int(x->dims.size());
  const int64_t ax = axis < 0 ? axis + r : axis;
  if (r == 0 || ax < 0 || ax >= r) return bad_input("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  int64_t rows = 1, len = 1;
  for (int i = 0; i < r; ++i) (i < ax ? rows : len) *= x->dims[size_t(i)];
  const float* p[2] = {nullptr, nullptr};
  int step[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const DevTensor* t = a.input(size_t(k) + 1);
    if (!t) continue;
    TS_RETURN_IF_ERROR(need_f32(t, k ? "the bias" : "the scale"));
    if (t->numel() != len && t->numel() != 1) {
      return bad_input(std::string(k ? "bias" : "scale") + " shape " + dims_str(t->dims) +
                       " does not match the normalized size " + std::to_string(len));
    }
    p[k] = t->as<float>();
    step[k] = t->numel() == 1 ? 0 : 1;
  }
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, DType::kF32, x->dims));
  float* stats[2] = {nullptr, nullptr};  // Mean, InvStdDev: x's dims with the normalized axes 1
  std::vector<int64_t> sd = x->dims;
  for (int i = int(ax); i < r; ++i) sd[size_t(i)] = 1;
  for (size_t k = 0; k < 2; ++k) {
    if (a.out.size() > k + 1 && a.out[k + 1]) {
      TS_RETURN_IF_ERROR(a.env->alloc(*a.out[k + 1], DType::kF32, sd));
      stats[k] = a.out[k + 1]->as<float>();
    }
  }
  return launch_layer_norm(x->as<float>(), o.as<float>(), rows, len, p[0], step[0], p[1], step[1], eps, stats[0],
                           stats[1], a.stream);
}

Status run_attention(float scale, bool k_transposed, const CudaArgs& a) {
  const DevTensor* q = a.input(0);
  const DevTensor* k = a.input(1);
  const DevTensor* v = a.input(2);
  TS_RETURN_IF_ERROR(need_f32(q, "q"));
  TS_RETURN_IF_ERROR(need_f32(k, "k"));
  TS_RETURN_IF_ERROR(need_f32(v, "v"));
  const size_t r = q->dims.size();
  if (r < 2 || k->dims.size() != r || v->dims.size() != r) return bad_input("q, k, v must have the same rank ≥ 2");
  const int64_t tq = q->dims[r - 2], d = q->dims[r - 1];
  const int64_t tk = k_transposed ? k->dims[r - 1] : k->dims[r - 2];
  const int64_t kd = k_transposed ? k->dims[r - 2] : k->dims[r - 1];
  const int64_t tv = v->dims[r - 2], dv = v->dims[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (k->dims[i] != q->dims[i] || v->dims[i] != q->dims[i]) return bad_input("q, k, v leading dims differ");
    batch *= q->dims[i];
  }
  if (kd != d || tv != tk) {
    return bad_input("shapes q " + dims_str(q->dims) + " k " + dims_str(k->dims) + " v " + dims_str(v->dims) + " do not match");
  }
  std::vector<int64_t> od = q->dims;
  od[r - 1] = dv;
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, DType::kF32, od));
  return launch_attention(q->as<float>(), k->as<float>(), v->as<float>(), o.as<float>(), batch, tq, tk, d, dv, scale,
                          k_transposed, a.stream);
}

struct ConvAttrs {
  std::string auto_pad;
  int64_t kernel = 0, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, group = 1;
};

Status check_conv(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !is_const(g, n.inputs[1])) return unsupported(n, "with weights computed at run time is not supported by the cuda backend");
  const Value& w = g.value(n.inputs[1]);
  if (w.const_dims().size() != 3) {
    return unsupported(n, "with " + std::to_string(int(w.const_dims().size()) - 2) +
                              " spatial dims is not supported by the cuda backend (1-D only)");
  }
  if (w.dtype != DType::kF32) return unsupported(n, "with non-f32 weights is not supported by the cuda backend");
  std::string ap = n.attr_s("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER") return unsupported(n, "auto_pad=" + ap + " is not valid");
  auto pads = n.attr_ints("pads");
  auto st = n.attr_ints("strides"), dl = n.attr_ints("dilations");
  if ((!pads.empty() && pads.size() != 2) || st.size() > 1 || dl.size() > 1) return unsupported(n, "has attributes for more than one spatial dim");
  if ((!st.empty() && st[0] < 1) || (!dl.empty() && dl[0] < 1) || n.attr_i("group", 1) < 1) return unsupported(n, "has non-positive strides, dilations or group");
  for (int64_t p : pads) if (p < 0) return unsupported(n, "has negative pads");
  return Status::ok();
}

Status run_conv(const ConvAttrs& at, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  const DevTensor* w = a.input(1);
  const DevTensor* b = a.input(2);
  TS_RETURN_IF_ERROR(need_f32(x, "X"));
  TS_RETURN_IF_ERROR(need_f32(w, "W"));
  if (b) TS_RETURN_IF_ERROR(need_f32(b, "B"));
  if (x->dims.size() != 3) return bad_input("X must be [n, c, len], got " + dims_str(x->dims));
  Conv1dGeom g;
  g.n = x->dims[0];
  g.c = x->dims[1];
  g.len_in = x->dims[2];
  g.m = w->dims[0];
  g.kw = w->dims[2];
  g.group = at.group;
  g.stride = at.stride;
  g.dilation = at.dilation;
  if (g.c != w->dims[1] * g.group || g.m % g.group != 0) {
    return bad_input("X " + dims_str(x->dims) + " and W " + dims_str(w->dims) + " do not match with group " + std::to_string(g.group));
  }
  if (b && b->numel() != g.m) return bad_input("B has " + std::to_string(b->numel()) + " values for " + std::to_string(g.m) + " channels");
  if (at.kernel && at.kernel != g.kw) return bad_input("kernel_shape does not match W");
  const int64_t span = g.dilation * (g.kw - 1) + 1;
  int64_t pad_total = at.pad_begin + at.pad_end;
  g.pad_begin = at.pad_begin;
  if (at.auto_pad == "VALID") {
    pad_total = g.pad_begin = 0;
  } else if (at.auto_pad == "SAME_UPPER" || at.auto_pad == "SAME_LOWER") {
    const int64_t out = (g.len_in + g.stride - 1) / g.stride;
    pad_total = std::max<int64_t>(0, (out - 1) * g.stride + span - g.len_in);
    g.pad_begin = at.auto_pad == "SAME_UPPER" ? pad_total / 2 : pad_total - pad_total / 2;
  }
  const int64_t padded = g.len_in + pad_total;
  if (padded < span) return bad_input("input length " + std::to_string(g.len_in) + " is shorter than the kernel span " + std::to_string(span));
  g.len_out = (padded - span) / g.stride + 1;
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, DType::kF32, std::vector<int64_t>{g.n, g.m, g.len_out}));
  return launch_conv1d(x->as<float>(), w->as<float>(), b ? b->as<float>() : nullptr, o.as<float>(), g, a.stream);
}

}  // namespace

void add_layer_ops(std::vector<CudaOpInfo>& ops) {
  add_encoder_ops(ops);
  ops.push_back({"LayerNormalization",
                 [](const Graph&, const Node& n) {
                   int64_t stash = n.attr_i("stash_type", 1);
                   if (stash != 1) return unsupported(n, "stash_type=" + std::to_string(stash) + " is not supported by the cuda backend (1 = float only)");
                   if (n.outputs.size() > 3) return unsupported(n, "has more than 3 outputs");
                   return Status::ok();
                 },
                 [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   int64_t axis = n.attr_i("axis", -1);
                   float eps = n.attr_f("epsilon", 1e-5f);
                   return make_fn_kernel([axis, eps](const CudaArgs& a) { return run_layer_norm(axis, eps, a); });
                 }});
  ops.push_back({"FusedAttention", nullptr, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   float scale = n.attr_f("scale", 1.0f);
                   bool kt = n.attr_i("k_transposed", 1) != 0;
                   return make_fn_kernel([scale, kt](const CudaArgs& a) { return run_attention(scale, kt, a); });
                 }});
  ops.push_back({"Conv", check_conv, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   ConvAttrs at;
                   at.auto_pad = n.attr_s("auto_pad", "NOTSET");
                   auto ks = n.attr_ints("kernel_shape"), st = n.attr_ints("strides"), dl = n.attr_ints("dilations"),
                        pads = n.attr_ints("pads");
                   if (!ks.empty()) at.kernel = ks[0];
                   if (!st.empty()) at.stride = st[0];
                   if (!dl.empty()) at.dilation = dl[0];
                   if (pads.size() == 2) {
                     at.pad_begin = pads[0];
                     at.pad_end = pads[1];
                   }
                   at.group = n.attr_i("group", 1);
                   return make_fn_kernel([at](const CudaArgs& a) { return run_conv(at, a); });
                 }});
}

}  // namespace ts::engine::cuda
