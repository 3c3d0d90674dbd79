// Elementwise kernels: numpy-broadcast binary arithmetic (Add/Sub/Mul/Div/Pow on f32, f64, i64,
// i32, i8, u8; integers wrap like numpy; Pow also mixes a base and exponent of different types),
// Where, unary activations and math, Identity, Cast (between every engine dtype, f16/bf16 too).
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

// A double stored as T (a pow result, a Cast): integers truncate toward zero like a C cast
// (numpy's astype), NaN gives 0, and values outside int64 saturate first so the conversion is
// always defined (then wrap to T).
template <typename T>
inline T narrow_to(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return T(v);
  } else {
    if (!(v == v)) return T(0);
    if (v >= 9.2e18) return T(INT64_MAX);
    if (v <= -9.2e18) return T(INT64_MIN);
    return T(int64_t(v));
  }
}

template <typename T>
inline T apply_bin(BinOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Integers wrap like numpy (unsigned arithmetic: no signed-overflow UB); x / 0 gives 0 and
    // INT_MIN / -1 wraps, instead of a SIGFPE on bad input.
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case BinOp::kAdd: return T(U(a) + U(b));
      case BinOp::kSub: return T(U(a) - U(b));
      case BinOp::kMul: return T(U(a) * U(b));
      case BinOp::kDiv:
        if (b == T(0)) return T(0);
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return T(U(0) - U(a));
        }
        return T(a / b);
      case BinOp::kPow: return narrow_to<T>(std::pow(double(a), double(b)));
    }
    return a;
  } else {
    switch (op) {
      case BinOp::kAdd: return a + b;
      case BinOp::kSub: return a - b;
      case BinOp::kMul: return a * b;
      case BinOp::kDiv: return a / b;
      case BinOp::kPow: return T(std::pow(double(a), double(b)));
    }
    return a;
  }
}

template <typename T>
void binary_typed(BinOp op, const RtTensor& a, const RtTensor& b, RtTensor& o, const Dims& od) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  T* po = o.as<T>();
  int64_t n = od.numel();
  if (a.numel() == n && b.numel() == n) {
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
        case BinOp::kAdd: for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i]; return;
        case BinOp::kSub: for (int64_t i = 0; i < n; ++i) po[i] = pa[i] - pb[i]; return;
        case BinOp::kMul: for (int64_t i = 0; i < n; ++i) po[i] = pa[i] * pb[i]; return;
        default: break;
      }
    }
    for (int64_t i = 0; i < n; ++i) po[i] = apply_bin(op, pa[i], pb[i]);
    return;
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

bool is_pow_dtype(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kI32 || t == DType::kI64 ||
         t == DType::kI8 || t == DType::kU8;
}

double load_as_double(const RtTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32: return t.as<float>()[i];
    case DType::kI32: return t.as<int32_t>()[i];
    case DType::kI64: return double(t.as<int64_t>()[i]);
    case DType::kBool: case DType::kU8: return t.data[i];
    case DType::kI8: return reinterpret_cast<const int8_t*>(t.data)[i];
    case DType::kF64: return t.as<double>()[i];
    case DType::kF16: return f16_to_f32(t.as<uint16_t>()[i]);
    case DType::kBF16: return bf16_to_f32(t.as<uint16_t>()[i]);
  }
  return 0.0;
}

// Pow(X: T, Y: T1) with T != T1 (ONNX allows any numeric pair; the output is T): an f32 base
// with integer exponents, an integer base with float exponents. Computed in double.
template <typename T>
void pow_mixed_typed(const RtTensor& x, const RtTensor& y, RtTensor& o, const Dims& od) {
  std::array<Dims, 2> st{broadcast_strides(dims_of(x), od), broadcast_strides(dims_of(y), od)};
  T* po = o.as<T>();
  const T* px = x.as<T>();
  nd_loop<2>(od, st, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t cnt,
                         const std::array<int64_t, 2>& s) {
    for (int64_t i = 0; i < cnt; ++i) {
      double e = load_as_double(y, off[1] + i * s[1]);
      po[oo + i] = narrow_to<T>(std::pow(double(px[off[0] + i * s[0]]), e));
    }
  });
}

