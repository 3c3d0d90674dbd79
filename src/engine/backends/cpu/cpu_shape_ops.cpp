// Data-movement and shape kernels: Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Slice,
// Gather, Concat, Shape, ConstantOfShape, Constant (folded by the importer), Expand. All work
// on any dtype by element size; shape tensors are int64 (int32 accepted).
#include <algorithm>
#include <cstring>

#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {
namespace {

// dst[i] = src[offset(i)] where offset follows `st` (element strides) over `out` dims.
// PERF NOTE: when the last axis is contiguous in the source (a Transpose keeping the last axis,
// a Slice of leading axes) whole rows are copied with memcpy: the transformer's head split and
// merge (perm [1,0,2] of [T, B·H, 16]) ran one 4-byte memcpy per element before.
void copy_strided(const uint8_t* src, const Dims& out, const Dims& st, size_t es, uint8_t* dst) {
  int64_t n = out.numel();
  if (n == 0) return;
  int rank = out.n;
  int64_t run = 1;
  if (rank > 0 && st[rank - 1] == 1) run = out[--rank];
  // 4-byte elements whose last axis moves (Kᵀ for attention): a strided gather per output row.
  const bool gather4 = run == 1 && es == 4 && rank > 0;
  int64_t gstride = 0;
  if (gather4) {
    run = out[--rank];
    gstride = st[rank];
  }
  const size_t run_bytes = size_t(run) * es;
  std::array<int64_t, kMaxRank> idx{};
  int64_t off = 0;
  for (int64_t i = 0; i < n; i += run) {
    if (gather4) {
      for (int64_t j = 0; j < run; ++j) std::memcpy(dst + (i + j) * 4, src + (off + j * gstride) * 4, 4);
    } else {
      // off is signed: a negative stride (a reversing Slice) moves back. size_t(off) wrapped,
      // an overflowing pointer addition (UBSan, PyTorchExport.NegativeAxesSlice...).
      std::memcpy(dst + size_t(i) * es, src + off * int64_t(es), run_bytes);
    }
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[size_t(d)];
      off += st[d];
      if (idx[size_t(d)] < out[d]) break;
      off -= st[d] * out[d];
      idx[size_t(d)] = 0;
    }
  }
}

Dims contiguous_strides(const Dims& d) {
  Dims s;
  s.n = d.n;
  int64_t st = 1;
  for (int i = d.n - 1; i >= 0; --i) {
    s[i] = st;
    st *= d[i];
  }
  return s;
}

Status copy_with_dims(const RtTensor& x, const Dims& od, RtTensor& o) {
  if (od.numel() != x.numel()) {
    return bad_input("cannot reshape " + dims_str(x.dims) + " (" + std::to_string(x.numel()) + " elements) to " + dims_str(od.span()));
  }
  o.ensure(x.dtype, od.span());
  if (x.bytes()) std::memcpy(o.data, x.data, x.bytes());
  return Status::ok();
}

Status run_transpose(const std::vector<int64_t>& perm_attr, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x || !rank_ok(*x)) return bad_input("needs an input of rank ≤ 8");
  Dims xd = dims_of(*x), xs = contiguous_strides(xd), od, st;
  int r = xd.n;
  if (!perm_attr.empty() && int(perm_attr.size()) != r) return bad_input("perm length does not match rank " + std::to_string(r));
  std::array<bool, kMaxRank> seen{};
  for (int i = 0; i < r; ++i) {
    int64_t p = perm_attr.empty() ? r - 1 - i : perm_attr[size_t(i)];
    if (p < 0) p += r;
    if (p < 0 || p >= r || seen[size_t(p)]) return bad_input("invalid perm");
    seen[size_t(p)] = true;
    od.push(xd[int(p)]);
    st.push(xs[int(p)]);
  }
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, od.span());
  copy_strided(x->data, od, st, dtype_size(x->dtype), o.data);
  return Status::ok();
}

Status run_reshape(bool allowzero, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* s = a.input(1);
  if (!x || !s) return bad_input("needs data and shape");
  Dims sd, od;
  if (!read_ints(*s, &sd)) return bad_input("shape must be an int64 tensor of ≤ 8 values");
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < sd.n; ++i) {
    int64_t v = sd[i];
    if (v == 0 && !allowzero) {
      if (size_t(i) >= x->dims.size()) return bad_input("shape has 0 at axis " + std::to_string(i) + " beyond the input rank");
      v = x->dims[size_t(i)];
    }
    if (v == -1) {
      if (infer >= 0) return bad_input("shape has more than one -1");
      infer = i;
      od.push(1);
      continue;
    }
    if (v < 0) return bad_input("shape has a negative dim");
    od.push(v);
    known *= v;
  }
  if (infer >= 0) {
    if (known == 0 || x->numel() % known != 0) return bad_input("cannot infer -1 reshaping " + dims_str(x->dims) + " to " + dims_str(sd.span()));
    od[infer] = x->numel() / known;
  }
  return copy_with_dims(*x, od, *a.out[0]);
}

