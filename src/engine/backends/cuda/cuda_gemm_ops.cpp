// FusedGemm, Gemm (transA 0, alpha 1, beta 1, constant B and bias) and MatMul with a constant
// 2-D W on the device: one cuBLASLt matmul with a bias (and ReLU) epilogue per node; other
// activations as one elementwise kernel after it. A MatMul whose B is computed at run time (or
// not 2-D) runs the batched FP32 kernel of cuda_matmul.h, batch dims broadcast. Layers an INT8 plan marked int8 run the
// INT8 kernel of cuda_int8.h instead; the rest of an INT8 plan runs in FP16.
#include "engine/backends/cuda/cuda_gemm.h"
#include "engine/backends/cuda/cuda_int8.h"
#include "engine/backends/cuda/cuda_matmul.h"
#include "engine/backends/cuda/cuda_ops.h"
#include "engine/quantize.h"

#include <algorithm>

namespace ts::engine::cuda {
namespace {

class GemmKernel final : public CudaKernel {
 public:
  explicit GemmKernel(std::unique_ptr<LtGemm> g) : g_(std::move(g)) {}
  bool reads_input(size_t i) const override { return i == 0; }
  int64_t weight_bytes() const override { return g_->weight_bytes(); }
  Status launch(const CudaArgs& a) const override {
    const DevTensor* x = a.input(0);
    if (!x) return bad_input("missing x");
    if (x->dtype != DType::kF32) return bad_input("x must be f32");
    if (x->dims.empty() || x->dims.back() != g_->k()) {
      return bad_input("x " + dims_str(x->dims) + " does not match W's K = " + std::to_string(g_->k()));
    }
    int64_t m = x->numel() / g_->k();
    std::vector<int64_t> od = x->dims;
    od.back() = g_->n();
    DevTensor& y = *a.out[0];
    TS_RETURN_IF_ERROR(a.env->alloc(y, DType::kF32, od));
    return g_->run(a, x->as<float>(), m, y.as<float>());
  }

 private:
  std::unique_ptr<LtGemm> g_;
};

// A layer an INT8 plan marked int8 (engine/quantize.h's attributes on the node).
class Int8GemmKernel final : public CudaKernel {
 public:
  explicit Int8GemmKernel(std::unique_ptr<Int8Gemm> g) : g_(std::move(g)) {}
  bool reads_input(size_t i) const override { return i == 0; }
  int64_t weight_bytes() const override { return g_->weight_bytes(); }
  Status launch(const CudaArgs& a) const override {
    const DevTensor* x = a.input(0);
    TS_RETURN_IF_ERROR(need_device(x, "x"));
    if (x->dtype != DType::kF32) return bad_input("x must be f32");
    if (x->dims.empty() || x->dims.back() != g_->k()) {
      return bad_input("x " + dims_str(x->dims) + " does not match W's K = " + std::to_string(g_->k()));
    }
    std::vector<int64_t> od = x->dims;
    od.back() = g_->n();
    DevTensor& y = *a.out[0];
    TS_RETURN_IF_ERROR(a.env->alloc(y, DType::kF32, od));
    return g_->run(a, x->as<float>(), x->numel() / g_->k(), y.as<float>());
  }

 private:
  std::unique_ptr<Int8Gemm> g_;
};

Result<CudaKernelPtr> make_int8_gemm(const Graph& g, const Node& node, const float* w, int64_t k, int64_t n,
                                     bool trans_b, const float* bias, CudaAct act) {
  auto it = node.attrs.find(kAttrQWScales);
  const auto* ws = it == node.attrs.end() ? nullptr : std::get_if<std::vector<float>>(&it->second);
  const float in_scale = node.attr_f(kAttrQInScale, 0.0f);
  if (!ws) return Status(StatusCode::kParseError, "node " + node.name + ": int8 layer without weight scales (corrupt plan)");
  std::vector<float> w_nk(size_t(n * k));
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t i = 0; i < k; ++i) w_nk[size_t(c * k + i)] = trans_b ? w[c * k + i] : w[i * n + c];
  }
  auto q = Int8Gemm::create(w_nk.data(), k, n, bias, act, in_scale, *ws);
  if (!q) return q.status().with_context("node " + node.name);
  (void)g;
  return CudaKernelPtr(new Int8GemmKernel(std::move(q).value()));
}

Result<CudaKernelPtr> make_gemm(const Graph& g, const Node& node, ValueId w, bool trans_b, ValueId bias, CudaAct act,
                                CudaMath p) {
  const Value& wv = g.value(w);
  auto wd = wv.const_dims();
  int64_t k = trans_b ? wd[1] : wd[0], n = trans_b ? wd[0] : wd[1];
  const float* b = bias == kNoValue ? nullptr : const_f32(g, bias);
  if (node.attr_s(kAttrQPrecision, "") == "int8") return make_int8_gemm(g, node, wv.as<float>(), k, n, trans_b, b, act);
  auto lg = LtGemm::create(wv.as<float>(), k, n, trans_b, b, act, p);
  if (!lg) return lg.status();
  return CudaKernelPtr(new GemmKernel(std::move(lg).value()));
}

bool const_2d_f32(const Graph& g, ValueId v) {
  return const_f32(g, v) && g.value(v).const_dims().size() == 2;
}

Status bias_ok(const Graph& g, const Node& n, ValueId bias, int64_t nn) {
  if (bias == kNoValue) return Status::ok();
  if (!const_f32(g, bias)) return unsupported(n, "needs a constant f32 bias on the cuda backend");
  if (shape_numel(g.value(bias).const_dims()) != nn) {
    return unsupported(n, "has a bias that is not one value per output column (not supported by the cuda backend)");
  }
  return Status::ok();
}

