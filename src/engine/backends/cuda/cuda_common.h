#pragma once
// Internal to the CUDA backend: checked CUDA/cuBLASLt calls (every failure becomes a Status
// naming the call and the error), device buffers, device tensors, and the CudaKernel interface
// the CUDA executor runs.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/backend.h"

namespace ts::engine::cuda {

Status cuda_error(cudaError_t e, const char* call);
Status cublas_error(cublasStatus_t s, const char* call);

// Evaluates a CUDA runtime call; on failure returns a Status "CUDA error in <call>: <name> (<text>)".
#define TS_CUDA(call)                                                          \
  do {                                                                         \
    cudaError_t ts_cuda_e_ = (call);                                           \
    if (ts_cuda_e_ != cudaSuccess) return ::ts::engine::cuda::cuda_error(ts_cuda_e_, #call); \
  } while (0)
#define TS_CUBLAS(call)                                                        \
  do {                                                                         \
    cublasStatus_t ts_cublas_s_ = (call);                                      \
    if (ts_cublas_s_ != CUBLAS_STATUS_SUCCESS) return ::ts::engine::cuda::cublas_error(ts_cublas_s_, #call); \
  } while (0)
// After a kernel launch: the launch error, if any.
#define TS_CUDA_LAUNCHED(what) TS_CUDA(cudaGetLastError())

// Device memory, owned. Grows only (ensure); bytes() is what is held.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; o.bytes_ = 0; }
  // Makes room for `bytes` (reallocating, contents lost, when larger); *moved set when the
  // pointer changed.
  Status ensure(size_t bytes, bool* moved = nullptr);
  // Allocates and copies `bytes` from host memory (weights).
  Status upload(const void* host, size_t bytes);
  void reset();
  // Gives the memory to the process's block cache (cuda_block_cache.h) instead of cudaFree: only
  // for memory no queued work can touch any more (its streams synchronized).
  void release_to_cache();
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }
  template <typename T> T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// A tensor on the device: concrete dims; data points at `storage` or aliases another tensor's
// memory (Reshape/Squeeze/...: no copy) or a constant uploaded by the executor.
//
// Shape arithmetic (Shape → Gather → Unsqueeze → Concat → Reshape, as PyTorch exports dynamic
// reshapes) runs on the host: such int64 tensors have on_host set, their values in host_i64
// and data null; int64 constants carry host_i64 too. Kernels that need device data refuse an
// on_host input (need_device); the host values are recomputed on every eager run and capture,
// and depend only on the input dims, so a CUDA graph replay never needs them.
struct DevTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  void* data = nullptr;
  DeviceBuffer storage;
  bool on_host = false;
  std::vector<int64_t> host_i64;
  int64_t numel() const { return shape_numel(dims); }
  size_t bytes() const { return size_t(numel()) * dtype_size(dtype); }
  template <typename T> T* as() const { return static_cast<T*>(data); }
};

// kInvalidArgument when `t` is missing or lives on the host (shape arithmetic) where a kernel
// needs device memory.
Status need_device(const DevTensor* t, const char* what);

// The current device's multiprocessor count, read once per process (0 where it cannot be read).
int device_sm_count();

// The cuBLASLt workspace a GEMM may use (CudaRunEnv::lt_workspace).
// PERF NOTE: the heuristic may choose among algorithms needing up to this much (32 MiB, the
// size every context allocated at its first GEMM before; the same algorithms are chosen), but a
// context holds only what its chosen algorithms need.
inline constexpr size_t kLtWorkspaceMaxBytes = size_t(32) << 20;
struct LtWorkspace {
  void* data = nullptr;
  size_t bytes = 0;
};

// What the executor hands a kernel: its tensors, the stream, the cuBLASLt handle, and
// allocation through the executor (accounting, the workspace limit, graph invalidation).
class CudaRunEnv {
 public:
  virtual ~CudaRunEnv() = default;
  // Sets dtype/dims of `t` and makes room for it in its own storage (grows only).
  virtual Status alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) = 0;
  // Scratch device memory of at least `bytes` (256-byte aligned), valid until the kernel
  // returns and its queued work finishes; one region shared by every kernel in turn. More than
  // the workspace limit → kOutOfRange naming both numbers.
  virtual Result<void*> scratch(size_t bytes) = 0;
  // The most cuBLASLt workspace a GEMM may choose an algorithm for (the heuristic's limit, in
  // bytes): kLtWorkspaceMaxBytes, or a quarter of the workspace limit when that is smaller.
  virtual size_t lt_workspace_limit() const = 0;
  // The cuBLASLt workspace, at least `bytes` (what the GEMM's chosen algorithm needs; 0: none is
  // allocated and data may be null). It grows only, to the most any GEMM that ran needed: a plan
  // without cuBLASLt GEMMs (the fused GRU/LSTM stacks and encoder) holds none, one whose GEMMs
  // choose algorithms without workspace (most at small batches) holds none either. Counted
  // against the workspace limit like scratch; growing under capture interrupts it like scratch.
  virtual Result<LtWorkspace> lt_workspace(size_t bytes) = 0;
};

