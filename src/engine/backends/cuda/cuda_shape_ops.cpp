// Shape, data-movement and elementwise nodes on the device. Reshape (constant shape), Flatten,
// Squeeze, Unsqueeze and Identity alias their input (no copy, no launch); Transpose is one
// strided copy; Gather takes constant indices; unary/binary ops are one kernel each with numpy
// broadcasting; Softmax over the last axis.
#include <algorithm>

#include "engine/backends/cuda/cuda_ops.h"

namespace ts::engine::cuda {
namespace {

template <typename F>
class FnCudaKernel final : public CudaKernel {
 public:
  FnCudaKernel(F f, std::vector<bool> device_inputs) : f_(std::move(f)), device_inputs_(std::move(device_inputs)) {}
  Status launch(const CudaArgs& a) const override { return f_(a); }
  bool reads_input(size_t i) const override { return i < device_inputs_.size() ? bool(device_inputs_[i]) : true; }

 private:
  F f_;
  std::vector<bool> device_inputs_;
};
template <typename F>
Result<CudaKernelPtr> make_fn(F f, std::vector<bool> device_inputs = {}) {
  return CudaKernelPtr(new FnCudaKernel<F>(std::move(f), std::move(device_inputs)));
}

// Output aliases input 0 with new dims.
Status alias(const CudaArgs& a, const std::vector<int64_t>& dims) {
  const DevTensor* x = a.input(0);
  if (shape_numel(dims) != x->numel()) {
    return bad_input("cannot reshape " + dims_str(x->dims) + " to " + dims_str(dims));
  }
  DevTensor& o = *a.out[0];
  o.dtype = x->dtype;
  o.dims = dims;
  o.data = x->data;
  o.on_host = x->on_host;
  o.host_i64 = x->host_i64;
  return Status::ok();
}

std::vector<int64_t> const_ints(const Graph& g, ValueId v) {
  if (v == kNoValue || !is_const(g, v)) return {};
  return constant_as_i64(g.value(v));
}

Status run_squeeze(const std::vector<int64_t>& axes_in, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  int r = int(x->dims.size());
  std::vector<bool> drop(size_t(r), false);
  if (axes_in.empty()) {
    for (int i = 0; i < r; ++i) drop[size_t(i)] = x->dims[size_t(i)] == 1;
  }
  for (int64_t ax : axes_in) {
    int64_t q = ax < 0 ? ax + r : ax;
    if (q < 0 || q >= r) return bad_input("axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(r));
    if (x->dims[size_t(q)] != 1) return bad_input("cannot squeeze axis " + std::to_string(ax) + " of " + dims_str(x->dims));
    drop[size_t(q)] = true;
  }
  std::vector<int64_t> od;
  for (int i = 0; i < r; ++i) if (!drop[size_t(i)]) od.push_back(x->dims[size_t(i)]);
  return alias(a, od);
}

Status run_unsqueeze(const std::vector<int64_t>& axes, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  int r = int(x->dims.size() + axes.size());
  std::vector<int> ins(size_t(r), 0);
  for (int64_t ax : axes) {
    int64_t q = ax < 0 ? ax + r : ax;
    if (q < 0 || q >= r || ins[size_t(q)]) return bad_input("invalid unsqueeze axis " + std::to_string(ax));
    ins[size_t(q)] = 1;
  }
  std::vector<int64_t> od;
  size_t k = 0;
  for (int i = 0; i < r; ++i) od.push_back(ins[size_t(i)] ? 1 : x->dims[k++]);
  return alias(a, od);
}

Status run_reshape(const std::vector<int64_t>& shape, bool allowzero, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  std::vector<int64_t> od;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == 0 && !allowzero) {
      if (i >= x->dims.size()) return bad_input("shape has 0 at axis " + std::to_string(i) + " beyond the input rank");
      v = x->dims[i];
    }
    if (v == -1) {
      if (infer >= 0) return bad_input("shape has more than one -1");
      infer = int(i);
      od.push_back(1);
      continue;
    }
    if (v < 0) return bad_input("shape has a negative dim");
    od.push_back(v);
    known *= v;
  }
  if (infer >= 0) {
    if (known == 0 || x->numel() % known != 0) return bad_input("cannot infer -1 reshaping " + dims_str(x->dims));
    od[size_t(infer)] = x->numel() / known;
  }
  return alias(a, od);
}

Status run_transpose(const std::vector<int64_t>& perm_attr, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  TS_RETURN_IF_ERROR(need_device(x, "the Transpose input"));
  int r = int(x->dims.size());
  if (r > kCudaMaxRank) return bad_input("rank above 6 is not supported by the cuda backend");
  if (!perm_attr.empty() && int(perm_attr.size()) != r) return bad_input("perm length does not match rank " + std::to_string(r));
  int64_t xs[kCudaMaxRank];
  int64_t st = 1;
  for (int i = r - 1; i >= 0; --i) {
    xs[i] = st;
    st *= x->dims[size_t(i)];
  }
  StridedDims d;
  d.rank = r;
  std::vector<int64_t> od;
  std::vector<bool> seen(size_t(r), false);
  for (int i = 0; i < r; ++i) {
    int64_t p = perm_attr.empty() ? r - 1 - i : perm_attr[size_t(i)];
    if (p < 0) p += r;
    if (p < 0 || p >= r || seen[size_t(p)]) return bad_input("invalid perm");
    seen[size_t(p)] = true;
    od.push_back(x->dims[size_t(p)]);
    d.dims[i] = x->dims[size_t(p)];
    d.strides[i] = xs[p];
  }
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, x->dtype, od));
  return launch_strided_copy(x->data, o.data, d, int(dtype_size(x->dtype)), a.stream);
}

