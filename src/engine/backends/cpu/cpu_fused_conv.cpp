// FusedConv1d (passes/fuse_conv1d.cpp) on the CPU: a 1-D Conv (stride 1, group 1) with its
// causal trim, bias, ReLU, residual add (+ ReLU) and last-step Gather, X channel-major [n, c, len]
// or time-major [n, len, c]. One tactic, "gemm": per batch row the input window the computed
// steps read is laid out time-major once (zero-padded where the conv pads), each computed step
// becomes one row of an im2col matrix A [steps, kw·c] (tap-major), and rows of several batch rows
// at a time go through ticksentry's AVX2 GEMM against W packed once at build ([kw·c, m] panels,
// bias and the first ReLU in the GEMM's epilogue); the residual add, its ReLU and the store to
// [n, m, len] follow per row.
//
// Only the steps something reads are computed: one step where the Gather is folded
// (`last_step`), the last `steps_needed` steps where the pass found that every reader of the
// output is another causal FusedConv1d needing no more than that (fuse_conv1d.cpp). The output
// keeps its shape [n, m, len]; the steps before those are not written (nothing reads them).
//
// PERF NOTE: in the shape sweep's TCNs (2–3 levels, k 3–5, dilations 1, 2, 4, T = 60) the steps
// needed are the receptive field (10–22 of 60 at the first level, 1 at the last), which is what
// makes this faster than oneDNN's full-length Conv plus the Slice/Relu/Add nodes at every batch
// (docs/performance.md, "TCNs and Transformers on the cpu backend").
#include <algorithm>
#include <iterator>
#include <cstring>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {
namespace {

struct FusedConvAttrs {
  int64_t dilation = 1, pad_begin = 0, pad_end = 0, last_step = 0, steps_needed = 0;
  bool x_time_major = false, trim = false, relu = false, relu_after_residual = false;
};

FusedConvAttrs read_attrs(const Node& n) {
  FusedConvAttrs at;
  at.dilation = n.attr_i("dilation", 1);
  at.pad_begin = n.attr_i("pad_begin", 0);
  at.pad_end = n.attr_i("pad_end", 0);
  at.last_step = n.attr_i("last_step", 0);
  at.steps_needed = n.attr_i("steps_needed", 0);
  at.x_time_major = n.attr_i("x_time_major", 0) != 0;
  at.trim = n.attr_i("trim", 0) != 0;
  at.relu = n.attr_s("activation", "none") == "relu";
  at.relu_after_residual = n.attr_s("residual_activation", "none") == "relu";
  return at;
}

Status check_fused_conv(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs.size() > 4) return unsupported(n, "needs X, W and optionally B and a residual");
  if (!is_const(g, n.inputs[1]) || g.value(n.inputs[1]).dtype != DType::kF32 ||
      g.value(n.inputs[1]).const_dims().size() != 3) {
    return unsupported(n, "needs a constant f32 W [m, c, kw] on the cpu backend");
  }
  const int64_t m = g.value(n.inputs[1]).const_dims()[0];
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue &&
      (!is_const(g, n.inputs[2]) || g.value(n.inputs[2]).dtype != DType::kF32 || g.value(n.inputs[2]).numel() != m)) {
    return unsupported(n, "needs a constant f32 B of one value per output channel on the cpu backend");
  }
  const std::string act = n.attr_s("activation", "none"), ract = n.attr_s("residual_activation", "none");
  if (act != "none" && act != "relu") return unsupported(n, "activation=" + act + " is not supported by the cpu backend");
  if (ract != "none" && ract != "relu")
    return unsupported(n, "residual_activation=" + ract + " is not supported by the cpu backend");
  const FusedConvAttrs at = read_attrs(n);
  if (at.dilation < 1 || at.pad_begin < 0 || at.pad_end < 0) return unsupported(n, "has a dilation < 1 or negative pads");
  if (at.last_step < 0 || at.last_step > 2)
    return unsupported(n, "last_step=" + std::to_string(at.last_step) + " is not 0, 1 or 2");
  if (at.steps_needed < 0) return unsupported(n, "steps_needed must not be negative");
  return Status::ok();
}

// Rows of A per GEMM call (several batch rows' steps): A and C stay in L2.
constexpr int64_t kChunkRows = 128;

class FusedConvKernel final : public Kernel {
 public:
  FusedConvKernel(FusedConvAttrs at, int64_t m, int64_t c, int64_t kw, PackedB w)
      : at_(at), m_(m), c_(c), kw_(kw), w_(std::move(w)) {}

