#pragma once
// GRU and LSTM kernels of the cpu backend (cpu_rnn.cpp). The op registry (add_rnn_ops in
// cpu_kernels.h) makes FP32 kernels; a plan built at precision bf16 makes them here with
// bf16_weights, which stores the recurrent weights R as BF16 (the "avx2_blocked" tactic only;
// "avx2_packed" stays FP32) while every product is still accumulated in FP32.
#include <string>

#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {

// The checks of a GRU (lstm false) or LSTM node that every tactic shares (forward, default
// activations, weight shapes); runtime weights of unknown shape pass (checked when they arrive).
Status check_rnn(const Graph& g, const Node& n, bool lstm);

Result<KernelPtr> make_rnn_kernel(const Graph& g, const Node& n, const std::string& tactic, bool bf16_weights);

// The "onednn" tactic (cpu_rnn_onednn.cpp): oneDNN's lbr_gru / gru / lstm primitives. Not for
// nodes with sequence_lens (onednn_rnn_supports false).
bool onednn_rnn_supports(const Node& n);
Result<KernelPtr> make_rnn_onednn(const Graph& g, const Node& n);

// Whether a kernel made by make_rnn_kernel (or make_rnn_stack_kernel, cpu_rnn_stack.h) holds
// BF16 weights (false for any other kernel).
bool rnn_kernel_is_bf16(const Kernel& k);

}  // namespace ts::engine::cpu
