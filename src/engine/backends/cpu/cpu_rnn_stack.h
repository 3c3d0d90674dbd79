#pragma once
// GRUStack / LSTMStack on the cpu backend (cpu_rnn_stack.cpp): the node fuse_rnn_stack makes of
// PyTorch's nn.GRU / nn.LSTM(num_layers = N) with its input transpose and head folded in
// (engine/ir/rnn_weights.h, RnnStackLayout). Each layer runs one of the single-layer kernels of
// cpu_rnn.h; the layers' Y stay in the kernel's per-context state, never in the plan's tensors.
//
// Tactics: "layers:<t>" runs every layer with tactic t (avx2_blocked, avx2_packed, onednn);
// "layers:<t1>,<t2>" runs the first layer with t1 and the others with t2 (the first layer's input
// width differs from the rest, which share one shape). The builder times them like any tactic.
#include <string>
#include <vector>

#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {

// Checks a GRUStack/LSTMStack node: its input layout, constant f32 weights of every layer (each
// as check_rnn would check the layer alone), and the head (constant weights, activation none or
// sigmoid).
Status check_rnn_stack(const Graph& g, const Node& n);

// The kernel for `tactic` ("" = the first of rnn_stack_tactics). bf16_weights: each layer's
// "avx2_blocked" recurrent weights stored as BF16 (cpu_rnn.h).
Result<KernelPtr> make_rnn_stack_kernel(const Graph& g, const Node& n, const std::string& tactic, bool bf16_weights);

// The candidates the builder times for this node (first = default).
std::vector<std::string> rnn_stack_tactics(const Graph& g, const Node& n);

// Whether k is a stack kernel with at least one BF16-weights layer.
bool rnn_stack_kernel_is_bf16(const Kernel& k);

void add_rnn_stack_ops(std::vector<OpInfo>& ops);

}  // namespace ts::engine::cpu