class GatherKernel final : public CudaKernel {
 public:
  GatherKernel(int64_t axis, std::vector<int64_t> idx, std::vector<int64_t> idx_dims)
      : axis_(axis), idx_(std::move(idx)), idx_dims_(std::move(idx_dims)) {}
  Status init() { return idx_dev_.upload(idx_.data(), idx_.size() * sizeof(int64_t)); }
  bool reads_input(size_t i) const override { return i == 0; }
  Status launch(const CudaArgs& a) const override {
    const DevTensor* x = a.input(0);
    int r = int(x->dims.size());
    if (r == 0) return bad_input("Gather from a scalar");
    int64_t ax = axis_ < 0 ? axis_ + r : axis_;
    if (ax < 0 || ax >= r) return bad_input("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(r));
    if (x->on_host) return gather_host(*x, axis_, idx_, idx_dims_, *a.out[0]);
    int64_t d = x->dims[size_t(ax)];
    for (int64_t i : idx_) {
      int64_t q = i < 0 ? i + d : i;
      if (q < 0 || q >= d) return bad_input("index " + std::to_string(i) + " is out of range for axis size " + std::to_string(d));
    }
    std::vector<int64_t> od(x->dims.begin(), x->dims.begin() + ax);
    od.insert(od.end(), idx_dims_.begin(), idx_dims_.end());
    od.insert(od.end(), x->dims.begin() + ax + 1, x->dims.end());
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < ax; ++i) outer *= x->dims[size_t(i)];
    for (int64_t i = ax + 1; i < r; ++i) inner *= x->dims[size_t(i)];
    DevTensor& o = *a.out[0];
    TS_RETURN_IF_ERROR(a.env->alloc(o, x->dtype, od));
    return launch_gather(x->data, idx_dev_.as<int64_t>(), o.data, outer, d, int64_t(idx_.size()), inner,
                         int(dtype_size(x->dtype)), a.stream);
  }

 private:
  int64_t axis_;
  std::vector<int64_t> idx_, idx_dims_;
  DeviceBuffer idx_dev_;
};

Status run_unary(CudaUnary op, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  TS_RETURN_IF_ERROR(need_device(x, "the input"));
  if (!x || x->dtype != DType::kF32) return bad_input("needs an f32 input");
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, DType::kF32, x->dims));
  return launch_unary(x->as<float>(), o.as<float>(), x->numel(), op, a.stream);
}

