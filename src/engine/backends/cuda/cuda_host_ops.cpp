// Shape arithmetic on the host, and the data-movement ops whose parameters it computes: Shape,
// int64 Add/Sub/Mul/Div and Gather (reached from cuda_shape_ops.cpp when their inputs are host
// int64), Concat, Cast, Slice. PyTorch exports every dynamic reshape of a Transformer as
// Shape → Gather → Unsqueeze → Concat → Reshape; those few integers are computed here from the
// input dims, never copied to or from the device (a device round trip per reshape would cost a
// synchronize, and could not be captured in a CUDA graph). Device data (Slice, Concat of
// tensors) moves with strided copies / 2-D memcpys on the stream.
#include <algorithm>

#include "engine/backends/cuda/cuda_ops.h"

namespace ts::engine::cuda {
namespace {

Status set_host(DevTensor& o, std::vector<int64_t> dims, std::vector<int64_t> vals) {
  o.dtype = DType::kI64;
  o.dims = std::move(dims);
  o.data = nullptr;
  o.on_host = true;
  o.host_i64 = std::move(vals);
  return Status::ok();
}

// The values of an optional int64 input (Slice starts/ends/axes/steps).
Status read_ints(const DevTensor* t, const char* what, std::vector<int64_t>* out) {
  const std::vector<int64_t>* v = host_ints(t);
  if (!v) return bad_input(std::string(what) + " must be int64 computed from shapes or constant");
  *out = *v;
  return Status::ok();
}

Status run_shape(int64_t start, int64_t end, bool has_end, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  if (!x) return bad_input("needs an input");
  const int64_t r = int64_t(x->dims.size());
  const auto [s, e] = shape_op_range(start, has_end ? end : r, r);
  std::vector<int64_t> v(x->dims.begin() + s, x->dims.begin() + e);
  int64_t n = int64_t(v.size());
  return set_host(*a.out[0], {n}, std::move(v));
}

Status run_concat(int64_t axis, const CudaArgs& a) {
  const DevTensor* x0 = a.input(0);
  if (!x0) return bad_input("needs inputs");
  int r = int(x0->dims.size());
  int64_t ax = axis < 0 ? axis + r : axis;
  if (ax < 0 || ax >= r) return bad_input("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  std::vector<int64_t> od = x0->dims;
  od[size_t(ax)] = 0;
  bool host = true;
  for (const DevTensor* t : a.in) {
    if (!t) continue;
    if (t->dims.size() != size_t(r) || t->dtype != x0->dtype) return bad_input("inputs differ in rank or dtype");
    for (int i = 0; i < r; ++i) {
      if (i != ax && t->dims[size_t(i)] != x0->dims[size_t(i)]) return bad_input("input dims " + dims_str(t->dims) + " do not match " + dims_str(x0->dims));
    }
    od[size_t(ax)] += t->dims[size_t(ax)];
    host = host && host_ints(t) != nullptr;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < ax; ++i) outer *= od[size_t(i)];
  for (int64_t i = ax + 1; i < r; ++i) inner *= od[size_t(i)];
  const int64_t out_row = od[size_t(ax)] * inner;
  if (host) {
    std::vector<int64_t> v(size_t(outer * out_row));
    int64_t off = 0;
    for (const DevTensor* t : a.in) {
      if (!t) continue;
      const auto& src = *host_ints(t);
      int64_t row = t->dims[size_t(ax)] * inner;
      for (int64_t o = 0; o < outer; ++o) std::copy_n(src.begin() + o * row, row, v.begin() + o * out_row + off);
      off += row;
    }
    return set_host(*a.out[0], od, std::move(v));
  }
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, x0->dtype, od));
  const size_t es = dtype_size(x0->dtype);
  int64_t off = 0;
  for (const DevTensor* t : a.in) {
    if (!t) continue;
    TS_RETURN_IF_ERROR(need_device(t, "a Concat input"));
    int64_t row = t->dims[size_t(ax)] * inner;
    if (row && outer) {
      TS_CUDA(cudaMemcpy2DAsync(static_cast<char*>(o.data) + size_t(off) * es, size_t(out_row) * es, t->data,
                                size_t(row) * es, size_t(row) * es, size_t(outer), cudaMemcpyDeviceToDevice, a.stream));
    }
    off += row;
  }
  return Status::ok();
}

Status run_slice(const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  if (!x || !a.input(1) || !a.input(2)) return bad_input("needs data, starts and ends");
  std::vector<int64_t> starts, ends, axes, steps;
  TS_RETURN_IF_ERROR(read_ints(a.input(1), "starts", &starts));
  TS_RETURN_IF_ERROR(read_ints(a.input(2), "ends", &ends));
  if (starts.size() != ends.size()) return bad_input("starts and ends differ in length");
  if (a.input(3)) TS_RETURN_IF_ERROR(read_ints(a.input(3), "axes", &axes));
  else for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (a.input(4)) TS_RETURN_IF_ERROR(read_ints(a.input(4), "steps", &steps));
  else steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) return bad_input("axes/steps must match starts");
  const int r = int(x->dims.size());
  if (r > kCudaMaxRank) return bad_input("rank above 6 is not supported by the cuda backend");
  std::vector<int64_t> xs(static_cast<size_t>(r), 1), od = x->dims;
  for (int i = r - 2; i >= 0; --i) xs[size_t(i)] = xs[size_t(i) + 1] * x->dims[size_t(i) + 1];
  std::vector<int64_t> st = xs;
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = axes[i] < 0 ? axes[i] + r : axes[i];
    if (ax < 0 || ax >= r) return bad_input("axis " + std::to_string(axes[i]) + " is out of range for rank " + std::to_string(r));
    int64_t d = x->dims[size_t(ax)], step = steps[i], s = starts[i], e = ends[i], len;
    if (step == 0) return bad_input("slice step 0");
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    od[size_t(ax)] = len;
    st[size_t(ax)] = xs[size_t(ax)] * step;
    if (len > 0) base += s * xs[size_t(ax)];
  }
  if (const std::vector<int64_t>* hv = host_ints(x); hv && x->on_host) {
    std::vector<int64_t> v(size_t(shape_numel(od)));
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t rem = int64_t(i), off = base;
      for (int ax = r - 1; ax >= 0; --ax) {
        off += (rem % od[size_t(ax)]) * st[size_t(ax)];
        rem /= od[size_t(ax)];
      }
      v[i] = (*hv)[size_t(off)];
    }
    return set_host(*a.out[0], od, std::move(v));
  }
  TS_RETURN_IF_ERROR(need_device(x, "the Slice data"));
  DevTensor& o = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(o, x->dtype, od));
  StridedDims sd;
  sd.rank = std::max(r, 1);
  sd.dims[0] = 1;
  for (int i = 0; i < r; ++i) {
    sd.dims[i] = od[size_t(i)];
    sd.strides[i] = st[size_t(i)];
  }
  const size_t es = dtype_size(x->dtype);
  return launch_strided_copy(static_cast<const char*>(x->data) + size_t(base) * es, o.data, sd, int(es), a.stream);
}

