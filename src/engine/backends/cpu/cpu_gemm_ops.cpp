// GEMM kernels: FusedGemm (x·W + bias → activation), Gemm, MatMul (batched, numpy broadcast).
// Tactics for a constant weight matrix: "avx2" (own packed-panel GEMM, epilogue in registers)
// and "onednn" (oneDNN matmul with an eltwise post-op); runtime B operands use "avx2".
#include <cstring>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>

#include "engine/backends/cpu/cpu_const_gemm.h"
#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {
namespace {

class ConstGemmKernel : public Kernel {
 public:
  explicit ConstGemmKernel(ConstGemm g) : g_(std::move(g)) {}
  std::unique_ptr<KernelState> make_state() const override {
    if (!g_.onednn()) return nullptr;
    return std::make_unique<DnnlGemmState>();
  }

 protected:
  // x viewed as rows of k; output dims = x dims with the last replaced by n.
  Status run_rows(const RtTensor& x, RtTensor& out, const KernelArgs& a) const {
    if (x.dtype != DType::kF32) return bad_input("x must be f32");
    if (x.dims.empty() || x.dims.back() != g_.k() || !rank_ok(x)) {
      return bad_input("x shape " + dims_str(x.dims) + " does not end in K=" + std::to_string(g_.k()));
    }
    Dims od = dims_of(x);
    od[od.n - 1] = g_.n();
    out.ensure(DType::kF32, od.span());
    return g_.run(x.as<float>(), x.numel() / g_.k(), out.as<float>(), a.state);
  }
  ConstGemm g_;
};

class FusedGemmKernel final : public ConstGemmKernel {
 public:
  using ConstGemmKernel::ConstGemmKernel;
  Status run(const KernelArgs& a) const override {
    if (!a.input(0)) return bad_input("missing x");
    return run_rows(*a.input(0), *a.out[0], a);
  }
};

// C = A·B for runtime A and B of rank ≥ 2 with numpy batch broadcasting (B packed per batch).
Status run_matmul_general(const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* y = a.input(1);
  if (!x || !y) return bad_input("needs two inputs");
  if (x->dtype != DType::kF32 || y->dtype != DType::kF32) return bad_input("f32 only");
  if (!rank_ok(*x) || !rank_ok(*y)) return bad_input("rank above 8");
  Dims xd = dims_of(*x), yd = dims_of(*y);
  bool x1 = xd.n == 1, y1 = yd.n == 1;
  if (xd.n == 0 || yd.n == 0) return bad_input("MatMul of a scalar");
  if (x1) { xd = Dims::of(std::vector<int64_t>{1, xd[0]}); }
  if (y1) { yd = Dims::of(std::vector<int64_t>{yd[0], 1}); }
  int64_t m = xd[xd.n - 2], k = xd[xd.n - 1], k2 = yd[yd.n - 2], n = yd[yd.n - 1];
  if (k != k2) return bad_input("shapes " + dims_str(x->dims) + " and " + dims_str(y->dims) + " do not multiply");
  Dims xb, yb, ob;
  xb.n = xd.n - 2; yb.n = yd.n - 2;
  for (int i = 0; i < xb.n; ++i) xb[i] = xd[i];
  for (int i = 0; i < yb.n; ++i) yb[i] = yd[i];
  if (!broadcast_dims(xb, yb, &ob)) return bad_input("batch dims do not broadcast");
  Dims od = ob;
  if (!x1) od.push(m);
  if (!y1) od.push(n);
  RtTensor& o = *a.out[0];
  o.ensure(DType::kF32, od.span());
  int64_t batches = ob.numel();
  Dims sx = broadcast_strides(xb, ob), sy = broadcast_strides(yb, ob);
  float* panels = static_cast<float*>(a.scratch->get(size_t(round_up8(n) * k) * sizeof(float)));
  std::array<int64_t, kMaxRank> idx{};
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi, offx = 0, offy = 0;
    for (int i = ob.n - 1; i >= 0; --i) {
      idx[size_t(i)] = rem % ob[i];
      rem /= ob[i];
      offx += idx[size_t(i)] * sx[i];
      offy += idx[size_t(i)] * sy[i];
    }
    pack_b_into(y->as<float>() + offy * k * n, k, n, false, n, panels);
    gemm_packed(x->as<float>() + offx * m * k, k, m, panels, k, n, nullptr, o.as<float>() + bi * m * n,
                n, Act::kNone);
  }
  return Status::ok();
}

