// Elementwise kernels: numpy-broadcast binary arithmetic (Add/Sub/Mul/Div/Pow on f32, and on
// i64/i32 for shape arithmetic), Where, unary activations and math, Identity, Cast.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine::cpu {
namespace {

// Calls inner(out_offset, in_offsets, count, inner_strides) for every run of the last axis.
template <int N, typename F>
void nd_loop(const Dims& out, const std::array<Dims, N>& st, F&& inner) {
  std::array<int64_t, N> off{}, inner_st{};
  if (out.n == 0) {
    inner(int64_t(0), off, int64_t(1), inner_st);
    return;
  }
  int last = out.n - 1;
  for (int k = 0; k < N; ++k) inner_st[size_t(k)] = st[size_t(k)][last];
  int64_t outer = 1;
  for (int i = 0; i < last; ++i) outer *= out[i];
  std::array<int64_t, kMaxRank> idx{};
  for (int64_t o = 0; o < outer; ++o) {
    inner(o * out[last], off, out[last], inner_st);
    for (int i = last - 1; i >= 0; --i) {
      ++idx[size_t(i)];
      for (int k = 0; k < N; ++k) off[size_t(k)] += st[size_t(k)][i];
      if (idx[size_t(i)] < out[i]) break;
      for (int k = 0; k < N; ++k) off[size_t(k)] -= st[size_t(k)][i] * out[i];
      idx[size_t(i)] = 0;
    }
  }
}

enum class BinOp { kAdd, kSub, kMul, kDiv, kPow };

template <typename T>
inline T apply_bin(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::kAdd: return a + b;
    case BinOp::kSub: return a - b;
    case BinOp::kMul: return a * b;
    case BinOp::kDiv: return b == T(0) && !std::is_floating_point_v<T> ? T(0) : a / b;
    case BinOp::kPow: return T(std::pow(double(a), double(b)));
  }
  return a;
}

template <typename T>
void binary_typed(BinOp op, const RtTensor& a, const RtTensor& b, RtTensor& o, const Dims& od) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  T* po = o.as<T>();
  int64_t n = od.numel();
  if (a.numel() == n && b.numel() == n) {
    switch (op) {
      case BinOp::kAdd: for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i]; return;
      case BinOp::kSub: for (int64_t i = 0; i < n; ++i) po[i] = pa[i] - pb[i]; return;
      case BinOp::kMul: for (int64_t i = 0; i < n; ++i) po[i] = pa[i] * pb[i]; return;
      default: for (int64_t i = 0; i < n; ++i) po[i] = apply_bin(op, pa[i], pb[i]); return;
    }
  }
  std::array<Dims, 2> st{broadcast_strides(dims_of(a), od), broadcast_strides(dims_of(b), od)};
  nd_loop<2>(od, st, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t cnt,
                         const std::array<int64_t, 2>& s) {
    const T* x = pa + off[0];
    const T* y = pb + off[1];
    T* z = po + oo;
    if (s[0] == 1 && s[1] == 0) {
      T yv = *y;
      for (int64_t i = 0; i < cnt; ++i) z[i] = apply_bin(op, x[i], yv);
    } else if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < cnt; ++i) z[i] = apply_bin(op, x[i], y[i]);
    } else {
      for (int64_t i = 0; i < cnt; ++i) z[i] = apply_bin(op, x[i * s[0]], y[i * s[1]]);
    }
  });
}

Status run_binary(BinOp op, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* y = a.input(1);
  if (!x || !y) return bad_input("needs two inputs");
  if (!rank_ok(*x) || !rank_ok(*y)) return bad_input("rank above 8");
  Dims od;
  if (!broadcast_dims(dims_of(*x), dims_of(*y), &od)) {
    return bad_input("shapes " + dims_str(x->dims) + " and " + dims_str(y->dims) + " do not broadcast");
  }
  RtTensor& o = *a.out[0];
  if (op == BinOp::kPow && x->dtype == DType::kF32 && y->dtype != DType::kF32) {
    // float base, integer exponent (exporters emit Pow(x, 2) with an int or float constant)
    if (y->numel() != 1) return bad_input("Pow with a non-scalar integer exponent");
    double e = y->dtype == DType::kI64 ? double(y->as<int64_t>()[0]) : double(y->as<int32_t>()[0]);
    o.ensure(DType::kF32, od.span());
    const float* px = x->as<float>();
    float* po = o.as<float>();
    for (int64_t i = 0; i < od.numel(); ++i) po[i] = e == 2.0 ? px[i] * px[i] : float(std::pow(px[i], e));
    return Status::ok();
  }
  if (x->dtype != y->dtype) {
    return bad_input(std::string("input dtypes differ: ") + dtype_name(x->dtype) + " and " + dtype_name(y->dtype));
  }
  o.ensure(x->dtype, od.span());
  switch (x->dtype) {
    case DType::kF32:
      if (op == BinOp::kPow && y->numel() == 1 && y->as<float>()[0] == 2.0f) {
        const float* px = x->as<float>();
        float* po = o.as<float>();
        for (int64_t i = 0; i < od.numel(); ++i) po[i] = px[i] * px[i];
        return Status::ok();
      }
      binary_typed<float>(op, *x, *y, o, od);
      return Status::ok();
    case DType::kI64: binary_typed<int64_t>(op, *x, *y, o, od); return Status::ok();
    case DType::kI32: binary_typed<int32_t>(op, *x, *y, o, od); return Status::ok();
    default: return bad_input(std::string("dtype ") + dtype_name(x->dtype) + " is not supported");
  }
}

