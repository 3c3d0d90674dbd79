// Elementwise, data-movement and softmax kernels of the CUDA backend (grid-stride loops; the
// shapes these models produce are small, so one simple kernel per op is enough for now).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>
#include <string>

#include "engine/backends/cuda/cuda_launch.h"

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

__global__ void cast_bf16_kernel(const float* in, __nv_bfloat16* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

// I: the index type; 32-bit (signed: strides may be negative, Slice with steps < 0) when every
// index fits (the div/mod per axis is the kernel's cost).
template <typename T, typename I>
__global__ void strided_copy_kernel(const T* __restrict__ in, T* __restrict__ out, StridedDims d, I n) {
  for (I i = blockIdx.x * I(blockDim.x) + threadIdx.x; i < n; i += I(gridDim.x) * blockDim.x) {
    I rem = i, off = 0;
    for (int a = d.rank - 1; a >= 0; --a) {
      I q = rem % I(d.dims[a]);
      rem /= I(d.dims[a]);
      off += q * I(d.strides[a]);
    }
    out[i] = in[off];
  }
}

// 32-bit indices: kCopyUnroll elements per thread, all loads issued before the stores.
// On sm_90 (PERF NOTE, programmatic dependent launch): launched after another kernel as a
// dependent (launch_strided_copy_dependent: the zero-copy copy-out), it waits for that kernel
// before reading; and it lets a dependent launched after it start at once (the GRU wavefront
// after the zero-copy copy-in loads its weights into registers meanwhile and waits for the copy
// before reading x). Both instructions are no-ops when no dependency was set up.
constexpr int kCopyUnroll = 4;
template <typename T>
__global__ void strided_copy_kernel32(const T* __restrict__ in, T* __restrict__ out, StridedDims d, int32_t n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  const int32_t base = blockIdx.x * (blockDim.x * kCopyUnroll) + threadIdx.x;
  T v[kCopyUnroll];
#pragma unroll
  for (int u = 0; u < kCopyUnroll; ++u) {
    const int32_t i = base + u * int32_t(blockDim.x);
    if (i >= n) break;
    int32_t rem = i, off = 0;
    for (int a = d.rank - 1; a >= 0; --a) {
      const int32_t dim = int32_t(d.dims[a]);
      const int32_t q = rem % dim;
      rem /= dim;
      off += q * int32_t(d.strides[a]);
    }
    v[u] = in[off];
  }
#pragma unroll
  for (int u = 0; u < kCopyUnroll; ++u) {
    const int32_t i = base + u * int32_t(blockDim.x);
    if (i < n) out[i] = v[u];
  }
}

template <typename T>
void strided_copy_as(const void* in, void* out, const StridedDims& d, int64_t n, cudaStream_t stream,
                     bool programmatic = false) {
  int64_t extent = 0;  // the largest |input offset|
  for (int i = 0; i < d.rank; ++i) extent += (d.dims[i] - 1) * (d.strides[i] < 0 ? -d.strides[i] : d.strides[i]);
  if (n < (int64_t(1) << 31) && extent < (int64_t(1) << 31)) {
    const int64_t blocks = (n + kThreads * kCopyUnroll - 1) / (kThreads * kCopyUnroll);
    if (programmatic) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(unsigned(blocks));
      cfg.blockDim = dim3(kThreads);
      cfg.stream = stream;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      cudaLaunchKernelEx(&cfg, strided_copy_kernel32<T>, static_cast<const T*>(in), static_cast<T*>(out), d, int32_t(n));
      return;
    }
    strided_copy_kernel32<T><<<unsigned(blocks), kThreads, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), d, int32_t(n));
  } else {
    strided_copy_kernel<T, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), d, n);
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

__device__ __forceinline__ float binary_op(float x, float y, CudaBinary op) {
  switch (op) {
    case CudaBinary::kAdd: return x + y;
    case CudaBinary::kSub: return x - y;
    case CudaBinary::kMul: return x * y;
    case CudaBinary::kDiv: return x / y;
    case CudaBinary::kPow: return powf(x, y);
  }
  return x;
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
    out[i] = binary_op(a[oa], b[ob], op);
  }
}

// a dense; b dense (b_len = n), a trailing row repeated (b_len = its length) or a scalar (1).
__global__ void binary_dense_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                                    uint32_t n, uint32_t b_len, CudaBinary op) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = binary_op(a[i], b[b_len == n ? i : i % b_len], op);
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

Status launch_cast_f32_bf16(const float* in, void* out_bf16, int64_t n, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  cast_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out_bf16), n);
  TS_CUDA_LAUNCHED("cast f32→bf16");
  return Status::ok();
}

