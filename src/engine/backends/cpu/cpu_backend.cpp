#include "engine/backends/cpu/cpu_backend.h"

#include <algorithm>
#include <map>

#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_rnn.h"
#include "engine/backends/cpu/cpu_rnn_stack.h"
#include "engine/backends/cpu/cpu_math.h"

namespace ts::engine {
namespace cpu {

Status unsupported(const Node& n, const std::string& what) {
  return Status(StatusCode::kUnsupported, "node " + n.name + ": op " + n.op + " " + what);
}

Status bad_input(const std::string& what) { return Status(StatusCode::kInvalidArgument, what); }

Result<int> norm_axis(int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return bad_input("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return int(a);
}

bool rank_ok(const RtTensor& t) { return t.dims.size() <= size_t(kMaxRank); }

bool broadcast_dims(const Dims& a, const Dims& b, Dims* out) {
  int n = std::max(a.n, b.n);
  out->n = n;
  for (int i = 0; i < n; ++i) {
    int ia = i - (n - a.n), ib = i - (n - b.n);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

Dims broadcast_strides(const Dims& in, const Dims& out) {
  Dims s;
  s.n = out.n;
  int64_t stride = 1;
  for (int i = out.n - 1; i >= 0; --i) {
    int ii = i - (out.n - in.n);
    if (ii >= 0 && in[ii] != 1) {
      s[i] = stride;
      stride *= in[ii];
    } else {
      s[i] = 0;
      if (ii >= 0) stride *= in[ii];
    }
  }
  return s;
}

bool read_ints(const RtTensor& t, Dims* out) {
  int64_t n = t.numel();
  if (n > kMaxRank) return false;
  out->n = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype == DType::kI64) out->push(t.as<int64_t>()[i]);
    else if (t.dtype == DType::kI32) out->push(t.as<int32_t>()[i]);
    else return false;
  }
  return true;
}

bool is_const(const Graph& g, ValueId v) {
  return v >= 0 && size_t(v) < g.values.size() && g.value(v).is_constant;
}

}  // namespace cpu

namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    std::vector<cpu::OpInfo> ops;
    cpu::add_elementwise_ops(ops);
    cpu::add_gemm_ops(ops);
    cpu::add_norm_ops(ops);
    cpu::add_conv_ops(ops);
    cpu::add_shape_ops(ops);
    cpu::add_rnn_ops(ops);
    cpu::add_attention_ops(ops);
    cpu::add_compare_ops(ops);
    cpu::add_fused_conv_ops(ops);
    cpu::add_encoder_ops(ops);
    for (auto& o : ops) ops_[o.op] = std::move(o);
  }

  std::string name() const override { return "cpu"; }
  std::string target_arch() const override {
    return cpu::cpu_has_avx2_fma() ? "x86-64-v3" : "x86-64";
  }

  Status check_precision(Precision p) const override {
    switch (p) {
      case Precision::kFP32: return Status::ok();
      case Precision::kBF16:
        // BF16 here means BF16 storage of the recurrent weights with FP32 math (cpu_rnn.h):
        // it halves the bytes a batch-1 recurrence streams per step. Every other layer, and any
        // GRU/LSTM whose tactic timing prefers FP32, stays FP32 (`inspect` shows which).
        if (cpu::cpu_has_avx2_fma()) return Status::ok();
        return Status(StatusCode::kUnsupported, "bf16 on the cpu backend needs AVX2 and FMA, which this CPU lacks");
      case Precision::kFP16:
      case Precision::kINT8:
        return Status(StatusCode::kUnsupported, std::string(precision_name(p)) +
                      " is not supported by the cpu backend (use --backend cuda)");
    }
    return Status(StatusCode::kUnsupported, "unknown precision");
  }

  Result<std::unique_ptr<Kernel>> make_kernel_for(const Graph& g, const Node& n, const std::string& tactic,
                                                  const KernelOptions& options) const override {
    const bool stack = n.op == "GRUStack" || n.op == "LSTMStack";
    if (options.precision == Precision::kBF16 && (n.op == "GRU" || n.op == "LSTM" || stack)) {
      TS_RETURN_IF_ERROR(check_supported(g, n));
      const auto t = tactics(g, n);
      const std::string chosen = tactic.empty() ? t.front() : tactic;
      if (std::find(t.begin(), t.end(), chosen) == t.end()) {
        return cpu::unsupported(n, "has no tactic '" + chosen + "' in the cpu backend");
      }
      return stack ? cpu::make_rnn_stack_kernel(g, n, chosen, true) : cpu::make_rnn_kernel(g, n, chosen, true);
    }
    return make_kernel(g, n, tactic);
  }

  std::string layer_precision(const Program& program, size_t i, Precision) const override {
    if (i < program.kernels.size() && program.kernels[i] && cpu::rnn_kernel_is_bf16(*program.kernels[i])) {
      return "bf16-weights(fp32-math)";
    }
    return "fp32";
  }

  Status check_supported(const Graph& g, const Node& n) const override {
    auto it = ops_.find(n.op);
    if (it == ops_.end()) return cpu::unsupported(n, "is not supported by the cpu backend");
    if (it->second.check) return it->second.check(g, n);
    return Status::ok();
  }

  std::vector<std::string> tactics(const Graph& g, const Node& n) const override {
    auto it = ops_.find(n.op);
    if (it == ops_.end()) return {};
    if (it->second.tactics_for) return it->second.tactics_for(g, n);
    return it->second.tactics;
  }

  Result<std::unique_ptr<Kernel>> make_kernel(const Graph& g, const Node& n,
                                              const std::string& tactic) const override {
    auto it = ops_.find(n.op);
    if (it == ops_.end()) return cpu::unsupported(n, "is not supported by the cpu backend");
    const auto t = tactics(g, n);
    std::string chosen = tactic.empty() ? t.front() : tactic;
    if (std::find(t.begin(), t.end(), chosen) == t.end()) {
      return cpu::unsupported(n, "has no tactic '" + chosen + "' in the cpu backend");
    }
    return it->second.make(g, n, chosen);
  }

  std::vector<std::string> op_names() const {
    std::vector<std::string> names;
    for (const auto& [name, info] : ops_) names.push_back(name);
    return names;
  }

 private:
  std::map<std::string, cpu::OpInfo> ops_;
};

const CpuBackend& the_cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace

const Backend& cpu_backend() { return the_cpu_backend(); }

std::vector<std::string> cpu_backend_ops() { return the_cpu_backend().op_names(); }

}  // namespace ts::engine