Status check_fused_gemm(const Graph& g, const Node& n) {
  CudaAct act;
  if (!cuda_act_from_name(n.attr_s("activation", "none"), &act)) {
    return unsupported(n, "activation=" + n.attr_s("activation", "") + " is not supported by the cuda backend");
  }
  if (n.inputs.size() < 2 || !const_2d_f32(g, n.inputs[1])) {
    return unsupported(n, "with a W computed at run time is not supported by the cuda backend");
  }
  auto wd = g.value(n.inputs[1]).const_dims();
  int64_t nn = n.attr_i("trans_b", 0) ? wd[0] : wd[1];
  return bias_ok(g, n, n.inputs.size() > 2 ? n.inputs[2] : kNoValue, nn);
}

Status check_gemm(const Graph& g, const Node& n) {
  if (n.attr_i("transA", 0) || n.attr_f("alpha", 1.0f) != 1.0f || n.attr_f("beta", 1.0f) != 1.0f) {
    return unsupported(n, "with transA, alpha or beta is not supported by the cuda backend");
  }
  if (n.inputs.size() < 2 || !const_2d_f32(g, n.inputs[1])) {
    return unsupported(n, "with a B computed at run time is not supported by the cuda backend");
  }
  auto wd = g.value(n.inputs[1]).const_dims();
  int64_t nn = n.attr_i("transB", 0) ? wd[0] : wd[1];
  return bias_ok(g, n, n.inputs.size() > 2 ? n.inputs[2] : kNoValue, nn);
}

Status check_matmul(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2) return unsupported(n, "needs two inputs");
  for (size_t i = 0; i < 2; ++i) {
    const Value& v = g.value(n.inputs[i]);
    if (v.dtype != DType::kF32) return unsupported(n, "with " + std::string(dtype_name(v.dtype)) + " inputs is not supported by the cuda backend");
    if (v.rank_known && v.shape.size() < 2 && !(i == 1 && const_2d_f32(g, n.inputs[1])))
      return unsupported(n, "with a 1-D operand is not supported by the cuda backend");
  }
  return Status::ok();
}

// MatMul of two run-time tensors: a [..., m, k] · b [..., k, n] → [..., m, n], batch dims broadcast.
Status run_batched_matmul(const CudaArgs& a) {
  const DevTensor* x = a.input(0);
  const DevTensor* w = a.input(1);
  TS_RETURN_IF_ERROR(need_device(x, "A"));
  TS_RETURN_IF_ERROR(need_device(w, "B"));
  if (x->dtype != DType::kF32 || w->dtype != DType::kF32) return bad_input("A and B must be f32");
  const size_t ra = x->dims.size(), rb = w->dims.size();
  if (ra < 2 || rb < 2) return bad_input("A and B must have rank >= 2");
  const int64_t m = x->dims[ra - 2], k = x->dims[ra - 1], n = w->dims[rb - 1];
  if (w->dims[rb - 2] != k) return bad_input("A " + dims_str(x->dims) + " and B " + dims_str(w->dims) + " do not match");
  const size_t r = std::max(ra, rb) - 2;
  if (r > size_t(kMatmulMaxBatchRank)) return bad_input("more than " + std::to_string(kMatmulMaxBatchRank) + " batch dims");
  MatmulBatch bm;
  bm.rank = int(r);
  std::vector<int64_t> od(r);
  int64_t sa = 1, sb = 1;  // matrices per step of the dim, innermost first
  for (size_t i = r; i-- > 0;) {
    const int64_t da = i + ra >= r + 2 ? x->dims[i + ra - 2 - r] : 1;
    const int64_t db = i + rb >= r + 2 ? w->dims[i + rb - 2 - r] : 1;
    if (da != db && da != 1 && db != 1)
      return bad_input("batch dims of A " + dims_str(x->dims) + " and B " + dims_str(w->dims) + " do not broadcast");
    od[i] = std::max(da, db);
    bm.dims[i] = od[i];
    bm.a_stride[i] = da == 1 ? 0 : sa;
    bm.b_stride[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  od.push_back(m);
  od.push_back(n);
  DevTensor& y = *a.out[0];
  TS_RETURN_IF_ERROR(a.env->alloc(y, DType::kF32, od));
  return launch_batched_matmul(x->as<float>(), w->as<float>(), y.as<float>(), m, n, k, bm, a.stream);
}

}  // namespace

void add_gemm_ops(std::vector<CudaOpInfo>& ops) {
  ops.push_back({"FusedGemm", check_fused_gemm, [](const Graph& g, const Node& n, CudaMath p, const std::string&) {
                   CudaAct act = CudaAct::kNone;
                   cuda_act_from_name(n.attr_s("activation", "none"), &act);
                   return make_gemm(g, n, n.inputs[1], n.attr_i("trans_b", 0) != 0,
                                    n.inputs.size() > 2 ? n.inputs[2] : kNoValue, act, p);
                 }});
  ops.push_back({"Gemm", check_gemm, [](const Graph& g, const Node& n, CudaMath p, const std::string&) {
                   return make_gemm(g, n, n.inputs[1], n.attr_i("transB", 0) != 0,
                                    n.inputs.size() > 2 ? n.inputs[2] : kNoValue, CudaAct::kNone, p);
                 }});
  ops.push_back({"MatMul", check_matmul, [](const Graph& g, const Node& n, CudaMath p, const std::string&) -> Result<CudaKernelPtr> {
                   if (const_2d_f32(g, n.inputs[1])) return make_gemm(g, n, n.inputs[1], false, kNoValue, CudaAct::kNone, p);
                   return make_fn_kernel([](const CudaArgs& a) { return run_batched_matmul(a); });
                 }});
}

}  // namespace ts::engine::cuda
