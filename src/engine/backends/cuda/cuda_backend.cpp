#include "engine/backends/cuda/cuda_backend.h"

#include <algorithm>
#include <iterator>
#include <map>

#include "engine/backends/cuda/cuda_executor.h"
#include "engine/backends/cuda/cuda_ops.h"

namespace ts::engine {
namespace cuda {

Status unsupported(const Node& n, const std::string& what) {
  return Status(StatusCode::kUnsupported, "node " + n.name + ": op " + n.op + " " + what);
}

Status bad_input(const std::string& what) { return Status(StatusCode::kInvalidArgument, what); }

bool is_const(const Graph& g, ValueId v) {
  return v >= 0 && size_t(v) < g.values.size() && g.value(v).is_constant;
}

const float* const_f32(const Graph& g, ValueId v) {
  return is_const(g, v) && g.value(v).dtype == DType::kF32 ? g.value(v).as<float>() : nullptr;
}

namespace {

// The device this process uses (device 0), probed once.
struct Device {
  Status status;
  std::string arch;  // "sm_90"
  std::string name;
};

const Device& device() {
  static const Device d = [] {
    Device r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      r.status = Status(StatusCode::kUnsupported, std::string("no CUDA device: ") + cudaGetErrorString(e));
      return r;
    }
    if (n == 0) {
      r.status = Status(StatusCode::kUnsupported, "no CUDA device: cudaGetDeviceCount found none");
      return r;
    }
    cudaDeviceProp p{};
    e = cudaGetDeviceProperties(&p, 0);
    if (e != cudaSuccess) {
      r.status = Status(StatusCode::kUnsupported, std::string("no CUDA device: ") + cudaGetErrorString(e));
      return r;
    }
    r.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
    r.name = p.name;
    return r;
  }();
  return d;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    std::vector<CudaOpInfo> ops;
    add_gemm_ops(ops);
    add_rnn_ops(ops);
    add_shape_ops(ops);
    add_elementwise_ops(ops);
    add_host_ops(ops);
    add_layer_ops(ops);
    add_conv_ops(ops);
    for (auto& o : ops) ops_[o.op] = std::move(o);
  }

  std::string name() const override { return "cuda"; }
  Status available() const override { return device().status; }
  std::string target_arch() const override { return device().status ? device().arch : "none"; }

  Status check_precision(Precision p) const override {
    switch (p) {
      case Precision::kFP32:
      case Precision::kFP16:
      case Precision::kBF16:
      case Precision::kINT8:  // the calibrated GEMMs in INT8, the rest in FP16 (quantize.h)
        return Status::ok();
    }
    return Status(StatusCode::kUnsupported, "unknown precision");
  }

  Status check_supported(const Graph& g, const Node& n) const override {
    auto it = ops_.find(n.op);
    if (it == ops_.end()) return unsupported(n, "is not supported by the cuda backend yet");
    if (it->second.check) return it->second.check(g, n);
    return Status::ok();
  }

  std::vector<std::string> tactics(const Graph&, const Node& n) const override {
    auto it = ops_.find(n.op);
    if (it == ops_.end()) return {};
    return it->second.tactics;
  }

  Result<std::unique_ptr<Kernel>> make_kernel(const Graph& g, const Node& n, const std::string& tactic) const override {
    return make_kernel_for(g, n, tactic, KernelOptions{});
  }

  Result<std::unique_ptr<Kernel>> make_kernel_for(const Graph& g, const Node& n, const std::string& tactic,
                                                  const KernelOptions& options) const override {
    TS_RETURN_IF_ERROR(device().status);
    auto it = ops_.find(n.op);
    if (it == ops_.end()) return unsupported(n, "is not supported by the cuda backend yet");
    const auto& t = it->second.tactics;
    std::string chosen = tactic.empty() ? t.front() : tactic;
    if (std::find(t.begin(), t.end(), chosen) == t.end()) {
      return unsupported(n, "has no tactic '" + chosen + "' in the cuda backend");
    }
    TS_CUDA(cudaSetDevice(0));
    return it->second.make(g, n, cuda_math(options), chosen);
  }

  // GEMMs (FusedGemm, Gemm, MatMul) and recurrences (GRU, LSTM) run at the plan's precision
  // (16-bit weights and operands, fp32 accumulate); every other kernel (LayerNorm, attention,
  // Conv, elementwise, data movement) computes in fp32 at every precision.
  // In an INT8 plan each GEMM says what calibration chose and why ("int8 (rel err ...)",
  // "fp16 (fallback: rel err ... > ...)"), and recurrences run in FP16.
  std::string layer_precision(const Program& program, size_t i, Precision plan) const override {
    static const char* const kAtPlan[] = {"FusedGemm", "Gemm", "MatMul", "GRU", "LSTM", "GRUStack", "LSTMStack",
                                          "TransformerEncoderLayer", "FusedConv1d"};
    if (i < program.graph.nodes.size()) {
      const Node& node = program.graph.nodes[i];
      const std::string& op = node.op;
      if (plan == Precision::kINT8) {
        const std::string q = node.attr_s("q_precision", "");
        if (!q.empty()) return q + " (" + node.attr_s("q_reason", "") + ")";
        if (op == "GRU" || op == "LSTM") return "fp16 (recurrent)";
        if (op == "GRUStack" || op == "LSTMStack") return "fp16 (recurrent stack; an absorbed head runs fp32)";
        if (op == "TransformerEncoderLayer") return "fp16 (fused encoder layer, faster than its GEMMs in int8)";
        if (std::find(std::begin(kAtPlan), std::end(kAtPlan), op) != std::end(kAtPlan)) return "fp16 (not int8-eligible)";
        return "fp32";
      }
      if (std::find(std::begin(kAtPlan), std::end(kAtPlan), op) != std::end(kAtPlan)) return precision_name(plan);
    }
    return "fp32";
  }

  int64_t weight_bytes(const Program& program) const override {
    int64_t b = 0;
    for (const auto& k : program.kernels) {
      if (auto* ck = dynamic_cast<const CudaKernel*>(k.get())) b += ck->weight_bytes();
    }
    return b;
  }

  std::shared_ptr<void> allocate_host(size_t bytes) const override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return std::shared_ptr<void>(p, [](void* q) { cudaFreeHost(q); });
  }

  Result<std::unique_ptr<BackendExecutor>> create_executor(std::shared_ptr<const Program> program,
                                                           const ExecutorOptions& options) const override {
    TS_RETURN_IF_ERROR(device().status);
    TS_CUDA(cudaSetDevice(0));
    auto ex = CudaExecutor::create(std::move(program), options);
    if (!ex) return ex.status();
    return std::unique_ptr<BackendExecutor>(std::move(ex).value());
  }

 private:
  std::map<std::string, CudaOpInfo> ops_;
};

}  // namespace
}  // namespace cuda

const Backend& cuda_backend() {
  static const cuda::CudaBackend backend;
  return backend;
}

}  // namespace ts::engine
