#include "engine/backends/cuda/cuda_common.h"

#include "engine/backends/cuda/cuda_block_cache.h"

namespace ts::engine::cuda {

Status cuda_error(cudaError_t e, const char* call) {
  return Status(StatusCode::kInternal, std::string("CUDA error in ") + call + ": " + cudaGetErrorName(e) + " (" +
                                           cudaGetErrorString(e) + ")");
}

Status cublas_error(cublasStatus_t s, const char* call) {
  return Status(StatusCode::kInternal, std::string("cuBLAS error in ") + call + ": " + cublasLtGetStatusName(s) +
                                           " (" + cublasLtGetStatusString(s) + ")");
}

Status DeviceBuffer::ensure(size_t bytes, bool* moved) {
  if (moved) *moved = false;
  if (bytes <= bytes_ && p_) return Status::ok();
  reset();
  size_t n = (bytes + 255) & ~size_t(255);
  if (n == 0) n = 256;
  void* p = nullptr;
  size_t got = n;
  if (!block_cache_take(BlockKind::kDevice, n, &p, &got)) {
    cudaError_t e = cudaMalloc(&p, n);
    if (e == cudaErrorMemoryAllocation && block_cache_trim(BlockKind::kDevice) > 0) {
      cudaGetLastError();
      e = cudaMalloc(&p, n);  // once more, with the cached blocks freed
    }
    if (e != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free allocation error
      return Status(StatusCode::kOutOfRange, "cudaMalloc of " + std::to_string(n) + " bytes failed: " + cudaGetErrorString(e));
    }
  }
  p_ = p;
  bytes_ = got;
  if (moved) *moved = true;
  return Status::ok();
}

Status DeviceBuffer::upload(const void* host, size_t bytes) {
  TS_RETURN_IF_ERROR(ensure(bytes));
  if (bytes) TS_CUDA(cudaMemcpy(p_, host, bytes, cudaMemcpyHostToDevice));
  return Status::ok();
}

void DeviceBuffer::reset() {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::release_to_cache() {
  block_cache_give(BlockKind::kDevice, p_, bytes_);
  p_ = nullptr;
  bytes_ = 0;
}

Status CudaKernel::run(const KernelArgs&) const {
  return Status(StatusCode::kInternal, "a cuda kernel runs only inside the cuda executor");
}

bool cuda_act_from_name(const std::string& name, CudaAct* act) {
  if (name == "none") *act = CudaAct::kNone;
  else if (name == "relu") *act = CudaAct::kRelu;
  else if (name == "sigmoid") *act = CudaAct::kSigmoid;
  else if (name == "tanh") *act = CudaAct::kTanh;
  else if (name == "gelu") *act = CudaAct::kGelu;
  else return false;
  return true;
}

int device_sm_count() {
  static const int n = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return v;
  }();
  return n;
}

Status need_device(const DevTensor* t, const char* what) {
  if (!t) return Status(StatusCode::kInvalidArgument, std::string("needs ") + what);
  if (t->on_host && t->numel() > 0) {
    return Status(StatusCode::kInvalidArgument, std::string(what) + " is int64 shape arithmetic kept on the host; " +
                                                    "this op needs it on the device (not supported by the cuda backend)");
  }
  return Status::ok();
}

}  // namespace ts::engine::cuda