// PERF NOTE: Transpose and Slice of the Transformer move [batch·T, 64]-sized tensors several
// times per layer; with 64-bit div/mod per axis per element the copies were most of its time at
// batch 4096. 32-bit indices when they fit, and 16-byte elements when the last axis is contiguous
// and everything is 16-byte aligned (a quarter of the index math, vector loads), cut that time by
// more than half; 4 elements per thread with the loads issued before the stores (latency hiding)
// helped again, together with the attention and LayerNorm changes of the same commit (not
// separated). Numbers: bench/results/engine-cuda-h200-20261130-1215.json, -1222.json, -1247.json
// (docs/performance.md, history rows ca71c51 and ce46680).
namespace {

Status strided_copy(const void* in, void* out, const StridedDims& d, int elem_bytes, cudaStream_t stream,
                    bool programmatic) {
  int64_t n = 1;
  for (int i = 0; i < d.rank; ++i) n *= d.dims[i];
  if (n == 0) return Status::ok();
  if (d.rank > 0 && elem_bytes == 4 && d.strides[d.rank - 1] == 1 && d.dims[d.rank - 1] % 4 == 0 &&
      reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
    StridedDims v = d;
    bool ok = true;
    for (int i = 0; i + 1 < d.rank; ++i) {
      ok = ok && d.strides[i] % 4 == 0;
      v.strides[i] = d.strides[i] / 4;
    }
    v.dims[d.rank - 1] = d.dims[d.rank - 1] / 4;
    if (ok) {
      strided_copy_as<uint4>(in, out, v, n / 4, stream, programmatic);
      TS_CUDA_LAUNCHED("strided copy");
      return Status::ok();
    }
  }
  switch (elem_bytes) {
    case 1: strided_copy_as<uint8_t>(in, out, d, n, stream, programmatic); break;
    case 2: strided_copy_as<uint16_t>(in, out, d, n, stream, programmatic); break;
    case 4: strided_copy_as<uint32_t>(in, out, d, n, stream, programmatic); break;
    case 8: strided_copy_as<uint64_t>(in, out, d, n, stream, programmatic); break;
    default: return Status(StatusCode::kUnsupported, "strided copy of " + std::to_string(elem_bytes) + "-byte elements");
  }
  TS_CUDA_LAUNCHED("strided copy");
  return Status::ok();
}

}  // namespace

Status launch_strided_copy(const void* in, void* out, const StridedDims& d, int elem_bytes, cudaStream_t stream) {
  return strided_copy(in, out, d, elem_bytes, stream, false);
}

Status launch_strided_copy_dependent(const void* in, void* out, const StridedDims& d, int elem_bytes,
                                     cudaStream_t stream) {
  return strided_copy(in, out, d, elem_bytes, stream, programmatic_launch_ok(stream));
}

int strided_copy_kernel_elem_bytes(const void* func) {
  if (!func) return 0;
  if (func == reinterpret_cast<const void*>(strided_copy_kernel32<uint8_t>)) return 1;
  if (func == reinterpret_cast<const void*>(strided_copy_kernel32<uint16_t>)) return 2;
  if (func == reinterpret_cast<const void*>(strided_copy_kernel32<uint32_t>)) return 4;
  if (func == reinterpret_cast<const void*>(strided_copy_kernel32<uint64_t>)) return 8;
  if (func == reinterpret_cast<const void*>(strided_copy_kernel32<uint4>)) return 16;
  return 0;
}

bool programmatic_launch_ok(cudaStream_t stream) {
  static const bool enabled = [] {
    const char* env = std::getenv("TS_CUDA_PDL");
    if (env && std::string(env) == "0") return false;
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return major >= 9;
  }();
  if (!enabled) return false;
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  if (cudaStreamGetCaptureInfo(stream, &st, nullptr, nullptr, &deps, nullptr, &n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (st != cudaStreamCaptureStatusActive) return st == cudaStreamCaptureStatusNone;
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  if (n != 1 || !deps || cudaGraphNodeGetType(deps[0], &type) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return type == cudaGraphNodeTypeKernel;
}

Status launch_unary(const float* in, float* out, int64_t n, CudaUnary op, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  unary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n, op);
  TS_CUDA_LAUNCHED("unary");
  return Status::ok();
}

namespace {

// Length of the dense trailing block `s` reads (1: scalar, n: all of it), or 0 when its
// broadcast pattern is anything else.
int64_t dense_suffix(const StridedDims& s, int64_t n) {
  int64_t st = 1;
  int ax = s.rank - 1;
  for (; ax >= 0 && (s.strides[ax] == st || s.dims[ax] == 1); --ax) st *= s.dims[ax];
  for (int q = ax; q >= 0; --q) {
    if (s.strides[q] != 0 && s.dims[q] != 1) return 0;
  }
  return st == 0 ? 0 : (st > n ? 0 : st);
}

}  // namespace

// PERF NOTE: the residual Adds of the Transformer are dense + dense; with the general kernel's
// 64-bit div/mod per axis they cost several times a memory pass at batch 4096.
Status launch_binary(const float* a, const float* b, float* out, const StridedDims& sa, const StridedDims& sb,
                     CudaBinary op, cudaStream_t stream) {
  int64_t n = 1;
  for (int i = 0; i < sa.rank; ++i) n *= sa.dims[i];
  if (n == 0) return Status::ok();
  const int64_t la = dense_suffix(sa, n), lb = dense_suffix(sb, n);
  if (n < (int64_t(1) << 31) && la == n && lb > 0 && n % lb == 0) {
    binary_dense_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, out, uint32_t(n), uint32_t(lb), op);
  } else {
    binary_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, out, sa, sb, n, op);
  }
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