class MatMulConstKernel final : public ConstGemmKernel {
 public:
  using ConstGemmKernel::ConstGemmKernel;
  Status run(const KernelArgs& a) const override {
    const RtTensor* x = a.input(0);
    if (!x) return bad_input("missing A");
    if (x->dims.size() < 2) return run_matmul_general(a);
    return run_rows(*x, *a.out[0], a);
  }
};

// General Gemm: transA/transB, alpha, beta, C broadcast to [M,N].
Status run_gemm_general(const Node& n, const KernelArgs& a) {
  const RtTensor* x = a.input(0);
  const RtTensor* y = a.input(1);
  const RtTensor* c = a.input(2);
  if (!x || !y) return bad_input("needs A and B");
  if (x->dims.size() != 2 || y->dims.size() != 2) return bad_input("Gemm needs 2-D A and B");
  if (x->dtype != DType::kF32 || y->dtype != DType::kF32) return bad_input("f32 only");
  bool ta = n.attr_i("transA", 0) != 0, tb = n.attr_i("transB", 0) != 0;
  float alpha = n.attr_f("alpha", 1.0f), beta = n.attr_f("beta", 1.0f);
  int64_t m = ta ? x->dims[1] : x->dims[0], k = ta ? x->dims[0] : x->dims[1];
  int64_t kb = tb ? y->dims[1] : y->dims[0], nn = tb ? y->dims[0] : y->dims[1];
  if (k != kb) return bad_input("shapes " + dims_str(x->dims) + " and " + dims_str(y->dims) + " do not multiply");
  RtTensor& o = *a.out[0];
  int64_t od[2] = {m, nn};
  o.ensure(DType::kF32, od);
  size_t pb = size_t(round_up8(nn) * k), pa = ta ? size_t(m * k) : 0;
  float* panels = static_cast<float*>(a.scratch->get((pb + pa) * sizeof(float)));
  pack_b_into(y->as<float>(), k, nn, tb, y->dims[1], panels);
  const float* ap = x->as<float>();
  if (ta) {
    float* t = panels + pb;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) t[i * k + kk] = ap[kk * m + i];
    ap = t;
  }
  float* op = o.as<float>();
  gemm_packed(ap, k, m, panels, k, nn, nullptr, op, nn, Act::kNone);
  if (alpha != 1.0f)
    for (int64_t i = 0; i < m * nn; ++i) op[i] *= alpha;
  if (c && beta != 0.0f) {
    if (c->dtype != DType::kF32 || !rank_ok(*c)) return bad_input("C must be f32");
    Dims out2 = Dims::of(od), bd;
    if (!broadcast_dims(dims_of(*c), out2, &bd) || bd.n != 2 || bd[0] != m || bd[1] != nn) {
      return bad_input("C shape " + dims_str(c->dims) + " does not broadcast to [M,N]");
    }
    Dims s = broadcast_strides(dims_of(*c), out2);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) op[i * nn + j] += beta * c->as<float>()[i * s[0] + j * s[1]];
  }
  return Status::ok();
}

const float* const_f32(const Graph& g, ValueId v) {
  return is_const(g, v) && g.value(v).dtype == DType::kF32 ? g.value(v).as<float>() : nullptr;
}

// Gemm that is A·B + bias[N] with constant B: the fast path.
bool gemm_is_simple(const Graph& g, const Node& n) {
  if (n.attr_i("transA", 0) || n.attr_f("alpha", 1.0f) != 1.0f) return false;
  if (n.inputs.size() < 2 || !const_f32(g, n.inputs[1]) || g.value(n.inputs[1]).shape.size() != 2) return false;
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    const Value& c = g.value(n.inputs[2]);
    int64_t nn = g.value(n.inputs[1]).shape[n.attr_i("transB", 0) ? 0 : 1].value;
    if (!c.is_constant || c.dtype != DType::kF32 || n.attr_f("beta", 1.0f) != 1.0f) return false;
    auto cd = c.const_dims();
    if (!(cd.size() == 1 && cd[0] == nn) && !(cd.size() == 2 && cd[0] == 1 && cd[1] == nn)) return false;
  }
  return true;
}

Status check_fused_gemm(const Graph& g, const Node& n) {
  Act act;
  if (!act_from_name(n.attr_s("activation", "none"), &act)) {
    return unsupported(n, "activation=" + n.attr_s("activation", "") + " is not supported by the cpu backend");
  }
  if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) return unsupported(n, "needs x and W");
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !const_f32(g, n.inputs[2])) {
    return unsupported(n, "needs a constant f32 bias on the cpu backend");
  }
  return Status::ok();
}