Status run_where(const KernelArgs& a) {
  const RtTensor* c = a.input(0);
  const RtTensor* x = a.input(1);
  const RtTensor* y = a.input(2);
  if (!c || !x || !y) return bad_input("needs three inputs");
  if (x->dtype != y->dtype) return bad_input("X and Y dtypes differ");
  if (!rank_ok(*c) || !rank_ok(*x) || !rank_ok(*y)) return bad_input("rank above 8");
  Dims t, od;
  if (!broadcast_dims(dims_of(*c), dims_of(*x), &t) || !broadcast_dims(t, dims_of(*y), &od)) {
    return bad_input("shapes do not broadcast");
  }
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, od.span());
  size_t es = dtype_size(x->dtype);
  std::array<Dims, 3> st{broadcast_strides(dims_of(*c), od), broadcast_strides(dims_of(*x), od),
                         broadcast_strides(dims_of(*y), od)};
  const uint8_t* pc = c->data;
  nd_loop<3>(od, st, [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t cnt,
                         const std::array<int64_t, 3>& s) {
    for (int64_t i = 0; i < cnt; ++i) {
      bool cond = pc[off[0] + i * s[0]] != 0;
      const uint8_t* src = cond ? x->data + size_t(off[1] + i * s[1]) * es
                                : y->data + size_t(off[2] + i * s[2]) * es;
      std::memcpy(o.data + size_t(oo + i) * es, src, es);
    }
  });
  return Status::ok();
}

enum class UnOp { kRelu, kSigmoid, kTanh, kErf, kSqrt, kGelu, kGeluTanh, kExp, kNeg };

Status run_unary(UnOp op, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs one input");
  if (x->dtype != DType::kF32) return bad_input(std::string("dtype ") + dtype_name(x->dtype) + " is not supported (f32 only)");
  RtTensor& o = *a.out[0];
  o.ensure(DType::kF32, x->dims);
  const float* p = x->as<float>();
  float* q = o.as<float>();
  int64_t n = x->numel();
  switch (op) {
    case UnOp::kRelu: for (int64_t i = 0; i < n; ++i) q[i] = p[i] > 0.0f ? p[i] : 0.0f; break;
    case UnOp::kSigmoid: sigmoid_f32(p, q, n); break;
    case UnOp::kTanh: tanh_f32(p, q, n); break;
    case UnOp::kExp: exp_f32(p, q, n); break;
    case UnOp::kErf: for (int64_t i = 0; i < n; ++i) q[i] = std::erf(p[i]); break;
    case UnOp::kSqrt: for (int64_t i = 0; i < n; ++i) q[i] = std::sqrt(p[i]); break;
    case UnOp::kNeg: for (int64_t i = 0; i < n; ++i) q[i] = -p[i]; break;
    case UnOp::kGelu:
      for (int64_t i = 0; i < n; ++i) q[i] = 0.5f * p[i] * (1.0f + std::erf(p[i] * 0.70710678118654752f));
      break;
    case UnOp::kGeluTanh:
      for (int64_t i = 0; i < n; ++i) {
        float v = p[i];
        q[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      }
      break;
  }
  return Status::ok();
}

Status run_identity(const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs one input");
  RtTensor& o = *a.out[0];
  o.ensure(x->dtype, x->dims);
  if (x->bytes()) std::memcpy(o.data, x->data, x->bytes());
  return Status::ok();
}

bool onnx_dtype(int64_t to, DType* out) {
  switch (to) {
    case 1: *out = DType::kF32; return true;
    case 6: *out = DType::kI32; return true;
    case 7: *out = DType::kI64; return true;
    case 9: *out = DType::kBool; return true;
    case 11: *out = DType::kF64; return true;
    default: return false;
  }
}

double load_as_double(const RtTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32: return t.as<float>()[i];
    case DType::kI32: return t.as<int32_t>()[i];
    case DType::kI64: return double(t.as<int64_t>()[i]);
    case DType::kBool: case DType::kU8: return t.data[i];
    case DType::kI8: return reinterpret_cast<const int8_t*>(t.data)[i];
    case DType::kF64: return t.as<double>()[i];
    default: return 0.0;
  }
}