bool onnx_dtype(int64_t to, DType* t) {
  switch (to) {
    case 1: *t = DType::kF32; return true;
    case 2: *t = DType::kU8; return true;
    case 3: *t = DType::kI8; return true;
    case 6: *t = DType::kI32; return true;
    case 7: *t = DType::kI64; return true;
    case 9: *t = DType::kBool; return true;
    case 10: *t = DType::kF16; return true;
    case 11: *t = DType::kF64; return true;
    case 16: *t = DType::kBF16; return true;
    default: return false;
  }
}

// Cast to the same dtype is an alias (PyTorch's Cast(int64 → int64) of shape values); other
// casts are not needed by the models served and are refused naming both dtypes.
Status run_cast(DType to, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  if (!x) return bad_input("needs an input");
  if (x->dtype != to) {
    return bad_input(std::string("Cast from ") + dtype_name(x->dtype) + " to " + dtype_name(to) +
                     " is not supported by the cuda backend");
  }
  DevTensor& o = *a.out[0];
  o.dtype = x->dtype;
  o.dims = x->dims;
  o.data = x->data;
  o.on_host = x->on_host;
  o.host_i64 = x->host_i64;
  return Status::ok();
}

}  // namespace

const std::vector<int64_t>* host_ints(const DevTensor* t) {
  if (!t || t->dtype != DType::kI64) return nullptr;
  if ((t->on_host || !t->host_i64.empty() || t->numel() == 0) && int64_t(t->host_i64.size()) == t->numel()) return &t->host_i64;
  return nullptr;
}