Status run_binary(CudaBinary op, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  const DevTensor* y = a.input(1);
  if (x && y && x->dtype == DType::kI64 && y->dtype == DType::kI64) return run_binary_host(op, a);
  TS_RETURN_IF_ERROR(need_device(x, "input A"));
  TS_RETURN_IF_ERROR(need_device(y, "input B"));
  if (!x || !y || x->dtype != DType::kF32 || y->dtype != DType::kF32) return bad_input("needs two f32 inputs");
  int r = int(std::max(x->dims.size(), y->dims.size()));
  if (r > kCudaMaxRank) return bad_input("rank above 6 is not supported by the cuda backend");
  StridedDims sa, sb;
  sa.rank = sb.rank = std::max(r, 1);
  std::vector<int64_t> od(size_t(std::max(r, 1)), 1);
  auto fill = [&](const DevTensor& t, StridedDims& s) {
    int64_t st = 1;
    for (int i = r - 1; i >= 0; --i) {
      int ti = i - (r - int(t.dims.size()));
      int64_t dt = ti >= 0 ? t.dims[size_t(ti)] : 1;
      s.strides[i] = dt == 1 ? 0 : st;
      st *= dt;
    }
  };
  for (int i = 0; i < r; ++i) {
    int xi = i - (r - int(x->dims.size())), yi = i - (r - int(y->dims.size()));
    int64_t dx = xi >= 0 ? x->dims[size_t(xi)] : 1, dy = yi >= 0 ? y->dims[size_t(yi)] : 1;
    if (dx != dy && dx != 1 && dy != 1) return bad_input("shapes " + dims_str(x->dims) + " and " + dims_str(y->dims) + " do not broadcast");
    od[size_t(i)] = dx == 1 ? dy : dx;
  }
  if (r == 0) od.clear();
  fill(*x, sa);
  fill(*y, sb);
  for (int i = 0; i < sa.rank; ++i) sa.dims[i] = sb.dims[i] = r == 0 ? 1 : od[size_t(i)];
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, DType::kF32, od));
  return launch_binary(x->as<float>(), y->as<float>(), o.as<float>(), sa, sb, op, a.stream);
}

Status run_softmax(int64_t axis, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  if (!x || x->dtype != DType::kF32) return bad_input("needs an f32 input");
  int r = int(x->dims.size());
  int64_t ax = axis < 0 ? axis + r : axis;
  if (r == 0 || ax != r - 1) return bad_input("softmax over a non-last axis is not supported by the cuda backend yet");
  int64_t cols = x->dims.back();
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, DType::kF32, x->dims));
  return launch_softmax(x->as<float>(), o.as<float>(), cols ? x->numel() / cols : 0, cols, a.stream);
}

Status needs_const_input(const Graph& g, const Node& n, size_t i, const char* what) {
  if (n.inputs.size() > i && n.inputs[i] != kNoValue && !is_const(g, n.inputs[i])) {
    return unsupported(n, std::string("with a ") + what + " computed at run time is not supported by the cuda backend");
  }
  return Status::ok();
}

}  // namespace

