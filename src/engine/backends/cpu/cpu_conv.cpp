// Conv: attributes and geometry (auto_pad NOTSET/SAME_UPPER/SAME_LOWER/VALID), the direct 1-D
// kernel (X [N,C,L], the temporal-CNN layer) and the op's registration. Tactics: 1-D convs get
// "onednn" (default) and "direct"; 2-D and 3-D convs "onednn" (cpu_conv_onednn.cpp).
//
// The direct kernel loops over valid output ranges (no per-element bounds checks), the
// innermost loop running over output positions so it vectorizes for stride 1.
//
// PERF NOTE: oneDNN is the 1-D default because it measured faster than the direct loops on
// every TCN shape tried (2-core dev machine, 1 OpenMP thread, constant weights, median of 301
// runs, two runs under load ~9): [1,32,60] k3 d2 → 32 out: 9.9 / 19.1 µs vs 31.6 / 57.6 µs;
// [64,32,60]: 955 / 573 µs vs 2229 / 2460 µs; [1,8,120] k5 → 16: 12.3 / 6.2 µs vs 22.1 / 9.7 µs.
// The builder still times both (time_tactics), so a shape where direct wins keeps it.
#include "engine/backends/cpu/cpu_conv.h"

#include <algorithm>

namespace ts::engine::cpu {

Result<ConvAttrs> conv_attrs(const Node& n) {
  ConvAttrs at;
  at.auto_pad = n.attr_s("auto_pad", "NOTSET");
  if (at.auto_pad != "NOTSET" && at.auto_pad != "SAME_UPPER" && at.auto_pad != "SAME_LOWER" &&
      at.auto_pad != "VALID") {
    return unsupported(n, "auto_pad=" + at.auto_pad + " is not a valid value (NOTSET, SAME_UPPER, SAME_LOWER, VALID)");
  }
  at.kernel_shape = n.attr_ints("kernel_shape");
  at.strides = n.attr_ints("strides");
  at.dilations = n.attr_ints("dilations");
  at.pads = n.attr_ints("pads");
  at.group = n.attr_i("group", 1);
  auto list = [](const std::vector<int64_t>& v) { return dims_str(v); };
  for (auto s : at.strides) {
    if (s < 1) return unsupported(n, "strides=" + list(at.strides) + " must be positive");
  }
  for (auto d : at.dilations) {
    if (d < 1) return unsupported(n, "dilations=" + list(at.dilations) + " must be positive");
  }
  for (auto p : at.pads) {
    if (p < 0) return unsupported(n, "pads=" + list(at.pads) + " must not be negative");
  }
  if (at.pads.size() % 2) return unsupported(n, "pads=" + list(at.pads) + " must have 2 values per spatial dim");
  if (at.group < 1) return unsupported(n, "group=" + std::to_string(at.group) + " must be positive");
  return at;
}

int conv_spatial(const Graph& g, const Node& n) {
  auto ks = n.attr_ints("kernel_shape");
  if (!ks.empty()) return int(ks.size());
  if (n.inputs.size() > 1 && n.inputs[1] >= 0 && g.value(n.inputs[1]).rank_known) {
    return int(g.value(n.inputs[1]).shape.size()) - 2;
  }
  return 0;
}

Status conv_geometry(const ConvAttrs& at, const RtTensor* x, const RtTensor* w, const RtTensor* b,
                     ConvGeom* g) {
  if (!x || !w) return bad_input("needs X and W");
  if (x->dtype != DType::kF32 || w->dtype != DType::kF32) {
    return bad_input(std::string("X and W must be f32, got ") + dtype_name(x->dtype) + " and " + dtype_name(w->dtype));
  }
  const int r = int(x->dims.size());
  if (r < 3 || r > 2 + kMaxConvSpatial) {
    return bad_input("X must be [N,C,D1..Dk] with 1 to 3 spatial dims; X is " + dims_str(x->dims));
  }
  if (int(w->dims.size()) != r) return bad_input("W " + dims_str(w->dims) + " and X " + dims_str(x->dims) + " differ in rank");
  const int sp = r - 2;
  g->spatial = sp;
  g->n = x->dims[0];
  g->c = x->dims[1];
  g->m = w->dims[0];
  g->group = at.group;
  if (w->dims[1] * at.group != g->c || g->m % at.group != 0) {
    return bad_input("X channels " + std::to_string(g->c) + " do not match W " + dims_str(w->dims) +
                     " with group " + std::to_string(at.group));
  }
  if (b && (b->dtype != DType::kF32 || b->numel() != g->m)) {
    return bad_input("B must be f32 [" + std::to_string(g->m) + "], got " + dtype_name(b->dtype) + dims_str(b->dims));
  }
  auto sized = [&](const std::vector<int64_t>& v, size_t want, const char* what) -> Status {
    if (!v.empty() && v.size() != want) {
      return bad_input(std::string(what) + " " + dims_str(v) + " has " + std::to_string(v.size()) +
                       " values for " + std::to_string(sp) + " spatial dims");
    }
    return Status::ok();
  };
  TS_RETURN_IF_ERROR(sized(at.kernel_shape, size_t(sp), "kernel_shape"));
  TS_RETURN_IF_ERROR(sized(at.strides, size_t(sp), "strides"));
  TS_RETURN_IF_ERROR(sized(at.dilations, size_t(sp), "dilations"));
  TS_RETURN_IF_ERROR(sized(at.pads, size_t(2 * sp), "pads"));
  for (int i = 0; i < sp; ++i) {
    const size_t u = size_t(i);
    int64_t in = x->dims[u + 2], k = w->dims[u + 2];
    if (!at.kernel_shape.empty() && at.kernel_shape[u] != k) {
      return bad_input("kernel_shape " + dims_str(at.kernel_shape) + " does not match W " + dims_str(w->dims));
    }
    int64_t s = at.strides.empty() ? 1 : at.strides[u], d = at.dilations.empty() ? 1 : at.dilations[u];
    int64_t eff = (k - 1) * d + 1, pb = 0, pe = 0;
    if (at.auto_pad == "SAME_UPPER" || at.auto_pad == "SAME_LOWER") {
      // Output ceil(in / stride); the odd pad goes at the end (UPPER) or the beginning (LOWER).
      int64_t out = (in + s - 1) / s, total = std::max<int64_t>(0, (out - 1) * s + eff - in);
      pb = at.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (at.auto_pad == "NOTSET" && !at.pads.empty()) {
      pb = at.pads[u];
      pe = at.pads[u + size_t(sp)];
    }
    if (in + pb + pe < eff) {
      return bad_input("kernel " + dims_str(w->dims) + " (dilated " + std::to_string(eff) +
                       ") is larger than the padded input " + dims_str(x->dims));
    }
    g->in[u] = in;
    g->k[u] = k;
    g->stride[u] = s;
    g->dilation[u] = d;
    g->pad_begin[u] = pb;
    g->pad_end[u] = pe;
    g->out[u] = (in + pb + pe - eff) / s + 1;
  }
  return Status::ok();
}

namespace {

Status run_conv1d(const ConvAttrs& at, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* w = a.input(1);
  const RtTensor* b = a.input(2);
  ConvGeom geo;
  TS_RETURN_IF_ERROR(conv_geometry(at, x, w, b, &geo));
  if (geo.spatial != 1) return bad_input("the direct tactic is 1-D only; X is " + dims_str(x->dims));
  const int64_t n = geo.n, c = geo.c, l = geo.in[0], m = geo.m, cg = c / geo.group, k = geo.k[0];
  const int64_t stride = geo.stride[0], dilation = geo.dilation[0], pad_begin = geo.pad_begin[0];
  const int64_t lout = geo.out[0];
  RtTensor& o = *a.out[0];
  int64_t od[3] = {n, m, lout};
  o.ensure(DType::kF32, od);
  const float* xp = x->as<float>();
  const float* wp = w->as<float>();
  float* op = o.as<float>();
  int64_t mg = m / geo.group;
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
          int64_t shift = kk * dilation - pad_begin;  // il = t*stride + shift
          int64_t t0 = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
          int64_t t1 = std::min(lout, (l - 1 - shift) >= 0 ? (l - 1 - shift) / stride + 1 : 0);
          if (stride == 1) {
            const float* s = src + shift;
            for (int64_t t = t0; t < t1; ++t) dst[t] += wv * s[t];
          } else {
            for (int64_t t = t0; t < t1; ++t) dst[t] += wv * src[t * stride + shift];
          }
        }
      }
    }
  }
  return Status::ok();
}