Status run_flatten(int64_t axis_attr, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs an input");
  int r = int(x->dims.size());
  int64_t ax = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (ax < 0 || ax > r) return bad_input("axis out of range");
  Dims od;
  od.push(1);
  od.push(1);
  for (int i = 0; i < r; ++i) od[i < ax ? 0 : 1] *= x->dims[size_t(i)];
  return copy_with_dims(*x, od, *a.out[0]);
}

Status axes_from(const std::vector<int64_t>& attr, const KernelArgs& a, Dims* axes) {
  *axes = Dims::of(attr);
  if (const RtTensor* t = a.input(1)) {
    if (!read_ints(*t, axes)) return bad_input("axes must be an int64 tensor of ≤ 8 values");
  }
  return Status::ok();
}

Status run_squeeze(const std::vector<int64_t>& attr, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x || !rank_ok(*x)) return bad_input("needs an input of rank ≤ 8");
  Dims axes, od;
  TS_RETURN_IF_ERROR(axes_from(attr, a, &axes));
  int r = int(x->dims.size());
  std::array<bool, kMaxRank> drop{};
  for (int i = 0; i < axes.n; ++i) {
    auto ax = norm_axis(axes[i], r);
    if (!ax) return ax.status();
    if (x->dims[size_t(ax.value())] != 1) return bad_input("cannot squeeze axis " + std::to_string(axes[i]) + " of " + dims_str(x->dims));
    drop[size_t(ax.value())] = true;
  }
  for (int i = 0; i < r; ++i) {
    bool d = axes.n ? drop[size_t(i)] : x->dims[size_t(i)] == 1;
    if (!d) od.push(x->dims[size_t(i)]);
  }
  return copy_with_dims(*x, od, *a.out[0]);
}

Status run_unsqueeze(const std::vector<int64_t>& attr, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs an input");
  Dims axes, od;
  TS_RETURN_IF_ERROR(axes_from(attr, a, &axes));
  int r = int(x->dims.size()) + axes.n;
  if (r > kMaxRank) return bad_input("rank above 8");
  std::array<bool, kMaxRank> ins{};
  for (int i = 0; i < axes.n; ++i) {
    auto ax = norm_axis(axes[i], r);
    if (!ax) return ax.status();
    if (ins[size_t(ax.value())]) return bad_input("repeated axis");
    ins[size_t(ax.value())] = true;
  }
  size_t k = 0;
  for (int i = 0; i < r; ++i) od.push(ins[size_t(i)] ? 1 : x->dims[k++]);
  return copy_with_dims(*x, od, *a.out[0]);
}

Status run_slice(const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x || !rank_ok(*x) || !a.input(1) || !a.input(2)) return bad_input("needs data, starts and ends");
  Dims starts, ends, axes, steps;
  if (!read_ints(*a.input(1), &starts) || !read_ints(*a.input(2), &ends)) return bad_input("starts/ends must be int64");
  if (starts.n != ends.n) return bad_input("starts and ends differ in length");
  int r = int(x->dims.size());
  if (a.input(3)) {
    if (!read_ints(*a.input(3), &axes) || axes.n != starts.n) return bad_input("axes must match starts");
  } else {
    for (int i = 0; i < starts.n; ++i) axes.push(i);
  }
  if (a.input(4)) {
    if (!read_ints(*a.input(4), &steps) || steps.n != starts.n) return bad_input("steps must match starts");
  } else {
    for (int i = 0; i < starts.n; ++i) steps.push(1);
  }
  Dims xd = dims_of(*x), xs = contiguous_strides(xd), od = xd, st = xs;
  int64_t base = 0;
  for (int i = 0; i < starts.n; ++i) {
    auto axr = norm_axis(axes[i], r);
    if (!axr) return axr.status();
    int ax = axr.value();
    int64_t d = xd[ax], step = steps[i];
    if (step == 0) return bad_input("slice step 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    od[ax] = len;
    st[ax] = xs[ax] * step;
    if (len > 0) base += s * xs[ax];
  }
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, od.span());
  size_t es = dtype_size(x->dtype);
  copy_strided(x->data + size_t(base) * es, od, st, es, o.data);
  return Status::ok();
}

