// Conv (1-D: X [N,C,L], W [M,C/group,K], B [M]) with pads, dilations, strides and groups, the
// temporal-CNN layer. Direct loops over valid output ranges (no per-element bounds checks), the
// innermost loop running over output positions so it vectorizes for stride 1.
#include <algorithm>

#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {
namespace {

struct ConvParams {
  int64_t stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, group = 1;
};

Status run_conv1d(const ConvParams& p, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* w = a.input(1);
  const RtTensor* b = a.input(2);
  if (!x || !w) return bad_input("needs X and W");
  if (x->dtype != DType::kF32 || w->dtype != DType::kF32) return bad_input("f32 only");
  if (x->dims.size() != 3 || w->dims.size() != 3) {
    return bad_input("only 1-D convolution (X [N,C,L]) is supported; X is " + dims_str(x->dims));
  }
  int64_t n = x->dims[0], c = x->dims[1], l = x->dims[2];
  int64_t m = w->dims[0], cg = w->dims[1], k = w->dims[2];
  if (cg * p.group != c || m % p.group != 0) {
    return bad_input("X channels " + std::to_string(c) + " do not match W " + dims_str(w->dims) +
                     " with group " + std::to_string(p.group));
  }
  if (b && (b->dtype != DType::kF32 || b->numel() != m)) return bad_input("bias must be f32 [M]");
  int64_t span = (k - 1) * p.dilation + 1;
  int64_t lout = (l + p.pad_begin + p.pad_end - span) / p.stride + 1;
  if (lout < 0) lout = 0;
  RtTensor& o = *a.out[0];
  int64_t od[3] = {n, m, lout};
  o.ensure(DType::kF32, od);
  const float* xp = x->as<float>();
  const float* wp = w->as<float>();
  float* op = o.as<float>();
  int64_t mg = m / p.group;
  for (int64_t ni = 0; ni < n; ++ni) {
    for (int64_t mi = 0; mi < m; ++mi) {
      float* dst = op + (ni * m + mi) * lout;
      float bv = b ? b->as<float>()[mi] : 0.0f;
      for (int64_t t = 0; t < lout; ++t) dst[t] = bv;
      int64_t g = mi / mg;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const float* src = xp + (ni * c + g * cg + ci) * l;
        for (int64_t kk = 0; kk < k; ++kk) {
          float wv = wp[(mi * cg + ci) * k + kk];
          int64_t shift = kk * p.dilation - p.pad_begin;  // il = t*stride + shift
          int64_t t0 = shift >= 0 ? 0 : (-shift + p.stride - 1) / p.stride;
          int64_t t1 = std::min(lout, (l - 1 - shift) >= 0 ? (l - 1 - shift) / p.stride + 1 : 0);
          if (p.stride == 1) {
            const float* s = src + shift;
            for (int64_t t = t0; t < t1; ++t) dst[t] += wv * s[t];
          } else {
            for (int64_t t = t0; t < t1; ++t) dst[t] += wv * src[t * p.stride + shift];
          }
        }
      }
    }
  }
  return Status::ok();
}

Status check_conv(const Graph& g, const Node& n) {
  auto ap = n.attr_s("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID") return unsupported(n, "auto_pad=" + ap + " is not supported by the cpu backend");
  auto ks = n.attr_ints("kernel_shape");
  size_t spatial = ks.size();
  if (spatial == 0 && n.inputs.size() > 1 && n.inputs[1] >= 0 && g.value(n.inputs[1]).rank_known) {
    spatial = g.value(n.inputs[1]).shape.size() - 2;
  }
  if (spatial != 1) return unsupported(n, "with " + std::to_string(spatial) + " spatial dims is not supported by the cpu backend (1-D only)");
  return Status::ok();
}

}  // namespace

void add_conv_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"Conv", check_conv, {"direct"}, [](const Graph&, const Node& n, const std::string&) {
                   ConvParams p;
                   auto s = n.attr_ints("strides");
                   auto d = n.attr_ints("dilations");
                   auto pads = n.attr_ints("pads");
                   if (!s.empty()) p.stride = s[0];
                   if (!d.empty()) p.dilation = d[0];
                   if (pads.size() >= 2) { p.pad_begin = pads[0]; p.pad_end = pads[1]; }
                   p.group = n.attr_i("group", 1);
                   if (p.stride < 1 || p.dilation < 1 || p.group < 1 || p.pad_begin < 0 || p.pad_end < 0) {
                     return Result<KernelPtr>(unsupported(n, "has invalid strides/dilations/pads/group"));
                   }
                   return make_fn_kernel([p](const KernelArgs& a) { return run_conv1d(p, a); });
                 }});
}

}  // namespace ts::engine::cpu