Status check_conv(const Graph& g, const Node& n) {
  auto at = conv_attrs(n);
  if (!at) return at.status();
  int spatial = conv_spatial(g, n);
  if (spatial == 0) {
    return unsupported(n, "has no kernel_shape and W of unknown rank: the spatial rank is needed at build time");
  }
  if (spatial < 1 || spatial > kMaxConvSpatial) {
    return unsupported(n, "with " + std::to_string(spatial) + " spatial dims is not supported by the cpu backend (1 to 3)");
  }
  for (size_t i = 0; i < n.inputs.size() && i < 3; ++i) {
    if (n.inputs[i] < 0) continue;
    const Value& v = g.value(n.inputs[i]);
    if (v.dtype != DType::kF32) {
      return unsupported(n, std::string("input ") + std::to_string(i) + " '" + v.name + "' of dtype " +
                                dtype_name(v.dtype) + " is not supported by the cpu backend (f32 only)");
    }
  }
  return Status::ok();
}

std::vector<std::string> conv_tactics(const Graph& g, const Node& n) {
  if (conv_spatial(g, n) == 1) return {"onednn", "direct"};
  return {"onednn"};
}

}  // namespace

void add_conv_ops(std::vector<OpInfo>& ops) {
  OpInfo conv{"Conv", check_conv, {"onednn", "direct"},
              [](const Graph& g, const Node& n, const std::string& tactic) -> Result<KernelPtr> {
                auto at = conv_attrs(n);
                if (!at) return at.status();
                if (tactic == "onednn") {
                  bool const_w = n.inputs.size() > 1 && is_const(g, n.inputs[1]);
                  return make_conv_onednn(std::move(at.value()), const_w);
                }
                if (conv_spatial(g, n) != 1) return unsupported(n, "tactic direct is 1-D only");
                return make_fn_kernel([at = std::move(at.value())](const KernelArgs& a) { return run_conv1d(at, a); });
              }};
  conv.tactics_for = conv_tactics;
  ops.push_back(std::move(conv));
}

}  // namespace ts::engine::cpu