ConstGemm make_const_gemm(const Graph& g, const Node& n, bool trans_b, Act act, const std::string& tactic) {
  const Value& w = g.value(n.inputs[1]);
  auto wd = w.const_dims();
  int64_t k = trans_b ? wd[1] : wd[0], nn = trans_b ? wd[0] : wd[1];
  const float* bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue ? const_f32(g, n.inputs[2]) : nullptr;
  return ConstGemm(w.as<float>(), k, nn, trans_b, bias, act, tactic == "onednn");
}

bool fused_gemm_const(const Graph& g, const Node& n) {
  return const_f32(g, n.inputs[1]) && g.value(n.inputs[1]).shape.size() == 2;
}

// FusedGemm whose W is computed at run time: MatMul (transposing W first if trans_b), then
// bias and activation.
Result<KernelPtr> make_runtime_fused(const Graph& g, const Node& n, Act act) {
  const float* bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue ? const_f32(g, n.inputs[2]) : nullptr;
  std::vector<float> b;
  if (bias) b.assign(bias, bias + shape_numel(g.value(n.inputs[2]).const_dims()));
  bool tb = n.attr_i("trans_b", 0) != 0;
  return make_fn_kernel([b, act, tb](const KernelArgs& a) -> Status {
    const RtTensor* w = a.input(1);
    if (!w || w->dtype != DType::kF32 || w->dims.size() != 2) return bad_input("W must be f32 2-D");
    RtTensor wt;
    const RtTensor* rhs = w;
    if (tb) {
      int64_t d[2] = {w->dims[1], w->dims[0]};
      wt.ensure(DType::kF32, d);
      for (int64_t i = 0; i < d[0]; ++i)
        for (int64_t j = 0; j < d[1]; ++j) wt.as<float>()[i * d[1] + j] = w->as<float>()[j * d[0] + i];
      rhs = &wt;
    }
    const RtTensor* ins[2] = {a.input(0), rhs};
    KernelArgs inner{ins, a.out, a.scratch, nullptr};
    TS_RETURN_IF_ERROR(run_matmul_general(inner));
    RtTensor& o = *a.out[0];
    int64_t nn = o.dims.empty() ? 1 : o.dims.back();
    if (!b.empty() && int64_t(b.size()) != nn) return bad_input("bias size does not match N");
    float* p = o.as<float>();
    for (int64_t r = 0; r < o.numel() / std::max<int64_t>(nn, 1); ++r) {
      if (!b.empty()) for (int64_t j = 0; j < nn; ++j) p[r * nn + j] += b[size_t(j)];
      apply_act(p + r * nn, nn, act);
    }
    return Status::ok();
  });
}

}  // namespace

void add_gemm_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"FusedGemm", check_fused_gemm, {"avx2", "onednn"},
                 [](const Graph& g, const Node& n, const std::string& t) -> Result<KernelPtr> {
                   Act act = Act::kNone;
                   act_from_name(n.attr_s("activation", "none"), &act);
                   if (!fused_gemm_const(g, n)) return make_runtime_fused(g, n, act);
                   return KernelPtr(new FusedGemmKernel(make_const_gemm(g, n, n.attr_i("trans_b", 0) != 0, act, t)));
                 }});
  ops.push_back({"Gemm", nullptr, {"avx2", "onednn"},
                 [](const Graph& g, const Node& n, const std::string& t) -> Result<KernelPtr> {
                   if (gemm_is_simple(g, n)) {
                     return KernelPtr(new FusedGemmKernel(make_const_gemm(g, n, n.attr_i("transB", 0) != 0, Act::kNone, t)));
                   }
                   Node copy = n;
                   return make_fn_kernel([copy](const KernelArgs& a) { return run_gemm_general(copy, a); });
                 }});
  ops.push_back({"MatMul", nullptr, {"avx2", "onednn"},
                 [](const Graph& g, const Node& n, const std::string& t) -> Result<KernelPtr> {
                   if (n.inputs.size() == 2 && const_f32(g, n.inputs[1]) && g.value(n.inputs[1]).shape.size() == 2) {
                     return KernelPtr(new MatMulConstKernel(make_const_gemm(g, n, false, Act::kNone, t)));
                   }
                   return make_fn_kernel(run_matmul_general);
                 }});
}

}  // namespace ts::engine::cpu