Status run_cast(DType to, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs one input");
  if (x->dtype == DType::kF16 || x->dtype == DType::kBF16) return bad_input("cast from 16-bit floats is not supported");
  RtTensor& o = *a.out[0];
  o.ensure(to, x->dims);
  int64_t n = x->numel();
  if (x->dtype == to) {
    if (n) std::memcpy(o.data, x->data, x->bytes());
    return Status::ok();
  }
  for (int64_t i = 0; i < n; ++i) {
    double v = load_as_double(*x, i);
    switch (to) {
      case DType::kF32: o.as<float>()[i] = float(v); break;
      case DType::kI32: o.as<int32_t>()[i] = int32_t(v); break;
      case DType::kI64: o.as<int64_t>()[i] = int64_t(v); break;
      case DType::kBool: o.data[i] = v != 0.0; break;
      case DType::kF64: o.as<double>()[i] = v; break;
      default: break;
    }
  }
  return Status::ok();
}

}  // namespace

void add_elementwise_ops(std::vector<OpInfo>& ops) {
  const std::pair<const char*, BinOp> bins[] = {{"Add", BinOp::kAdd}, {"Sub", BinOp::kSub},
                                                {"Mul", BinOp::kMul}, {"Div", BinOp::kDiv},
                                                {"Pow", BinOp::kPow}};
  for (auto [name, op] : bins) {
    BinOp bop = op;
    ops.push_back({name, nullptr, {"ref"}, [bop](const Graph&, const Node&, const std::string&) {
                     return make_fn_kernel([bop](const KernelArgs& a) { return run_binary(bop, a); });
                   }});
  }
  ops.push_back({"Where", nullptr, {"ref"}, [](const Graph&, const Node&, const std::string&) {
                   return make_fn_kernel(run_where);
                 }});
  const std::pair<const char*, UnOp> uns[] = {{"Relu", UnOp::kRelu}, {"Sigmoid", UnOp::kSigmoid},
                                              {"Tanh", UnOp::kTanh},  {"Erf", UnOp::kErf},
                                              {"Sqrt", UnOp::kSqrt},  {"Exp", UnOp::kExp},
                                              {"Neg", UnOp::kNeg}};
  for (auto [name, op] : uns) {
    UnOp uop = op;
    ops.push_back({name, nullptr, {"avx2"}, [uop](const Graph&, const Node&, const std::string&) {
                     return make_fn_kernel([uop](const KernelArgs& a) { return run_unary(uop, a); });
                   }});
  }
  ops.push_back({"Gelu",
                 [](const Graph&, const Node& n) {
                   auto ap = n.attr_s("approximate", "none");
                   if (ap != "none" && ap != "tanh") return unsupported(n, "approximate=" + ap + " is not supported");
                   return Status::ok();
                 },
                 {"ref"},
                 [](const Graph&, const Node& n, const std::string&) {
                   UnOp op = n.attr_s("approximate", "none") == "tanh" ? UnOp::kGeluTanh : UnOp::kGelu;
                   return make_fn_kernel([op](const KernelArgs& a) { return run_unary(op, a); });
                 }});
  ops.push_back({"Identity", nullptr, {"copy"}, [](const Graph&, const Node&, const std::string&) {
                   return make_fn_kernel(run_identity);
                 }});
  ops.push_back({"Cast",
                 [](const Graph&, const Node& n) {
                   DType t;
                   if (!onnx_dtype(n.attr_i("to", 0), &t)) {
                     return unsupported(n, "to=" + std::to_string(n.attr_i("to", 0)) + " is not supported by the cpu backend");
                   }
                   return Status::ok();
                 },
                 {"ref"},
                 [](const Graph&, const Node& n, const std::string&) {
                   DType t = DType::kF32;
                   onnx_dtype(n.attr_i("to", 1), &t);
                   return make_fn_kernel([t](const KernelArgs& a) { return run_cast(t, a); });
                 }});
}

}  // namespace ts::engine::cpu