void add_shape_ops(std::vector<CudaOpInfo>& ops) {
  ops.push_back({"Transpose", nullptr, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   auto perm = n.attr_ints("perm");
                   return make_fn([perm](const CudaArgs& a) { return run_transpose(perm, a); });
                 }});
  // The shape: a constant, or int64 shape arithmetic computed on the host (cuda_host_ops.cpp).
  ops.push_back({"Reshape",
                 [](const Graph&, const Node& n) {
                   if (n.inputs.size() < 2) return unsupported(n, "needs data and shape");
                   return Status::ok();
                 },
                 [](const Graph& g, const Node& n, CudaMath, const std::string&) -> Result<CudaKernelPtr> {
                   bool az = n.attr_i("allowzero", 0) != 0;
                   if (is_const(g, n.inputs[1])) {
                     auto shape = const_ints(g, n.inputs[1]);
                     return make_fn([shape, az](const CudaArgs& a) { return run_reshape(shape, az, a); }, {true, false});
                   }
                   return make_fn([az](const CudaArgs& a) {
                     const std::vector<int64_t>* shape = host_ints(a.input(1));
                     if (!shape) return bad_input("the shape must be int64 computed from shapes on the host or constant");
                     return run_reshape(*shape, az, a);
                   });
                 }});
  ops.push_back({"Flatten", nullptr, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   int64_t ax = n.attr_i("axis", 1);
                   return make_fn([ax](const CudaArgs& a) {
                     int r = int(a.input(0)->dims.size());
                     int64_t q = ax < 0 ? ax + r : ax;
                     if (q < 0 || q > r) return bad_input("axis out of range");
                     std::vector<int64_t> od{1, 1};
                     for (int i = 0; i < r; ++i) od[i < q ? 0 : 1] *= a.input(0)->dims[size_t(i)];
                     return alias(a, od);
                   });
                 }});
  ops.push_back({"Squeeze", [](const Graph& g, const Node& n) { return needs_const_input(g, n, 1, "axes"); },
                 [](const Graph& g, const Node& n, CudaMath, const std::string&) {
                   auto axes = n.attr_ints("axes");
                   if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) axes = const_ints(g, n.inputs[1]);
                   return make_fn([axes](const CudaArgs& a) { return run_squeeze(axes, a); }, {true, false});
                 }});
  ops.push_back({"Unsqueeze", [](const Graph& g, const Node& n) { return needs_const_input(g, n, 1, "axes"); },
                 [](const Graph& g, const Node& n, CudaMath, const std::string&) {
                   auto axes = n.attr_ints("axes");
                   if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) axes = const_ints(g, n.inputs[1]);
                   return make_fn([axes](const CudaArgs& a) { return run_unsqueeze(axes, a); }, {true, false});
                 }});
  ops.push_back({"Identity", nullptr, [](const Graph&, const Node&, CudaMath, const std::string&) {
                   return make_fn([](const CudaArgs& a) { return alias(a, a.input(0)->dims); });
                 }});
  ops.push_back({"Gather",
                 [](const Graph& g, const Node& n) {
                   if (n.inputs.size() < 2) return unsupported(n, "needs data and indices");
                   return needs_const_input(g, n, 1, "indices");
                 },
                 [](const Graph& g, const Node& n, CudaMath, const std::string&) -> Result<CudaKernelPtr> {
                   const Value& iv = g.value(n.inputs[1]);
                   auto k = std::make_unique<GatherKernel>(n.attr_i("axis", 0), constant_as_i64(iv), iv.const_dims());
                   TS_RETURN_IF_ERROR(k->init());
                   return CudaKernelPtr(std::move(k));
                 }});
}

void add_elementwise_ops(std::vector<CudaOpInfo>& ops) {
  const std::pair<const char*, CudaUnary> uns[] = {
      {"Relu", CudaUnary::kRelu}, {"Sigmoid", CudaUnary::kSigmoid}, {"Tanh", CudaUnary::kTanh},
      {"Erf", CudaUnary::kErf},   {"Sqrt", CudaUnary::kSqrt},       {"Exp", CudaUnary::kExp},
      {"Neg", CudaUnary::kNeg},   {"Abs", CudaUnary::kAbs}};
  for (auto [name, op] : uns) {
    ops.push_back({name, nullptr, [op](const Graph&, const Node&, CudaMath, const std::string&) {
                     return make_fn([op](const CudaArgs& a) { return run_unary(op, a); });
                   }});
  }
  ops.push_back({"Gelu",
                 [](const Graph&, const Node& n) {
                   if (n.attr_s("approximate", "none") != "none") return unsupported(n, "approximate=tanh is not supported by the cuda backend");
                   return Status::ok();
                 },
                 [](const Graph&, const Node&, CudaMath, const std::string&) {
                   return make_fn([](const CudaArgs& a) { return run_unary(CudaUnary::kGelu, a); });
                 }});
  const std::pair<const char*, CudaBinary> bins[] = {{"Add", CudaBinary::kAdd}, {"Sub", CudaBinary::kSub},
                                                     {"Mul", CudaBinary::kMul}, {"Div", CudaBinary::kDiv},
                                                     {"Pow", CudaBinary::kPow}};
  for (auto [name, op] : bins) {
    ops.push_back({name, nullptr, [op](const Graph&, const Node&, CudaMath, const std::string&) {
                     return make_fn([op](const CudaArgs& a) { return run_binary(op, a); });
                   }});
  }
  ops.push_back({"Softmax", nullptr, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   int64_t ax = n.attr_i("axis", -1);
                   return make_fn([ax](const CudaArgs& a) { return run_softmax(ax, a); });
                 }});
}

}  // namespace ts::engine::cuda
