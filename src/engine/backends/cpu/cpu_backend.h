#pragma once
// The CPU backend: FP32 kernels (oneDNN matmul with post-ops, own AVX2 GEMM and GRU/LSTM
// recurrences, reference loops for glue ops) behind engine/backend.h. One kernel family per
// file: cpu_elementwise, cpu_gemm_ops, cpu_norm, cpu_conv, cpu_shape_ops, cpu_rnn.
#include <string>
#include <vector>

#include "engine/backend.h"

namespace ts::engine {

// The process-wide CPU backend (immutable, thread-safe).
const Backend& cpu_backend();
// The op types the CPU backend registers (ONNX ops and the engine's fused ops), sorted: what
// the engine claims to run (the conformance test selects ONNX's node tests by it).
std::vector<std::string> cpu_backend_ops();

}  // namespace ts::engine
