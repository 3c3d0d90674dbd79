#pragma once
// Y[M,N] = X[M,K] · op(W) + bias through cuBLASLt, W constant (uploaded once, fp32 or fp16),
// bias fused as a cuBLASLt epilogue (ReLU fused too; other activations run as one elementwise
// kernel after it). Row-major tensors are passed to column-major cuBLASLt as their transposes:
// Yᵀ[N,M] = op(W)ᵀ · Xᵀ.
//
// Precision: FP32 (CUBLAS_COMPUTE_32F), TF32 (CUBLAS_COMPUTE_32F_FAST_TF32), FP16 / BF16 (W
// stored fp16 / bf16, X cast to it in scratch, fp32 accumulate and output). Descriptors and the chosen
// algorithm are cached per M (thread-safe); a CUDA graph replay does not touch them. The algorithm
// is chosen among those needing at most CudaRunEnv::lt_workspace_limit() bytes of workspace, and
// the context's workspace grows to what it needs (none for most small-M algorithms).
#include <map>
#include <mutex>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

class LtGemm {
 public:
  // w: host fp32, [K,N] (trans_b false) or [N,K] (trans_b true); bias: host [N] or null.
  static Result<std::unique_ptr<LtGemm>> create(const float* w, int64_t k, int64_t n, bool trans_b,
                                                const float* bias, CudaAct act, CudaMath math);
  ~LtGemm();
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t weight_bytes() const { return int64_t(w_.bytes() + bias_.bytes()); }
  // y[m,n] = act(x[m,k] · W + bias) on a.stream; uses a.lt, its workspace, and scratch (fp16).
  // The scratch run() requests for m rows: X cast to fp16/bf16 in those precisions, else none.
  size_t scratch_bytes(int64_t m) const { return cuda_math_16bit(math_) ? size_t(m * k_) * 2 : 0; }
  Status run(const CudaArgs& a, const float* x, int64_t m, float* y) const;

 private:
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool has_algo = false;
    size_t workspace_bytes = 0;  // what the chosen algorithm needs (heuristic's workspaceSize)
  };
  LtGemm() = default;
  Result<const Plan*> plan_for(cublasLtHandle_t lt, int64_t m, size_t workspace_bytes) const;

  int64_t k_ = 0, n_ = 0;
  bool trans_b_ = false;
  CudaAct act_ = CudaAct::kNone;
  CudaMath math_ = CudaMath::kFP32;
  DeviceBuffer w_, bias_;
  mutable std::mutex mu_;
  mutable std::map<int64_t, Plan> plans_;  // by M
};

}  // namespace ts::engine::cuda