Status run_pow_mixed(const RtTensor& x, const RtTensor& y, RtTensor& o, const Dims& od) {
  if (!is_pow_dtype(x.dtype) || !is_pow_dtype(y.dtype)) {
    return bad_input(std::string("Pow of ") + dtype_name(x.dtype) + " by " + dtype_name(y.dtype) +
                     " is not supported (f32, f64, i64, i32, i8, u8)");
  }
  if (x.dtype == DType::kF32 && y.numel() == 1) {  // the exporters' Pow(x, 2) with an int constant
    double e = load_as_double(y, 0);
    o.ensure(DType::kF32, od.span());
    const float* px = x.as<float>();
    float* po = o.as<float>();
    if (x.numel() == od.numel()) {
      for (int64_t i = 0; i < od.numel(); ++i) po[i] = e == 2.0 ? px[i] * px[i] : float(std::pow(px[i], e));
      return Status::ok();
    }
  }
  o.ensure(x.dtype, od.span());
  switch (x.dtype) {
    case DType::kF32: pow_mixed_typed<float>(x, y, o, od); break;
    case DType::kF64: pow_mixed_typed<double>(x, y, o, od); break;
    case DType::kI64: pow_mixed_typed<int64_t>(x, y, o, od); break;
    case DType::kI32: pow_mixed_typed<int32_t>(x, y, o, od); break;
    case DType::kI8: pow_mixed_typed<int8_t>(x, y, o, od); break;
    case DType::kU8: pow_mixed_typed<uint8_t>(x, y, o, od); break;
    default: break;
  }
  return Status::ok();
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
  if (x->dtype != y->dtype) {
    if (op == BinOp::kPow) return run_pow_mixed(*x, *y, o, od);
    return bad_input(std::string("input dtypes differ: ") + dtype_name(x->dtype) + " and " + dtype_name(y->dtype));
  }
  o.ensure(x->dtype, od.span());
  switch (x->dtype) {
    case DType::kF32:
      if (op == BinOp::kPow && y->numel() == 1 && y->as<float>()[0] == 2.0f && x->numel() == od.numel()) {
        const float* px = x->as<float>();
        float* po = o.as<float>();
        for (int64_t i = 0; i < od.numel(); ++i) po[i] = px[i] * px[i];
        return Status::ok();
      }
      binary_typed<float>(op, *x, *y, o, od);
      return Status::ok();
    case DType::kF64: binary_typed<double>(op, *x, *y, o, od); return Status::ok();
    case DType::kI64: binary_typed<int64_t>(op, *x, *y, o, od); return Status::ok();
    case DType::kI32: binary_typed<int32_t>(op, *x, *y, o, od); return Status::ok();
    case DType::kI8: binary_typed<int8_t>(op, *x, *y, o, od); return Status::ok();
    case DType::kU8: binary_typed<uint8_t>(op, *x, *y, o, od); return Status::ok();
    default:
      return bad_input(std::string("dtype ") + dtype_name(x->dtype) +
                       " is not supported (f32, f64, i64, i32, i8, u8)");
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
    case 2: *out = DType::kU8; return true;
    case 3: *out = DType::kI8; return true;
    case 6: *out = DType::kI32; return true;
    case 7: *out = DType::kI64; return true;
    case 9: *out = DType::kBool; return true;
    case 10: *out = DType::kF16; return true;
    case 11: *out = DType::kF64; return true;
    case 16: *out = DType::kBF16; return true;
    default: return false;
  }
}

Status run_cast(DType to, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  if (!x) return bad_input("needs one input");
  RtTensor& o = *a.out[0];
  o.ensure(to, x->dims);
  int64_t n = x->numel();
  if (x->dtype == to) {
    if (n) std::memcpy(o.data, x->data, x->bytes());
    return Status::ok();
  }
  // PERF NOTE: the common f32 <-> f16 pair skips the double round trip of the generic loop.
  if (x->dtype == DType::kF32 && to == DType::kF16) {
    for (int64_t i = 0; i < n; ++i) o.as<uint16_t>()[i] = f16_from_f64(x->as<float>()[i]);
    return Status::ok();
  }
  if (x->dtype == DType::kF16 && to == DType::kF32) {
    for (int64_t i = 0; i < n; ++i) o.as<float>()[i] = f16_to_f32(x->as<uint16_t>()[i]);
    return Status::ok();
  }
  auto is_int = [](DType t) {
    return t == DType::kI64 || t == DType::kI32 || t == DType::kI8 || t == DType::kU8 || t == DType::kBool;
  };
  if (is_int(x->dtype) && is_int(to) && to != DType::kBool) {  // exact, wrapping like numpy
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = x->dtype == DType::kI64 ? x->as<int64_t>()[i]
                : x->dtype == DType::kI32 ? x->as<int32_t>()[i]
                : x->dtype == DType::kI8 ? reinterpret_cast<const int8_t*>(x->data)[i]
                                         : int64_t(x->data[i]);
      switch (to) {
        case DType::kI64: o.as<int64_t>()[i] = v; break;
        case DType::kI32: o.as<int32_t>()[i] = int32_t(v); break;
        case DType::kI8: reinterpret_cast<int8_t*>(o.data)[i] = int8_t(v); break;
        default: o.data[i] = uint8_t(v); break;
      }
    }
    return Status::ok();
  }
  for (int64_t i = 0; i < n; ++i) {
    double v = load_as_double(*x, i);
    switch (to) {
      case DType::kF32: o.as<float>()[i] = float(v); break;
      case DType::kF64: o.as<double>()[i] = v; break;
      case DType::kF16: o.as<uint16_t>()[i] = f16_from_f64(v); break;
      case DType::kBF16: o.as<uint16_t>()[i] = bf16_from_f32(float(v)); break;
      case DType::kI32: o.as<int32_t>()[i] = narrow_to<int32_t>(v); break;
      case DType::kI64: o.as<int64_t>()[i] = narrow_to<int64_t>(v); break;
      case DType::kI8: reinterpret_cast<int8_t*>(o.data)[i] = narrow_to<int8_t>(v); break;
      case DType::kU8: o.data[i] = narrow_to<uint8_t>(v); break;
      case DType::kBool: o.data[i] = v != 0.0; break;
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