Status run_binary_host(CudaBinary op, const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  const DevTensor* y = a.input(1);
  const std::vector<int64_t>* xv = host_ints(x);
  const std::vector<int64_t>* yv = host_ints(y);
  if (!xv || !yv) return bad_input("int64 inputs computed on the device are not supported by the cuda backend");
  // Shape arithmetic is scalars and short vectors: broadcast a size-1 side, else equal dims.
  const DevTensor* big = x->numel() >= y->numel() ? x : y;
  if (!(x->numel() == 1 || y->numel() == 1 || x->dims == y->dims)) {
    return bad_input("int64 shapes " + dims_str(x->dims) + " and " + dims_str(y->dims) + " (only scalar or equal shapes on the host)");
  }
  std::vector<int64_t> dims = big->dims;
  if (x->dims.size() > dims.size()) dims = x->dims;
  if (y->dims.size() > dims.size()) dims = y->dims;
  const int64_t n = big->numel();
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t p = (*xv)[size_t(x->numel() == 1 ? 0 : i)], q = (*yv)[size_t(y->numel() == 1 ? 0 : i)];
    switch (op) {
      case CudaBinary::kAdd: v[size_t(i)] = p + q; break;
      case CudaBinary::kSub: v[size_t(i)] = p - q; break;
      case CudaBinary::kMul: v[size_t(i)] = p * q; break;
      case CudaBinary::kDiv:
        if (q == 0) return bad_input("int64 division by zero");
        v[size_t(i)] = p / q;
        break;
      case CudaBinary::kPow: {
        int64_t r = 1;
        for (int64_t k = 0; k < q; ++k) r *= p;
        v[size_t(i)] = r;
        break;
      }
    }
  }
  return set_host(*a.out[0], dims, std::move(v));
}

Status gather_host(const DevTensor& x, int64_t axis, const std::vector<int64_t>& idx, const std::vector<int64_t>& idx_dims,
                   DevTensor& o) {
  const std::vector<int64_t>* xv = host_ints(&x);
  if (!xv) return bad_input("Gather of host data needs int64 values");
  const int r = int(x.dims.size());
  int64_t ax = axis < 0 ? axis + r : axis;
  if (ax < 0 || ax >= r) return bad_input("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  int64_t outer = 1, inner = 1, d = x.dims[size_t(ax)];
  for (int64_t i = 0; i < ax; ++i) outer *= x.dims[size_t(i)];
  for (int64_t i = ax + 1; i < r; ++i) inner *= x.dims[size_t(i)];
  std::vector<int64_t> od(x.dims.begin(), x.dims.begin() + ax);
  od.insert(od.end(), idx_dims.begin(), idx_dims.end());
  od.insert(od.end(), x.dims.begin() + ax + 1, x.dims.end());
  std::vector<int64_t> v;
  v.reserve(size_t(outer) * idx.size() * size_t(inner));
  for (int64_t o2 = 0; o2 < outer; ++o2) {
    for (int64_t k : idx) {
      int64_t q = k < 0 ? k + d : k;
      if (q < 0 || q >= d) return bad_input("index " + std::to_string(k) + " is out of range for axis size " + std::to_string(d));
      for (int64_t i = 0; i < inner; ++i) v.push_back((*xv)[size_t((o2 * d + q) * inner + i)]);
    }
  }
  return set_host(o, od, std::move(v));
}

void add_host_ops(std::vector<CudaOpInfo>& ops) {
  ops.push_back({"Shape", nullptr, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   int64_t s = n.attr_i("start", 0), e = n.attr_i("end", 0);
                   bool he = n.has_attr("end");
                   return make_fn_kernel([s, e, he](const CudaArgs& a) { return run_shape(s, e, he, a); });
                 }});
  ops.push_back({"Concat", nullptr, [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   int64_t ax = n.attr_i("axis", 0);
                   return make_fn_kernel([ax](const CudaArgs& a) { return run_concat(ax, a); });
                 }});
  ops.push_back({"Slice", nullptr, [](const Graph&, const Node&, CudaMath, const std::string&) { return make_fn_kernel(run_slice); }});
  ops.push_back({"Cast",
                 [](const Graph&, const Node& n) {
                   DType t;
                   if (!onnx_dtype(n.attr_i("to", 0), &t)) return unsupported(n, "to=" + std::to_string(n.attr_i("to", 0)) + " is not supported by the cuda backend");
                   return Status::ok();
                 },
                 [](const Graph&, const Node& n, CudaMath, const std::string&) {
                   DType t = DType::kF32;
                   onnx_dtype(n.attr_i("to", 1), &t);
                   return make_fn_kernel([t](const CudaArgs& a) { return run_cast(t, a); });
                 }});
}

}  // namespace ts::engine::cuda
