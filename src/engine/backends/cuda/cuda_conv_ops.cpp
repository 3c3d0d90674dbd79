// FusedConv1d nodes (passes/fuse_conv1d.cpp) on the device: a 1-D Conv (stride 1, group 1) with
// its causal trim, bias, ReLU and residual add, X channel-major or time-major; the last step only
// where a Gather of it was folded. Four tactics, timed by the builder: "igemm" and "igemm_wide"
// (cuda_conv_igemm.cu: FP16/BF16 tensor cores in 16-bit plans, FP32 FFMA tiles in FP32/TF32
// plans; weights packed once per plan; 32 or 128 (FP32 64) of K per step), "direct"
// (cuda_conv.cu: FP32, one thread per output, the kernel plain Conv nodes run) and "direct_warp"
// (a warp per output, its lanes splitting K: for batch 1).
#include <vector>

#include "engine/backends/cuda/cuda_conv.h"
#include "engine/backends/cuda/cuda_ops.h"

namespace ts::engine::cuda {
namespace {

struct FusedConvAttrs {
  int64_t dilation = 1, pad_begin = 0, pad_end = 0;
  bool x_time_major = false, relu = false, trim = false, relu_after_residual = false;
  int64_t last_step = 0;  // 1: only the last step, Y [n, m]; 2: Y [n, m, 1]
};

FusedConvAttrs read_attrs(const Node& n) {
  FusedConvAttrs at;
  at.dilation = n.attr_i("dilation", 1);
  at.pad_begin = n.attr_i("pad_begin", 0);
  at.pad_end = n.attr_i("pad_end", 0);
  at.x_time_major = n.attr_i("x_time_major", 0) != 0;
  at.relu = n.attr_s("activation", "none") == "relu";
  at.trim = n.attr_i("trim", 0) != 0;
  at.last_step = n.attr_i("last_step", 0);
  at.relu_after_residual = n.attr_s("residual_activation", "none") == "relu";
  return at;
}

Status check_fused_conv(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs.size() > 4) return unsupported(n, "needs X, W and optionally B and a residual");
  if (!const_f32(g, n.inputs[1]) || g.value(n.inputs[1]).const_dims().size() != 3) {
    return unsupported(n, "needs a constant f32 W [m, c, kw] on the cuda backend");
  }
  const int64_t m = g.value(n.inputs[1]).const_dims()[0];
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue &&
      (!const_f32(g, n.inputs[2]) || g.value(n.inputs[2]).numel() != m)) {
    return unsupported(n, "needs a constant f32 B of one value per output channel on the cuda backend");
  }
  const FusedConvAttrs at = read_attrs(n);
  const std::string act = n.attr_s("activation", "none");
  if (act != "none" && act != "relu") return unsupported(n, "activation=" + act + " is not supported by the cuda backend");
  const std::string ract = n.attr_s("residual_activation", "none");
  if (ract != "none" && ract != "relu") {
    return unsupported(n, "residual_activation=" + ract + " is not supported by the cuda backend");
  }
  if (at.dilation < 1 || at.pad_begin < 0 || at.pad_end < 0) return unsupported(n, "has a dilation < 1 or negative pads");
  if (at.last_step < 0 || at.last_step > 2) return unsupported(n, "last_step=" + std::to_string(at.last_step) + " is not 0, 1 or 2");
  return Status::ok();
}

// X, W and the residual against each other; the geometry of this run and the residual's place
// (res_len, res_t0 of the epilogue) where only the last step is computed.
Status run_geometry(const FusedConvAttrs& at, const CudaArgs& a, int64_t m, int64_t c_w, int64_t kw, ConvFusedGeom* g,
                    ConvEpilogue* e) {
  const DevTensor* x = a.input(0);
  TS_RETURN_IF_ERROR(need_device(x, "X"));
  if (x->dtype != DType::kF32 || x->dims.size() != 3) {
    return bad_input("X must be f32 [n, c, len] (or [n, len, c]), got " + dims_str(x->dims));
  }
  g->n = x->dims[0];
  g->c = at.x_time_major ? x->dims[2] : x->dims[1];
  g->len_in = at.x_time_major ? x->dims[1] : x->dims[2];
  g->m = m;
  g->kw = kw;
  g->dilation = at.dilation;
  g->pad_begin = at.pad_begin;
  g->x_time_major = at.x_time_major;
  if (g->c != c_w) return bad_input("X " + dims_str(x->dims) + " has " + std::to_string(g->c) + " channels, W " + std::to_string(c_w));
  const int64_t full = g->len_in + at.pad_begin + at.pad_end - at.dilation * (kw - 1);
  if (full < 1 || (at.trim && full < g->len_in)) {
    return bad_input("input length " + std::to_string(g->len_in) + " is too short for the kernel span " +
                     std::to_string(at.dilation * (kw - 1) + 1));
  }
  const int64_t len = at.trim ? g->len_in : full;  // the conv's output length (before a last-step Gather)
  g->len_out = len;
  if (at.last_step) {  // one output step, t = len − 1: shift the taps instead of the rows
    g->len_out = 1;
    g->pad_begin -= len - 1;
    e->res_len = len;
    e->res_t0 = len - 1;
  }
  const DevTensor* r = a.input(3);
  if (r) {
    TS_RETURN_IF_ERROR(need_device(r, "the residual"));
    const std::vector<int64_t> want{g->n, g->m, len};
    if (r->dtype != DType::kF32 || r->dims != want) {
      return bad_input("the residual " + dims_str(r->dims) + " does not match the output " + dims_str(want));
    }
  }
  return Status::ok();
}