  Status run(const KernelArgs& a) const override {
    const RtTensor* x = a.input(0);
    const RtTensor* r = a.input(3);
    if (!x || x->dtype != DType::kF32 || x->dims.size() != 3) {
      return bad_input("X must be f32 [n, c, len] (or [n, len, c]), got " +
                       (x ? dims_str(x->dims) : std::string("nothing")));
    }
    const int64_t n = x->dims[0], c = at_.x_time_major ? x->dims[2] : x->dims[1];
    const int64_t len_in = at_.x_time_major ? x->dims[1] : x->dims[2];
    if (c != c_)
      return bad_input("X " + dims_str(x->dims) + " has " + std::to_string(c) + " channels, W " + std::to_string(c_));
    const int64_t span = at_.dilation * (kw_ - 1);
    const int64_t full = len_in + at_.pad_begin + at_.pad_end - span;
    if (full < 1 || (at_.trim && full < len_in)) {
      return bad_input("input length " + std::to_string(len_in) + " is too short for the kernel span " +
                       std::to_string(span + 1));
    }
    const int64_t len = at_.trim ? len_in : full;
    if (r) {
      const int64_t want[3] = {n, m_, len};
      if (r->dtype != DType::kF32 || !std::equal(r->dims.begin(), r->dims.end(), std::begin(want), std::end(want))) {
        return bad_input("the residual " + dims_str(r->dims) + " does not match the output " + dims_str(want));
      }
    }
    // Steps [t_lo, len) are computed.
    int64_t t_lo = 0;
    if (at_.last_step) t_lo = len - 1;
    else if (at_.steps_needed > 0) t_lo = std::max<int64_t>(0, len - at_.steps_needed);
    const int64_t steps = len - t_lo;
    RtTensor& o = *a.out[0];
    if (at_.last_step == 1) {
      const int64_t od[2] = {n, m_};
      o.ensure(DType::kF32, od);
    } else {
      const int64_t od[3] = {n, m_, at_.last_step ? 1 : len};
      o.ensure(DType::kF32, od);
    }
    if (n == 0) return Status::ok();
    const int64_t o_len = at_.last_step ? 1 : len, o_t0 = at_.last_step ? 0 : t_lo;  // where step t_lo goes

    const int64_t win = steps + span;  // input window of one batch row, time-major, padded
    const int64_t kdim = kw_ * c_;
    const int64_t per_chunk = std::max<int64_t>(1, kChunkRows / steps);  // batch rows per GEMM
    const int64_t rows_max = per_chunk * steps;
    float* xt = static_cast<float*>(a.scratch->get(size_t(win * c_ + rows_max * (kdim + m_)) * sizeof(float)));
    float* amat = xt + win * c_;
    float* cmat = amat + rows_max * kdim;
    const float* xp = x->as<float>();
    const float* rp = r ? r->as<float>() : nullptr;
    float* op = o.as<float>();
    const Act act = at_.relu ? Act::kRelu : Act::kNone;
    const int64_t p0 = t_lo - at_.pad_begin;  // input position of window row 0

    for (int64_t n0 = 0; n0 < n; n0 += per_chunk) {
      const int64_t nb = std::min(per_chunk, n - n0);
      for (int64_t bi = 0; bi < nb; ++bi) {
        const int64_t ni = n0 + bi;
        // The window, time-major: xt[w][ci] = x at position p0 + w (0 outside [0, len_in)).
        for (int64_t w = 0; w < win; ++w) {
          const int64_t p = p0 + w;
          float* dst = xt + w * c_;
          if (p < 0 || p >= len_in) {
            std::memset(dst, 0, size_t(c_) * sizeof(float));
          } else if (at_.x_time_major) {
            std::memcpy(dst, xp + (ni * len_in + p) * c_, size_t(c_) * sizeof(float));
          } else {
            const float* src = xp + ni * c_ * len_in + p;
            for (int64_t ci = 0; ci < c_; ++ci) dst[ci] = src[ci * len_in];
          }
        }
        // im2col: row t, tap j ← window row t + j·dilation.
        for (int64_t t = 0; t < steps; ++t) {
          float* row = amat + (bi * steps + t) * kdim;
          for (int64_t j = 0; j < kw_; ++j) {
            std::memcpy(row + j * c_, xt + (t + j * at_.dilation) * c_, size_t(c_) * sizeof(float));
          }
        }
      }
      const int64_t rows = nb * steps;
      gemm_packed(amat, kdim, rows, w_, cmat, m_, act);
      // Epilogue: residual add (+ ReLU), stored channel-major.
      for (int64_t bi = 0; bi < nb; ++bi) {
        const int64_t ni = n0 + bi;
        for (int64_t t = 0; t < steps; ++t) {
          const float* crow = cmat + (bi * steps + t) * m_;
          if (at_.last_step == 1 && !rp) {
            std::memcpy(op + ni * m_, crow, size_t(m_) * sizeof(float));
            continue;
          }
          float* dst = op + ni * m_ * o_len + o_t0 + t;
          const float* res = rp ? rp + ni * m_ * len + t_lo + t : nullptr;
          for (int64_t mi = 0; mi < m_; ++mi) {
            float v = crow[mi];
            if (res) {
              v += res[mi * len];
              if (at_.relu_after_residual) v = v > 0.f ? v : 0.f;
            }
            dst[mi * o_len] = v;
          }
        }
      }
    }
    return Status::ok();
  }

 private:
  FusedConvAttrs at_;
  int64_t m_, c_, kw_;
  PackedB w_;  // [kw·c, m]: row j·c + ci holds W[·, ci, j]
};

Result<KernelPtr> make_fused_conv(const Graph& g, const Node& n, const std::string&) {
  TS_RETURN_IF_ERROR(check_fused_conv(g, n));
  const Value& wv = g.value(n.inputs[1]);
  const auto wd = wv.const_dims();
  const int64_t m = wd[0], c = wd[1], kw = wd[2];
  const float* w = wv.as<float>();
  std::vector<float> b_km(size_t(kw * c * m));
  for (int64_t mi = 0; mi < m; ++mi)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t j = 0; j < kw; ++j) b_km[size_t((j * c + ci) * m + mi)] = w[(mi * c + ci) * kw + j];
  const float* bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue ? g.value(n.inputs[2]).as<float>() : nullptr;
  return KernelPtr(new FusedConvKernel(read_attrs(n), m, c, kw, pack_b(b_km.data(), kw * c, m, false, bias)));
}

}  // namespace

void add_fused_conv_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"FusedConv1d", check_fused_conv, {"gemm"}, make_fused_conv});
}

}  // namespace ts::engine::cpu