struct CudaArgs {
  std::span<DevTensor* const> in;   // nullptr for an omitted optional input
  std::span<DevTensor* const> out;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  CudaRunEnv* env = nullptr;
  const DevTensor* input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
};

// A kernel of the CUDA backend. launch() computes output dims on the host, allocates outputs
// through env, and queues device work on a.stream (never synchronizes: the executor may be
// capturing a CUDA graph). Weights are packed and uploaded when the kernel is made and are
// shared by every context.
class CudaKernel : public Kernel {
 public:
  // Host tensors: refused (the CUDA executor calls launch()).
  Status run(const KernelArgs& a) const override;
  virtual Status launch(const CudaArgs& a) const = 0;
  // Whether launch() reads input i from its device tensor. Constant inputs a kernel packed
  // itself (weights) return false and are never uploaded per context.
  virtual bool reads_input(size_t i) const { (void)i; return true; }
  // Device bytes of the weights this kernel holds (inspect, memory reports).
  virtual int64_t weight_bytes() const { return 0; }
};

// A kernel whose launch() is `f(args)`: for ops whose whole work is one function (host shape
// arithmetic, LayerNorm, attention, Conv launches).
template <typename F>
class FnKernel final : public CudaKernel {
 public:
  explicit FnKernel(F f) : f_(std::move(f)) {}
  Status launch(const CudaArgs& a) const override { return f_(a); }

 private:
  F f_;
};
template <typename F>
Result<std::unique_ptr<Kernel>> make_fn_kernel(F f) {
  return std::unique_ptr<Kernel>(new FnKernel<F>(std::move(f)));
}

// How matrix products run: FP32 (CUBLAS_COMPUTE_32F), TF32 tensor cores for FP32 data, or
// FP16 / BF16 weights and operands with FP32 accumulation (activations between layers stay
// FP32 at every precision).
enum class CudaMath : int { kFP32 = 0, kTF32, kFP16, kBF16 };
// INT8 plans run every layer not marked int8 in FP16 (TensorRT's INT8 mode likewise allows FP16).
inline CudaMath cuda_math(const KernelOptions& o) {
  if (o.precision == Precision::kFP16 || o.precision == Precision::kINT8) return CudaMath::kFP16;
  if (o.precision == Precision::kBF16) return CudaMath::kBF16;
  return o.tf32 ? CudaMath::kTF32 : CudaMath::kFP32;
}
inline bool cuda_math_16bit(CudaMath m) { return m == CudaMath::kFP16 || m == CudaMath::kBF16; }

// Kernel launchers (cuda_*.cu). All queue work on `stream` and return the launch status.
enum class CudaAct : int { kNone = 0, kRelu, kSigmoid, kTanh, kGelu };
bool cuda_act_from_name(const std::string& name, CudaAct* act);
Status launch_activation(float* x, int64_t n, CudaAct act, cudaStream_t stream);
Status launch_cast_f32_f16(const float* in, void* out_f16, int64_t n, cudaStream_t stream);
Status launch_cast_f32_bf16(const float* in, void* out_bf16, int64_t n, cudaStream_t stream);

constexpr int kCudaMaxRank = 6;
struct StridedDims {
  int rank = 0;
  int64_t dims[kCudaMaxRank] = {};     // output dims
  int64_t strides[kCudaMaxRank] = {};  // input strides (elements) per output axis; 0 = broadcast
};
// out[i] = in[strided index of i]: Transpose, Expand; elem_bytes 1, 2, 4 or 8.
Status launch_strided_copy(const void* in, void* out, const StridedDims& d, int elem_bytes, cudaStream_t stream);

enum class CudaUnary : int { kRelu = 0, kSigmoid, kTanh, kErf, kSqrt, kExp, kNeg, kAbs, kGelu };
enum class CudaBinary : int { kAdd = 0, kSub, kMul, kDiv, kPow };
Status launch_unary(const float* in, float* out, int64_t n, CudaUnary op, cudaStream_t stream);
// out = a op b with numpy broadcasting: sa/sb hold each input's strides per output axis.
Status launch_binary(const float* a, const float* b, float* out, const StridedDims& sa, const StridedDims& sb,
                     CudaBinary op, cudaStream_t stream);
// Softmax over the last axis of [rows, cols].
Status launch_softmax(const float* in, float* out, int64_t rows, int64_t cols, cudaStream_t stream);
// out[o, j, i] = in[o, idx[j], i] for o < outer, j < n_idx, i < inner (elements of elem_bytes).
Status launch_gather(const void* in, const int64_t* idx_dev, void* out, int64_t outer, int64_t axis_len,
                     int64_t n_idx, int64_t inner, int elem_bytes, cudaStream_t stream);

}  // namespace ts::engine::cuda