Status run_gather(int64_t axis_attr, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* ind = a.input(1);
  if (!x || !ind) return bad_input("needs data and indices");
  if (ind->dtype != DType::kI64 && ind->dtype != DType::kI32) return bad_input("indices must be int64 or int32");
  int r = int(x->dims.size());
  if (r == 0) return bad_input("Gather from a scalar");
  auto axr = norm_axis(axis_attr, r);
  if (!axr) return axr.status();
  int ax = axr.value();
  Dims od;
  for (int i = 0; i < ax; ++i) od.push(x->dims[size_t(i)]);
  if (int(ind->dims.size()) + r - 1 > kMaxRank) return bad_input("rank above 8");
  for (auto d : ind->dims) od.push(d);
  for (int i = ax + 1; i < r; ++i) od.push(x->dims[size_t(i)]);
  int64_t outer = 1, inner = 1, d = x->dims[size_t(ax)];
  for (int i = 0; i < ax; ++i) outer *= x->dims[size_t(i)];
  for (int i = ax + 1; i < r; ++i) inner *= x->dims[size_t(i)];
  int64_t ni = ind->numel();
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, od.span());
  size_t es = dtype_size(x->dtype), row = size_t(inner) * es;
  for (int64_t j = 0; j < ni; ++j) {
    int64_t idx = ind->dtype == DType::kI64 ? ind->as<int64_t>()[j] : ind->as<int32_t>()[j];
    if (idx < 0) idx += d;
    if (idx < 0 || idx >= d) return bad_input("index " + std::to_string(idx) + " is out of range for axis size " + std::to_string(d));
  }
  for (int64_t ou = 0; ou < outer; ++ou) {
    for (int64_t j = 0; j < ni; ++j) {
      int64_t idx = ind->dtype == DType::kI64 ? ind->as<int64_t>()[j] : ind->as<int32_t>()[j];
      if (idx < 0) idx += d;
      std::memcpy(o.data + size_t(ou * ni + j) * row, x->data + size_t(ou * d + idx) * row, row);
    }
  }
  return Status::ok();
}

Status run_concat(int64_t axis_attr, const KernelArgs& a) {
  const RtTensor* first = a.input(0);
  if (!first) return bad_input("needs inputs");
  int r = int(first->dims.size());
  if (r == 0) return bad_input("Concat of scalars");
  auto axr = norm_axis(axis_attr, r);
  if (!axr) return axr.status();
  int ax = axr.value();
  Dims od = dims_of(*first);
  od[ax] = 0;
  for (size_t i = 0; i < a.in.size(); ++i) {
    const RtTensor* t = a.in[i];
    if (!t) continue;
    if (int(t->dims.size()) != r || t->dtype != first->dtype) return bad_input("inputs differ in rank or dtype");
    for (int k = 0; k < r; ++k) {
      if (k != ax && t->dims[size_t(k)] != od[k]) {
        return bad_input("input " + std::to_string(i) + " shape " + dims_str(t->dims) + " does not match " + dims_str(first->dims) + " off the concat axis");
      }
    }
    od[ax] += t->dims[size_t(ax)];
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= od[i];
  for (int i = ax + 1; i < r; ++i) inner *= od[i];
  RtTensor& o = *a.out[0];
  o.ensure(first->dtype, od.span());
  size_t es = dtype_size(first->dtype);
  size_t out_row = size_t(od[ax] * inner) * es, pos = 0;
  for (const RtTensor* t : a.in) {
    if (!t) continue;
    size_t row = size_t(t->dims[size_t(ax)] * inner) * es;
    for (int64_t ou = 0; ou < outer; ++ou) {
      if (row) std::memcpy(o.data + size_t(ou) * out_row + pos, t->data + size_t(ou) * row, row);
    }
    pos += row;
  }
  return Status::ok();
}

Status run_shape(int64_t start, int64_t end, bool has_end, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs an input");
  const int64_t r = int64_t(x->dims.size());
  const auto [s, e] = shape_op_range(start, has_end ? end : r, r);
  int64_t n = e - s;
  RtTensor& o = *a.out[0];
  o.ensure(DType::kI64, std::span<const int64_t>(&n, 1));
  for (int64_t i = 0; i < n; ++i) o.as<int64_t>()[i] = x->dims[size_t(s + i)];
  return Status::ok();
}

Status run_constant_of_shape(DType dt, double value, const KernelArgs& a) {
  const RtTensor* s = a.input(0);
  if (!s) return bad_input("needs a shape");
  Dims od;
  if (!read_ints(*s, &od)) return bad_input("shape must be an int64 tensor of ≤ 8 values");
  for (int i = 0; i < od.n; ++i) if (od[i] < 0) return bad_input("negative dim in shape");
  RtTensor& o = *a.out[0];
  o.ensure(dt, od.span());
  int64_t n = od.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (dt) {
      case DType::kF32: o.as<float>()[i] = float(value); break;
      case DType::kI64: o.as<int64_t>()[i] = int64_t(value); break;
      case DType::kI32: o.as<int32_t>()[i] = int32_t(value); break;
      case DType::kBool: case DType::kU8: o.data[i] = uint8_t(value != 0.0); break;
      case DType::kF64: o.as<double>()[i] = value; break;
      default: return bad_input("unsupported ConstantOfShape dtype");
    }
  }
  return Status::ok();
}

