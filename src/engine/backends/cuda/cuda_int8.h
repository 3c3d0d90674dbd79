#pragma once
// INT8 dense layers of the CUDA backend: y[M,N] = act(dequant(q(x)[M,K] · Wq[N,K]ᵀ) + bias),
// the layers an INT8 plan marks int8 (engine/quantize.h).
//
// One kernel does it all: each block loads a 64-row tile of x in fp32, quantizes it to INT8 at
// the layer's calibrated input scale (round to nearest, saturate to ±127) while packing four
// codes per 32-bit word into shared memory, multiplies with the INT8 weights by dp4a (INT8×INT8
// → INT32 accumulation), and in the epilogue dequantizes with in_scale · w_scale[n] (per output
// channel), adds the fp32 bias and applies the activation, writing fp32. Activations between
// layers stay fp32, as at every other precision of this backend.
//
// PERF NOTE: these models' dense layers have K, N ≤ 256 and M = batch × T rows up to ~500k, so
// the layer is bound by reading x and writing y (fp32), not by the multiply; fusing the input
// quantization into the GEMM's tile load saves the separate cast pass the FP16 path makes
// (cuda_gemm.h), and dp4a reaches far more than the memory rate at these K. cuBLASLt's INT8
// (IMMA) GEMMs need the input quantized to a separate buffer first and (for the
// CUBLAS_COMPUTE_32I + int32 output kinds) give up the bias epilogue, which costs a pass each.
#include <span>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

class Int8Gemm {
 public:
  // w_nk: host fp32 [N, K] (one output channel per row); w_scales: N per-channel scales;
  // in_scale: the input's INT8 scale; bias: host [N] or null.
  static Result<std::unique_ptr<Int8Gemm>> create(const float* w_nk, int64_t k, int64_t n, const float* bias,
                                                  CudaAct act, float in_scale, std::span<const float> w_scales);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t weight_bytes() const { return int64_t(wq_.bytes() + dequant_.bytes() + bias_.bytes()); }
  // y[m,n] (fp32) from x[m,k] (fp32) on a.stream.
  Status run(const CudaArgs& a, const float* x, int64_t m, float* y) const;

 private:
  Int8Gemm() = default;
  int64_t k_ = 0, n_ = 0, k_words_ = 0;
  float inv_in_scale_ = 1.0f;
  CudaAct act_ = CudaAct::kNone;
  DeviceBuffer wq_;       // int8 [N, 4·k_words] (K zero-padded to a multiple of 4)
  DeviceBuffer dequant_;  // fp32 [N]: in_scale · w_scale[n]
  DeviceBuffer bias_;     // fp32 [N] or empty
};

// The kernel behind Int8Gemm::run (cuda_int8_kernels.cu). wq: [n, k_words] packed words.
Status launch_int8_gemm(const float* x, int64_t m, int64_t k, const int32_t* wq, int64_t k_words, int64_t n,
                        float inv_in_scale, const float* dequant, const float* bias, CudaAct act, float* y,
                        cudaStream_t stream);

}  // namespace ts::engine::cuda
