// fold_constants: evaluates on the host the cheap nodes whose inputs are all constant (and
// Shape of a value whose dims are all known), turning their outputs into constants and
// dropping the nodes. Covers the Shape → Gather → Unsqueeze → Concat → Reshape chains of
// PyTorch exports. Shape of a symbolic dim is left for the runtime. Outputs larger than
// kMaxFoldElems are not folded (they would bloat the plan; the backend computes them).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "engine/passes/pass_util.h"
#include "engine/passes/passes.h"

namespace ts::engine {
namespace {

using passes::node_error;
using passes::norm_axis;
using passes::perm_problem;

constexpr int64_t kMaxFoldElems = int64_t(1) << 20;

bool is_int(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI8 || t == DType::kU8 || t == DType::kBool;
}

// Row-major strides of dims (in elements).
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Copies elements of `src` (dims sd) into a tensor of dims od where element o reads
// src at index map(o's multi-index). Used by Transpose, Expand, Slice, Gather.
template <typename F>
Value gather_elems(const Value& src, std::string name, const std::vector<int64_t>& od, F map) {
  Value v;
  v.name = std::move(name);
  v.dtype = src.dtype;
  v.shape = shape_of(od);
  v.rank_known = v.is_constant = true;
  size_t es = dtype_size(src.dtype);
  int64_t n = shape_numel(od);
  v.data.resize(size_t(n) * es);
  std::vector<int64_t> idx(od.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t s = map(idx);
    std::memcpy(v.data.data() + size_t(o) * es, src.data.data() + size_t(s) * es, es);
    for (size_t k = od.size(); k-- > 0;) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
  return v;
}

std::vector<int64_t> bcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool& ok) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  ok = true;
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) ok = false;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// Index into a broadcast operand of dims `d` from the output multi-index.
int64_t bcast_index(const std::vector<int64_t>& d, const std::vector<int64_t>& st, const std::vector<int64_t>& oi) {
  int64_t s = 0;
  size_t off = oi.size() - d.size();
  for (size_t k = 0; k < d.size(); ++k) s += (d[k] == 1 ? 0 : oi[k + off]) * st[k];
  return s;
}

std::optional<Value> eval_binary(const Node& n, const Value& a, const Value& b, const std::string& name) {
  bool ok;
  auto ad = a.const_dims(), bd = b.const_dims();
  auto od = bcast_dims(ad, bd, ok);
  if (!ok || shape_numel(od) > kMaxFoldElems) return std::nullopt;
  auto as = strides_of(ad), bs = strides_of(bd);
  const std::string& op = n.op;
  std::vector<int64_t> idx(od.size(), 0);
  int64_t total = shape_numel(od);
  if (is_int(a.dtype) && op != "Pow") {
    auto x = constant_as_i64(a), y = constant_as_i64(b);
    std::vector<int64_t> r(static_cast<size_t>(total));
    for (int64_t o = 0; o < total; ++o) {
      int64_t p = x[size_t(bcast_index(ad, as, idx))], q = y[size_t(bcast_index(bd, bs, idx))];
      if (op == "Div" && q == 0) return std::nullopt;
      r[size_t(o)] = op == "Add" ? p + q : op == "Sub" ? p - q : op == "Mul" ? p * q
                   : op == "Div" ? p / q : op == "Equal" ? (p == q) : op == "Less" ? (p < q) : (p > q);
      for (size_t k = od.size(); k-- > 0;) {
        if (++idx[k] < od[k]) break;
        idx[k] = 0;
      }
    }
    DType dt = (op == "Equal" || op == "Less" || op == "Greater") ? DType::kBool : a.dtype;
    if (dt == DType::kI64) return make_constant_i64(name, od, r);
    return make_constant(name, dt, od, std::vector<double>(r.begin(), r.end()));
  }
  auto x = constant_as_f64(a), y = constant_as_f64(b);
  std::vector<double> r(static_cast<size_t>(total));
  for (int64_t o = 0; o < total; ++o) {
    double p = x[size_t(bcast_index(ad, as, idx))], q = y[size_t(bcast_index(bd, bs, idx))];
    r[size_t(o)] = op == "Add" ? p + q : op == "Sub" ? p - q : op == "Mul" ? p * q : op == "Div" ? p / q
                 : op == "Pow" ? std::pow(p, q) : op == "Equal" ? double(p == q) : op == "Less" ? double(p < q)
                 : double(p > q);
    for (size_t k = od.size(); k-- > 0;) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
  DType dt = (op == "Equal" || op == "Less" || op == "Greater") ? DType::kBool : a.dtype;
  return make_constant(name, dt, od, r);
}

// Evaluates n; nullopt when the op or its size is not folded. An error for inputs that are
// constant but inconsistent (they would fail at runtime too).
Result<std::optional<Value>> eval(const Graph& g, const Node& n) {
  using Opt = std::optional<Value>;
  auto cin = [&](size_t i) -> const Value* {
    return i < n.inputs.size() && n.inputs[i] != kNoValue ? &g.value(n.inputs[i]) : nullptr;
  };
  const std::string name = g.value(n.outputs[0]).name;
  const std::string& op = n.op;
  const Value* x = cin(0);

  if (op == "Shape") {
    if (!x || !x->rank_known || !shape_is_known(x->shape)) return Opt{};
    auto d = x->const_dims();
    const int64_t r = int64_t(d.size());
    const auto [s, e] = shape_op_range(n.attr_i("start", 0), n.attr_i("end", r), r);
    std::vector<int64_t> out(d.begin() + s, d.begin() + e);
    return Opt(make_constant_i64(name, {int64_t(out.size())}, out));
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != kNoValue && !g.value(n.inputs[i]).is_constant) return Opt{};
  }
  if (op == "ConstantOfShape") {
    auto dims = x ? constant_as_i64(*x) : std::vector<int64_t>{};
    if (shape_numel(dims) > kMaxFoldElems) return Opt{};
    DType dt = n.has_attr("value_dtype") ? DType(n.attr_i("value_dtype", 0)) : DType::kF32;
    return Opt(make_constant(name, dt, dims, std::vector<double>(size_t(shape_numel(dims)), n.attr_f("value", 0))));
  }
  if (op == "Range" && x && cin(1) && cin(2) && x->numel() == 1 && cin(1)->numel() == 1 && cin(2)->numel() == 1) {
    const double b = constant_as_f64(*x)[0], e = constant_as_f64(*cin(1))[0], d = constant_as_f64(*cin(2))[0];
    if (d == 0) return node_error(n, "delta is 0");
    const int64_t count = std::max<int64_t>(int64_t(std::ceil((e - b) / d)), 0);
    if (count > kMaxFoldElems) return Opt{};
    std::vector<double> xs;
    for (int64_t i = 0; i < count; ++i) xs.push_back(b + double(i) * d);
    return Opt(make_constant(name, x->dtype, {count}, xs));
  }
  if (!x || x->numel() > kMaxFoldElems) return Opt{};
  auto xd = x->const_dims();
  auto relabel = [&](std::vector<int64_t> dims) {
    Value v = *x;
    v.name = name;
    v.shape = shape_of(dims);
    return Opt(std::move(v));
  };
  if (op == "Identity") return relabel(xd);
  if (op == "Unsqueeze" || op == "Squeeze") {
    auto axes = cin(1) ? constant_as_i64(*cin(1)) : n.attr_ints("axes");
    std::vector<int64_t> d;
    if (op == "Unsqueeze") {
      int64_t r = int64_t(xd.size() + axes.size());
      std::vector<bool> ins(size_t(r), false);
      for (auto a : axes) {
        int64_t k = norm_axis(a, r);
        if (k < 0) return node_error(n, "axis out of range");
        ins[size_t(k)] = true;
      }
      for (int64_t i = 0, j = 0; i < r; ++i) d.push_back(ins[size_t(i)] ? 1 : xd[size_t(j++)]);
    } else {
      int64_t r = int64_t(xd.size());
      std::vector<bool> drop(size_t(r), axes.empty());
      for (auto a : axes) {
        int64_t k = norm_axis(a, r);
        if (k < 0 || xd[size_t(k)] != 1) return node_error(n, "cannot squeeze axis " + std::to_string(a));
        drop[size_t(k)] = true;
      }
      for (int64_t i = 0; i < r; ++i) {
        if (!drop[size_t(i)] || xd[size_t(i)] != 1) d.push_back(xd[size_t(i)]);
      }
    }
    return relabel(d);
  }
  if (op == "Reshape" || op == "Flatten") {
    std::vector<int64_t> d;
    if (op == "Flatten") {
      int64_t axis = n.attr_i("axis", 1);
      if (axis < 0) axis += int64_t(xd.size());
      d = {shape_numel({xd.begin(), xd.begin() + axis}), shape_numel({xd.begin() + axis, xd.end()})};
    } else {
      d = constant_as_i64(*cin(1));
      int64_t known = 1, neg = -1;
      for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 0 && !n.attr_i("allowzero", 0) && i < xd.size()) d[i] = xd[i];
        if (d[i] == -1 && neg >= 0) return node_error(n, "shape has more than one -1");
        if (d[i] == -1) neg = int64_t(i);
        else if (d[i] < 0) return node_error(n, "shape has a negative dim");
        else known *= d[i];
      }
      // As the kernel (cpu_shape_ops.cpp): a -1 beside a 0 cannot be inferred. It once stayed -1,
      // and the plan held a constant of shape [0, ?] that the loader refused.
      if (neg >= 0 && (known == 0 || x->numel() % known != 0)) {
        return node_error(n, "cannot infer -1 reshaping " + shape_to_string(x->shape));
      }
      if (neg >= 0) d[size_t(neg)] = x->numel() / known;
      if (shape_numel(d) != x->numel()) return node_error(n, "cannot reshape " + shape_to_string(x->shape));
    }
    return relabel(d);
  }
  if (op == "Cast") {
    static const std::pair<int64_t, DType> kTo[] = {{1, DType::kF32}, {6, DType::kI32}, {7, DType::kI64},
                                                    {9, DType::kBool}, {10, DType::kF16}, {11, DType::kF64},
                                                    {16, DType::kBF16}};
    for (auto [code, dt] : kTo) {
      if (code != n.attr_i("to", 0)) continue;
      if (dt == DType::kI64) return Opt(make_constant_i64(name, xd, constant_as_i64(*x)));
      return Opt(make_constant(name, dt, xd, constant_as_f64(*x)));
    }
    return Opt{};
  }
  if (op == "Transpose") {
    auto perm = n.attr_ints("perm");
    if (perm.empty()) {
      for (size_t i = xd.size(); i-- > 0;) perm.push_back(int64_t(i));
    }
    if (auto why = perm_problem(perm, xd.size()); !why.empty()) return node_error(n, why);
    std::vector<int64_t> od;
    for (auto p : perm) od.push_back(xd[size_t(p)]);
    auto st = strides_of(xd);
    return Opt(gather_elems(*x, name, od, [&](const std::vector<int64_t>& oi) {
      int64_t s = 0;
      for (size_t k = 0; k < oi.size(); ++k) s += oi[k] * st[size_t(perm[k])];
      return s;
    }));
  }
  if (op == "Gather") {
    int64_t axis = norm_axis(n.attr_i("axis", 0), int64_t(xd.size()));
    if (axis < 0) return node_error(n, "axis out of range");
    auto ind = constant_as_i64(*cin(1));
    auto id = cin(1)->const_dims();
    for (auto& i : ind) {
      if (i < 0) i += xd[size_t(axis)];
      if (i < 0 || i >= xd[size_t(axis)]) return node_error(n, "index out of range");
    }
    std::vector<int64_t> od(xd.begin(), xd.begin() + axis);
    od.insert(od.end(), id.begin(), id.end());
    od.insert(od.end(), xd.begin() + axis + 1, xd.end());
    auto st = strides_of(xd), ist = strides_of(id);
    size_t a = size_t(axis), q = id.size();
    return Opt(gather_elems(*x, name, od, [&](const std::vector<int64_t>& oi) {
      int64_t s = 0, flat = 0;
      for (size_t k = 0; k < a; ++k) s += oi[k] * st[k];
      for (size_t k = 0; k < q; ++k) flat += oi[a + k] * ist[k];
      s += ind[size_t(flat)] * st[a];
      for (size_t k = a + 1; k < xd.size(); ++k) s += oi[k - 1 + q] * st[k];
      return s;
    }));
  }
  if (op == "Slice") {
    auto st = constant_as_i64(*cin(1)), en = constant_as_i64(*cin(2));
    std::vector<int64_t> axes, steps(st.size(), 1);
    if (cin(3)) axes = constant_as_i64(*cin(3));
    else for (size_t i = 0; i < st.size(); ++i) axes.push_back(int64_t(i));
    if (cin(4)) steps = constant_as_i64(*cin(4));
    std::vector<int64_t> begin(xd.size(), 0), step(xd.size(), 1), od = xd;
    for (size_t i = 0; i < st.size(); ++i) {
      int64_t a = norm_axis(axes[i], int64_t(xd.size()));
      if (a < 0 || steps[i] == 0) return node_error(n, "bad axes/steps");
      int64_t len = xd[size_t(a)], b = st[i], e = en[i], s = steps[i];
      if (b < 0) b += len;
      if (e < 0) e += len;
      if (s > 0) {
        b = std::clamp<int64_t>(b, 0, len);
        e = std::clamp<int64_t>(e, 0, len);
        od[size_t(a)] = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, len - 1);
        e = std::clamp<int64_t>(e, -1, len - 1);
        od[size_t(a)] = b > e ? (b - e - s - 1) / -s : 0;
      }
      begin[size_t(a)] = b;
      step[size_t(a)] = s;
    }
    auto sx = strides_of(xd);
    return Opt(gather_elems(*x, name, od, [&](const std::vector<int64_t>& oi) {
      int64_t s = 0;
      for (size_t k = 0; k < oi.size(); ++k) s += (begin[k] + oi[k] * step[k]) * sx[k];
      return s;
    }));
  }
  if (op == "Concat") {
    int64_t axis = norm_axis(n.attr_i("axis", 0), int64_t(xd.size()));
    if (axis < 0) return node_error(n, "axis out of range");
    std::vector<int64_t> od = xd;
    od[size_t(axis)] = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) od[size_t(axis)] += cin(i)->const_dims()[size_t(axis)];
    // outer × (concatenated inner blocks)
    int64_t outer = shape_numel({xd.begin(), xd.begin() + axis});
    Value v;
    v.name = name;
    v.dtype = x->dtype;
    v.shape = shape_of(od);
    v.rank_known = v.is_constant = true;
    size_t es = dtype_size(x->dtype);
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const Value* p = cin(i);
        if (p->dtype != x->dtype) return node_error(n, "inputs differ in dtype");
        auto pd = p->const_dims();
        size_t block = size_t(shape_numel({pd.begin() + axis, pd.end()})) * es;
        const uint8_t* src = p->data.data() + size_t(o) * block;
        v.data.insert(v.data.end(), src, src + block);
      }
    }
    return Opt(std::move(v));
  }
  if (op == "Expand") {
    bool ok;
    auto od = bcast_dims(xd, constant_as_i64(*cin(1)), ok);
    if (!ok) return node_error(n, "cannot expand " + shape_to_string(x->shape));
    if (shape_numel(od) > kMaxFoldElems) return Opt{};
    auto st = strides_of(xd);
    return Opt(gather_elems(*x, name, od, [&](const std::vector<int64_t>& oi) { return bcast_index(xd, st, oi); }));
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Equal" ||
      op == "Less" || op == "Greater") {
    return eval_binary(n, *x, *cin(1), name);
  }
  if (op == "Sqrt" || op == "Neg") {
    auto xs = constant_as_f64(*x);
    for (auto& e : xs) e = op == "Sqrt" ? std::sqrt(e) : -e;
    if (x->dtype == DType::kI64) return Opt(make_constant_i64(name, xd, std::vector<int64_t>(xs.begin(), xs.end())));
    return Opt(make_constant(name, x->dtype, xd, xs));
  }
  if (op == "Where") {
    const Value *a = cin(1), *b = cin(2);
    bool ok1, ok2;
    auto ad = a->const_dims(), bd = b->const_dims();
    auto od = bcast_dims(bcast_dims(xd, ad, ok1), bd, ok2);
    if (!ok1 || !ok2) return node_error(n, "shapes cannot broadcast");
    auto cs = strides_of(xd), as = strides_of(ad), bs = strides_of(bd);
    auto cond = constant_as_i64(*x);
    Value av = *a;  // select element-wise by copying from a or b
    Value out = gather_elems(av, name, od, [&](const std::vector<int64_t>& oi) { return bcast_index(ad, as, oi); });
    Value bo = gather_elems(*b, name, od, [&](const std::vector<int64_t>& oi) { return bcast_index(bd, bs, oi); });
    size_t es = dtype_size(a->dtype);
    std::vector<int64_t> idx(od.size(), 0);
    for (int64_t o = 0; o < shape_numel(od); ++o) {
      if (!cond[size_t(bcast_index(xd, cs, idx))]) std::memcpy(out.data.data() + size_t(o) * es, bo.data.data() + size_t(o) * es, es);
      for (size_t k = od.size(); k-- > 0;) {
        if (++idx[k] < od[k]) break;
        idx[k] = 0;
      }
    }
    return Opt(std::move(out));
  }
  return Opt{};
}

}  // namespace

Status fold_constants(Graph& g, PassLog& log) {
  std::vector<Node> kept;
  size_t folded = 0;
  for (Node& n : g.nodes) {
    if (n.outputs.size() != 1 || n.outputs[0] == kNoValue) {
      kept.push_back(std::move(n));
      continue;
    }
    auto r = eval(g, n);
    if (!r) return r.status();
    if (!r.value()) {
      kept.push_back(std::move(n));
      continue;
    }
    g.value(n.outputs[0]) = std::move(*r.value());
    ++folded;
  }
  g.nodes = std::move(kept);
  log.lines.push_back("fold_constants: folded " + std::to_string(folded) + " nodes");
  return Status::ok();
}

}  // namespace ts::engine