Status run_expand(const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* s = a.input(1);
  if (!x || !s || !rank_ok(*x)) return bad_input("needs input and shape");
  Dims sd, od;
  if (!read_ints(*s, &sd)) return bad_input("shape must be an int64 tensor of ≤ 8 values");
  if (!broadcast_dims(dims_of(*x), sd, &od)) return bad_input("cannot expand " + dims_str(x->dims) + " to " + dims_str(sd.span()));
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, od.span());
  copy_strided(x->data, od, broadcast_strides(dims_of(*x), od), dtype_size(x->dtype), o.data);
  return Status::ok();
}

template <typename F>
OpInfo simple(const char* op, F make) {
  return OpInfo{op, nullptr, {"ref"}, [make](const Graph& g, const Node& n, const std::string&) { return make(g, n); }};
}

}  // namespace

void add_shape_ops(std::vector<OpInfo>& ops) {
  ops.push_back(simple("Transpose", [](const Graph&, const Node& n) {
    auto perm = n.attr_ints("perm");
    return make_fn_kernel([perm](const KernelArgs& a) { return run_transpose(perm, a); });
  }));
  ops.push_back(simple("Reshape", [](const Graph&, const Node& n) {
    bool az = n.attr_i("allowzero", 0) != 0;
    return make_fn_kernel([az](const KernelArgs& a) { return run_reshape(az, a); });
  }));
  ops.push_back(simple("Flatten", [](const Graph&, const Node& n) {
    int64_t ax = n.attr_i("axis", 1);
    return make_fn_kernel([ax](const KernelArgs& a) { return run_flatten(ax, a); });
  }));
  ops.push_back(simple("Squeeze", [](const Graph&, const Node& n) {
    auto axes = n.attr_ints("axes");
    return make_fn_kernel([axes](const KernelArgs& a) { return run_squeeze(axes, a); });
  }));
  ops.push_back(simple("Unsqueeze", [](const Graph&, const Node& n) {
    auto axes = n.attr_ints("axes");
    return make_fn_kernel([axes](const KernelArgs& a) { return run_unsqueeze(axes, a); });
  }));
  ops.push_back(simple("Slice", [](const Graph&, const Node&) { return make_fn_kernel(run_slice); }));
  ops.push_back(simple("Gather", [](const Graph&, const Node& n) {
    int64_t ax = n.attr_i("axis", 0);
    return make_fn_kernel([ax](const KernelArgs& a) { return run_gather(ax, a); });
  }));
  ops.push_back(simple("Concat", [](const Graph&, const Node& n) {
    int64_t ax = n.attr_i("axis", 0);
    return make_fn_kernel([ax](const KernelArgs& a) { return run_concat(ax, a); });
  }));
  ops.push_back(simple("Shape", [](const Graph&, const Node& n) {
    int64_t s = n.attr_i("start", 0), e = n.attr_i("end", 0);
    bool he = n.has_attr("end");
    return make_fn_kernel([s, e, he](const KernelArgs& a) { return run_shape(s, e, he, a); });
  }));
  ops.push_back(simple("ConstantOfShape", [](const Graph& g, const Node& n) {
    DType dt = n.outputs.empty() ? DType::kF32 : g.value(n.outputs[0]).dtype;
    double v = n.attr_f("value", 0.0f);
    return make_fn_kernel([dt, v](const KernelArgs& a) { return run_constant_of_shape(dt, v, a); });
  }));
  ops.push_back(simple("Expand", [](const Graph&, const Node&) { return make_fn_kernel(run_expand); }));
  // The importer folds Constant nodes into constant values; the runtime skips nodes whose
  // outputs are all constants, so this kernel only runs for an unfolded Constant.
  ops.push_back({"Constant",
                 [](const Graph& g, const Node& n) {
                   for (ValueId v : n.outputs)
                     if (!is_const(g, v)) return unsupported(n, "was not folded into a constant value");
                   return Status::ok();
                 },
                 {"folded"},
                 [](const Graph&, const Node&, const std::string&) {
                   return make_fn_kernel([](const KernelArgs&) { return Status::ok(); });
                 }});
}

}  // namespace ts::engine::cpu
