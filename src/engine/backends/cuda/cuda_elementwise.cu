// Elementwise, data-movement and softmax kernels of the CUDA backend (grid-stride loops; the
// shapes these models produce are small, so one simple kernel per op is enough for now).
#include <cuda_fp16.h>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b > 65535 * 8) b = 65535 * 8;
  return int(b < 1 ? 1 : b);
}

__device__ __forceinline__ float sigmoidf_acc(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__device__ __forceinline__ float apply_act(float v, CudaAct act) {
  switch (act) {
    case CudaAct::kRelu: return v > 0.0f ? v : 0.0f;
    case CudaAct::kSigmoid: return sigmoidf_acc(v);
    case CudaAct::kTanh: return tanhf(v);
    case CudaAct::kGelu: return gelu_erf(v);
    case CudaAct::kNone: break;
  }
  return v;
}

__global__ void act_kernel(float* x, int64_t n, CudaAct act) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = apply_act(x[i], act);
}

__global__ void cast_f16_kernel(const float* in, __half* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(in[i]);
}

template <typename T>
__global__ void strided_copy_kernel(const T* in, T* out, StridedDims d, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int a = d.rank - 1; a >= 0; --a) {
      int64_t q = rem % d.dims[a];
      rem /= d.dims[a];
      off += q * d.strides[a];
    }
    out[i] = in[off];
  }
}

__device__ __forceinline__ float unary_op(float v, CudaUnary op) {
  switch (op) {
    case CudaUnary::kRelu: return v > 0.0f ? v : 0.0f;
    case CudaUnary::kSigmoid: return sigmoidf_acc(v);
    case CudaUnary::kTanh: return tanhf(v);
    case CudaUnary::kErf: return erff(v);
    case CudaUnary::kSqrt: return sqrtf(v);
    case CudaUnary::kExp: return expf(v);
    case CudaUnary::kNeg: return -v;
    case CudaUnary::kAbs: return fabsf(v);
    case CudaUnary::kGelu: return gelu_erf(v);
  }
  return v;
}

__global__ void unary_kernel(const float* in, float* out, int64_t n, CudaUnary op) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = unary_op(in[i], op);
}

__global__ void binary_kernel(const float* a, const float* b, float* out, StridedDims sa, StridedDims sb,
                              int64_t n, CudaBinary op) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, oa = 0, ob = 0;
    for (int ax = sa.rank - 1; ax >= 0; --ax) {
      int64_t q = rem % sa.dims[ax];
      rem /= sa.dims[ax];
      oa += q * sa.strides[ax];
      ob += q * sb.strides[ax];
    }
    float x = a[oa], y = b[ob], r = 0.0f;
    switch (op) {
      case CudaBinary::kAdd: r = x + y; break;
      case CudaBinary::kSub: r = x - y; break;
      case CudaBinary::kMul: r = x * y; break;
      case CudaBinary::kDiv: r = x / y; break;
      case CudaBinary::kPow: r = powf(x, y); break;
    }
    out[i] = r;
  }
}

// One warp per row.
__global__ void softmax_kernel(const float* in, float* out, int64_t rows, int64_t cols) {
  int64_t row = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* x = in + row * cols;
  float* y = out + row * cols;
  float m = -INFINITY;
  for (int64_t c = lane; c < cols; c += 32) m = fmaxf(m, x[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) s += expf(x[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  float inv = 1.0f / s;
  for (int64_t c = lane; c < cols; c += 32) y[c] = expf(x[c] - m) * inv;
}

template <typename T>
__global__ void gather_kernel(const T* in, const int64_t* idx, T* out, int64_t outer, int64_t axis_len,
                              int64_t n_idx, int64_t inner) {
  int64_t n = outer * n_idx * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t in_i = i % inner, rest = i / inner, j = rest % n_idx, o = rest / n_idx;
    int64_t k = idx[j];
    if (k < 0) k += axis_len;
    out[i] = in[(o * axis_len + k) * inner + in_i];
  }
}

}  // namespace

Status launch_activation(float* x, int64_t n, CudaAct act, cudaStream_t stream) {
  if (act == CudaAct::kNone || n == 0) return Status::ok();
  act_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, act);
  TS_CUDA_LAUNCHED("activation");
  return Status::ok();
}

Status launch_cast_f32_f16(const float* in, void* out_f16, int64_t n, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  cast_f16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, static_cast<__half*>(out_f16), n);
  TS_CUDA_LAUNCHED("cast f32→f16");
  return Status::ok();
}

Status launch_strided_copy(const void* in, void* out, const StridedDims& d, int elem_bytes, cudaStream_t stream) {
  int64_t n = 1;
  for (int i = 0; i < d.rank; ++i) n *= d.dims[i];
  if (n == 0) return Status::ok();
  switch (elem_bytes) {
    case 1: strided_copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), d, n); break;
    case 2: strided_copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), d, n); break;
    case 4: strided_copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), d, n); break;
    case 8: strided_copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), d, n); break;
    default: return Status(StatusCode::kUnsupported, "strided copy of " + std::to_string(elem_bytes) + "-byte elements");
  }
  TS_CUDA_LAUNCHED("strided copy");
  return Status::ok();
}

Status launch_unary(const float* in, float* out, int64_t n, CudaUnary op, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  unary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n, op);
  TS_CUDA_LAUNCHED("unary");
  return Status::ok();
}

Status launch_binary(const float* a, const float* b, float* out, const StridedDims& sa, const StridedDims& sb,
                     CudaBinary op, cudaStream_t stream) {
  int64_t n = 1;
  for (int i = 0; i < sa.rank; ++i) n *= sa.dims[i];
  if (n == 0) return Status::ok();
  binary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, out, sa, sb, n, op);
  TS_CUDA_LAUNCHED("binary");
  return Status::ok();
}

Status launch_softmax(const float* in, float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return Status::ok();
  int64_t blocks = (rows + 7) / 8;
  softmax_kernel<<<unsigned(blocks), 256, 0, stream>>>(in, out, rows, cols);
  TS_CUDA_LAUNCHED("softmax");
  return Status::ok();
}

Status launch_gather(const void* in, const int64_t* idx_dev, void* out, int64_t outer, int64_t axis_len,
                     int64_t n_idx, int64_t inner, int elem_bytes, cudaStream_t stream) {
  int64_t n = outer * n_idx * inner;
  if (n == 0) return Status::ok();
  switch (elem_bytes) {
    case 4: gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint32_t*>(in), idx_dev, static_cast<uint32_t*>(out), outer, axis_len, n_idx, inner); break;
    case 8: gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint64_t*>(in), idx_dev, static_cast<uint64_t*>(out), outer, axis_len, n_idx, inner); break;
    case 2: gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint16_t*>(in), idx_dev, static_cast<uint16_t*>(out), outer, axis_len, n_idx, inner); break;
    case 1: gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const uint8_t*>(in), idx_dev, static_cast<uint8_t*>(out), outer, axis_len, n_idx, inner); break;
    default: return Status(StatusCode::kUnsupported, "gather of " + std::to_string(elem_bytes) + "-byte elements");
  }
  TS_CUDA_LAUNCHED("gather");
  return Status::ok();
}

}  // namespace ts::engine::cuda
