#pragma once
// Internal to the CUDA backend: the op table each kernel family contributes to (like the CPU
// backend's cpu_kernels.h), built for one precision.
#include <functional>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

using CudaKernelPtr = std::unique_ptr<Kernel>;

struct CudaOpInfo {
  std::string op;
  // Extra checks beyond the op name (attributes, constant weights); null = none.
  std::function<Status(const Graph&, const Node&)> check;
  std::function<Result<CudaKernelPtr>(const Graph&, const Node&, CudaMath, const std::string& tactic)> make;
  std::vector<std::string> tactics{"cuda"};  // first = default; timed by the builder when > 1
};

void add_gemm_ops(std::vector<CudaOpInfo>& ops);        // cuda_gemm_ops.cpp
void add_rnn_ops(std::vector<CudaOpInfo>& ops);         // cuda_rnn_ops.cpp
void add_elementwise_ops(std::vector<CudaOpInfo>& ops); // cuda_shape_ops.cpp
void add_shape_ops(std::vector<CudaOpInfo>& ops);       // cuda_shape_ops.cpp
void add_host_ops(std::vector<CudaOpInfo>& ops);        // cuda_host_ops.cpp
void add_layer_ops(std::vector<CudaOpInfo>& ops);       // cuda_layer_ops.cpp
void add_conv_ops(std::vector<CudaOpInfo>& ops);        // cuda_conv_ops.cpp

// Host shape arithmetic (cuda_host_ops.cpp): the int64 values of `t` when they are on the host
// (computed from shapes, or a constant), else null.
const std::vector<int64_t>* host_ints(const DevTensor* t);
// Add/Sub/Mul/Div/Pow of two host int64 tensors (scalar or equal shapes).
Status run_binary_host(CudaBinary op, const CudaArgs& a);
// Gather of host int64 data along `axis` with constant indices.
Status gather_host(const DevTensor& x, int64_t axis, const std::vector<int64_t>& idx, const std::vector<int64_t>& idx_dims,
                   DevTensor& o);

// "node <name>: op <op> <what>" as kUnsupported.
Status unsupported(const Node& n, const std::string& what);
Status bad_input(const std::string& what);
bool is_const(const Graph& g, ValueId v);
const float* const_f32(const Graph& g, ValueId v);

}  // namespace ts::engine::cuda
