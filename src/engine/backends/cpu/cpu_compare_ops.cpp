// Comparison, Max/Min and Range kernels: the integer arithmetic of PyTorch's shape glue
// (torch.arange(x.shape[1]) is Range; expand(-1, ...) is ConstantOfShape → Equal → Where) and
// the same ops on float data. Any numeric dtype; comparisons write bool. Reference loops: these
// run on a handful of elements per shape, or as plain element-wise ops.
#include <cmath>
#include <cstring>

#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {
namespace {

bool is_integer(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI8 || t == DType::kU8 || t == DType::kBool;
}

int64_t get_i(const RtTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kI64: return t.as<int64_t>()[i];
    case DType::kI32: return t.as<int32_t>()[i];
    case DType::kI8: return t.as<int8_t>()[i];
    default: return t.data[i];  // u8, bool
  }
}

double get_f(const RtTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32: return t.as<float>()[i];
    case DType::kF64: return t.as<double>()[i];
    case DType::kF16: return f16_to_f32(t.as<uint16_t>()[i]);
    case DType::kBF16: return bf16_to_f32(t.as<uint16_t>()[i]);
    default: return double(get_i(t, i));
  }
}

void put(RtTensor& t, int64_t i, double f, int64_t n) {
  switch (t.dtype) {
    case DType::kF32: t.as<float>()[i] = float(f); break;
    case DType::kF64: t.as<double>()[i] = f; break;
    case DType::kF16: t.as<uint16_t>()[i] = f16_from_f64(f); break;
    case DType::kBF16: t.as<uint16_t>()[i] = bf16_from_f32(float(f)); break;
    case DType::kI64: t.as<int64_t>()[i] = n; break;
    case DType::kI32: t.as<int32_t>()[i] = int32_t(n); break;
    case DType::kI8: t.as<int8_t>()[i] = int8_t(n); break;
    default: t.data[i] = uint8_t(n); break;
  }
}

// Offset of output index `o` (dims od) in an input of broadcast strides st.
int64_t bcast_offset(int64_t o, const Dims& od, const Dims& st) {
  int64_t off = 0;
  for (int d = od.n - 1; d >= 0; --d) {
    off += (o % od[d]) * st[d];
    o /= od[d];
  }
  return off;
}

enum class Cmp { kEqual, kLess, kGreater, kMax, kMin };

Status run_binary(Cmp op, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* y = a.input(1);
  if (!x || !y || !rank_ok(*x) || !rank_ok(*y)) return bad_input("needs two inputs of rank ≤ 8");
  if (x->dtype != y->dtype) return bad_input("input dtypes differ");
  Dims od;
  if (!broadcast_dims(dims_of(*x), dims_of(*y), &od)) return bad_input("shapes " + dims_str(x->dims) + " and " + dims_str(y->dims) + " do not broadcast");
  const bool cmp = op == Cmp::kEqual || op == Cmp::kLess || op == Cmp::kGreater;
  RtTensor& o = *a.out[0];
  o.ensure(cmp ? DType::kBool : x->dtype, od.span());
  const Dims sx = broadcast_strides(dims_of(*x), od), sy = broadcast_strides(dims_of(*y), od);
  const bool ints = is_integer(x->dtype);
  for (int64_t i = 0, n = od.numel(); i < n; ++i) {
    const int64_t ix = bcast_offset(i, od, sx), iy = bcast_offset(i, od, sy);
    if (ints) {
      const int64_t p = get_i(*x, ix), q = get_i(*y, iy);
      const int64_t r = op == Cmp::kEqual ? p == q : op == Cmp::kLess ? p < q : op == Cmp::kGreater ? p > q
                      : op == Cmp::kMax ? std::max(p, q) : std::min(p, q);
      put(o, i, double(r), r);
    } else {
      const double p = get_f(*x, ix), q = get_f(*y, iy);
      // Max/Min propagate NaN, as numpy's maximum/minimum and ONNX Runtime do.
      const double r = op == Cmp::kEqual ? p == q : op == Cmp::kLess ? p < q : op == Cmp::kGreater ? p > q
                     : (std::isnan(p) || std::isnan(q)) ? NAN : op == Cmp::kMax ? std::max(p, q) : std::min(p, q);
      put(o, i, r, int64_t(r));
    }
  }
  return Status::ok();
}

Status run_range(const KernelArgs& a) {
  const RtTensor *s = a.input(0), *l = a.input(1), *d = a.input(2);
  if (!s || !l || !d || s->numel() != 1 || l->numel() != 1 || d->numel() != 1) return bad_input("start, limit and delta must be scalars");
  RtTensor& o = *a.out[0];
  int64_t n = 0;
  if (is_integer(s->dtype)) {
    const int64_t b = get_i(*s, 0), e = get_i(*l, 0), st = get_i(*d, 0);
    if (st == 0) return bad_input("delta is 0");
    const int64_t span = e - b;
    n = span / st + ((span % st != 0 && ((span < 0) == (st < 0))) ? 1 : 0);
    n = std::max<int64_t>(n, 0);
    o.ensure(s->dtype, std::span<const int64_t>(&n, 1));
    for (int64_t i = 0; i < n; ++i) put(o, i, double(b + i * st), b + i * st);
  } else {
    const double b = get_f(*s, 0), e = get_f(*l, 0), st = get_f(*d, 0);
    if (st == 0) return bad_input("delta is 0");
    n = std::max<int64_t>(int64_t(std::ceil((e - b) / st)), 0);
    o.ensure(s->dtype, std::span<const int64_t>(&n, 1));
    for (int64_t i = 0; i < n; ++i) put(o, i, b + double(i) * st, 0);
  }
  return Status::ok();
}

}  // namespace

void add_compare_ops(std::vector<OpInfo>& ops) {
  const std::pair<const char*, Cmp> bins[] = {{"Equal", Cmp::kEqual}, {"Less", Cmp::kLess}, {"Greater", Cmp::kGreater},
                                              {"Max", Cmp::kMax},     {"Min", Cmp::kMin}};
  for (const auto& bin : bins) {
    const Cmp op = bin.second;  // a plain variable: clang < 16 cannot capture a structured binding
    ops.push_back({bin.first,
                   [](const Graph&, const Node& n) {
                     return n.inputs.size() == 2 ? Status::ok() : unsupported(n, "with other than two inputs");
                   },
                   {"ref"},
                   [op](const Graph&, const Node&, const std::string&) {
                     return make_fn_kernel([op](const KernelArgs& a) { return run_binary(op, a); });
                   }});
  }
  ops.push_back({"Range", nullptr, {"ref"}, [](const Graph&, const Node&, const std::string&) { return make_fn_kernel(run_range); }});
}

}  // namespace ts::engine::cpu
