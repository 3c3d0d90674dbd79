#include "engine/backends/cuda/cuda_gemm.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <vector>

namespace ts::engine::cuda {

Result<std::unique_ptr<LtGemm>> LtGemm::create(const float* w, int64_t k, int64_t n, bool trans_b,
                                               const float* bias, CudaAct act, CudaMath math) {
  std::unique_ptr<LtGemm> g(new LtGemm());
  g->k_ = k;
  g->n_ = n;
  g->trans_b_ = trans_b;
  g->act_ = act;
  g->math_ = math;
  const size_t elems = size_t(k * n);
  if (math == CudaMath::kFP16) {
    std::vector<__half> h(elems);
    for (size_t i = 0; i < elems; ++i) h[i] = __float2half_rn(w[i]);
    TS_RETURN_IF_ERROR(g->w_.upload(h.data(), elems * sizeof(__half)));
  } else if (math == CudaMath::kBF16) {
    std::vector<__nv_bfloat16> h(elems);
    for (size_t i = 0; i < elems; ++i) h[i] = __float2bfloat16_rn(w[i]);
    TS_RETURN_IF_ERROR(g->w_.upload(h.data(), elems * sizeof(__nv_bfloat16)));
  } else {
    TS_RETURN_IF_ERROR(g->w_.upload(w, elems * sizeof(float)));
  }
  if (bias) TS_RETURN_IF_ERROR(g->bias_.upload(bias, size_t(n) * sizeof(float)));
  return g;
}

LtGemm::~LtGemm() {
  for (auto& [m, p] : plans_) {
    if (p.op) cublasLtMatmulDescDestroy(p.op);
    if (p.a) cublasLtMatrixLayoutDestroy(p.a);
    if (p.b) cublasLtMatrixLayoutDestroy(p.b);
    if (p.c) cublasLtMatrixLayoutDestroy(p.c);
  }
}

Result<const LtGemm::Plan*> LtGemm::plan_for(cublasLtHandle_t lt, int64_t m, size_t workspace_bytes) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = plans_.find(m);
  if (it != plans_.end()) return &it->second;
  Plan p;
  // Destroys whatever was created if a later call fails.
  struct Guard {
    Plan* p;
    bool keep = false;
    ~Guard() {
      if (keep) return;
      if (p->op) cublasLtMatmulDescDestroy(p->op);
      if (p->a) cublasLtMatrixLayoutDestroy(p->a);
      if (p->b) cublasLtMatrixLayoutDestroy(p->b);
      if (p->c) cublasLtMatrixLayoutDestroy(p->c);
    }
  } guard{&p};
  cublasComputeType_t compute = math_ == CudaMath::kTF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cudaDataType_t ab = math_ == CudaMath::kFP16 ? CUDA_R_16F : math_ == CudaMath::kBF16 ? CUDA_R_16BF : CUDA_R_32F;
  TS_CUBLAS(cublasLtMatmulDescCreate(&p.op, compute, CUDA_R_32F));
  // Yᵀ[N,M] = A · B with A = op(W)ᵀ as stored (col-major view), B = Xᵀ (col-major [K,M]).
  cublasOperation_t ta = trans_b_ ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  TS_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  TS_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (bias_.get()) epi = act_ == CudaAct::kRelu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  else if (act_ == CudaAct::kRelu) epi = CUBLASLT_EPILOGUE_RELU;
  TS_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (bias_.get()) {
    const void* bp = bias_.get();
    TS_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof(bp)));
    cudaDataType_t bt = CUDA_R_32F;
    TS_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
  }
  if (trans_b_) TS_CUBLAS(cublasLtMatrixLayoutCreate(&p.a, ab, uint64_t(k_), uint64_t(n_), k_));
  else TS_CUBLAS(cublasLtMatrixLayoutCreate(&p.a, ab, uint64_t(n_), uint64_t(k_), n_));
  TS_CUBLAS(cublasLtMatrixLayoutCreate(&p.b, ab, uint64_t(k_), uint64_t(m), k_));
  TS_CUBLAS(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, uint64_t(n_), uint64_t(m), n_));
  cublasLtMatmulPreference_t pref = nullptr;
  TS_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes, sizeof(workspace_bytes));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.c, p.c, pref, 1, &res, &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) return cublas_error(st, "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1) {
    return Status(StatusCode::kUnsupported, "cuBLASLt has no algorithm for a " + std::to_string(m) + "x" +
                                                std::to_string(k_) + "x" + std::to_string(n_) + " GEMM");
  }
  p.algo = res.algo;
  p.has_algo = true;
  p.workspace_bytes = res.workspaceSize;
  guard.keep = true;
  auto ins = plans_.emplace(m, p);
  return &ins.first->second;
}

Status LtGemm::run(const CudaArgs& a, const float* x, int64_t m, float* y) const {
  if (m == 0) return Status::ok();
  auto pl = plan_for(a.lt, m, a.env->lt_workspace_limit());
  if (!pl) return pl.status();
  const Plan& p = *pl.value();
  auto ws = a.env->lt_workspace(p.workspace_bytes);
  if (!ws) return ws.status();
  const void* bx = x;
  if (cuda_math_16bit(math_)) {
    auto s = a.env->scratch(size_t(m * k_) * 2);
    if (!s) return s.status();
    if (math_ == CudaMath::kFP16) TS_RETURN_IF_ERROR(launch_cast_f32_f16(x, s.value(), m * k_, a.stream));
    else TS_RETURN_IF_ERROR(launch_cast_f32_bf16(x, s.value(), m * k_, a.stream));
    bx = s.value();
  }
  const float alpha = 1.0f, beta = 0.0f;
  TS_CUBLAS(cublasLtMatmul(a.lt, p.op, &alpha, w_.get(), p.a, bx, p.b, &beta, y, p.c, y, p.c, &p.algo,
                           ws.value().data, ws.value().bytes, a.stream));
  if (act_ != CudaAct::kRelu) TS_RETURN_IF_ERROR(launch_activation(y, m * n_, act_, a.stream));
  return Status::ok();
}

}  // namespace ts::engine::cuda