void set_epilogue(const FusedConvAttrs& at, const CudaArgs& a, ConvEpilogue* e) {
  if (const DevTensor* b = a.input(2)) e->bias = b->as<float>();
  if (const DevTensor* r = a.input(3)) e->residual = r->as<float>();
  e->relu = at.relu;
  e->relu_after_residual = at.relu_after_residual;
}

class FusedConvKernel final : public CudaKernel {
 public:
  // igemm: `weights` holds W packed in `math` (conv_pack_weights), wide_k its K step; direct: W
  // as given, f32 [m, c, kw], warp: a warp per output (direct_warp). Either way the kernel owns its copy: the builder times every tactic
  // against the default one's program, whose kernel says W (input 1) need not be uploaded.
  FusedConvKernel(FusedConvAttrs at, int64_t m, int64_t c, int64_t kw, bool igemm, bool wide_k, bool warp,
                  ConvMath math, DeviceBuffer weights)
      : at_(at), m_(m), c_(c), kw_(kw), igemm_(igemm), wide_k_(wide_k), warp_(warp), math_(math),
        packed_(std::move(weights)) {}
  bool reads_input(size_t i) const override { return i != 1; }
  int64_t weight_bytes() const override { return int64_t(packed_.bytes()); }
  Status launch(const CudaArgs& a) const override {
    ConvFusedGeom g;
    ConvEpilogue e;
    TS_RETURN_IF_ERROR(run_geometry(at_, a, m_, c_, kw_, &g, &e));
    set_epilogue(at_, a, &e);
    DevTensor& y = *a.out[0];
    const std::vector<int64_t> yd =
        at_.last_step == 1 ? std::vector<int64_t>{g.n, g.m} : std::vector<int64_t>{g.n, g.m, g.len_out};
    TS_RETURN_IF_ERROR(a.env->alloc(y, DType::kF32, yd));
    const float* x = a.input(0)->as<float>();
    if (igemm_) return launch_conv1d_igemm(x, packed_.get(), math_, wide_k_, y.as<float>(), g, e, a.stream);
    return launch_conv1d_direct(x, packed_.as<float>(), y.as<float>(), g, e, warp_, a.stream);
  }

 private:
  FusedConvAttrs at_;
  int64_t m_, c_, kw_;
  bool igemm_, wide_k_, warp_;
  ConvMath math_;
  DeviceBuffer packed_;
};

Result<CudaKernelPtr> make_fused_conv(const Graph& g, const Node& n, CudaMath p, const std::string& tactic) {
  TS_RETURN_IF_ERROR(check_fused_conv(g, n));
  const auto wd = g.value(n.inputs[1]).const_dims();
  // TF32 plans take the FP32 tiles: TF32's 10-bit mantissa would be the only reduced-precision
  // step of a conv whose activations stay FP32 (PERF NOTE: at TCN sizes the FFMA tiles are not
  // the bottleneck; the 16-bit plans are the fast ones).
  const ConvMath math = p == CudaMath::kFP16 ? ConvMath::kF16 : p == CudaMath::kBF16 ? ConvMath::kBF16 : ConvMath::kF32;
  const bool igemm = tactic == "igemm" || tactic == "igemm_wide", wide_k = tactic == "igemm_wide";
  const float* w = const_f32(g, n.inputs[1]);
  DeviceBuffer packed;
  if (igemm) {
    const std::vector<uint8_t> host = conv_pack_weights(w, wd[0], wd[1], wd[2], math, wide_k);
    TS_RETURN_IF_ERROR(packed.upload(host.data(), host.size()));
  } else {
    TS_RETURN_IF_ERROR(packed.upload(w, size_t(wd[0] * wd[1] * wd[2]) * sizeof(float)));
  }
  return CudaKernelPtr(
      new FusedConvKernel(read_attrs(n), wd[0], wd[1], wd[2], igemm, wide_k, tactic == "direct_warp", math, std::move(packed)));
}

}  // namespace

void add_conv_ops(std::vector<CudaOpInfo>& ops) {
  ops.push_back({"FusedConv1d", check_fused_conv, make_fused_conv, {"igemm", "igemm_wide", "direct", "direct_warp"}});
}

}  // namespace ts::engine::cuda
