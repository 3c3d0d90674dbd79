#pragma once
// Builder passes over the graph IR, run in this order by run_passes():
//   fold_constants   → evaluate nodes whose inputs are all constant (Shape of known dims too)
//   infer_shapes     → dtype and (symbolic) shape of every value
//   remove_dead      → drop nodes whose outputs reach no graph output
//   fuse             → MatMul/Gemm + bias + activation → FusedGemm; decomposed LayerNorm →
//                      LayerNormalization; GRU/LSTM layers → FusedGRU/FusedLSTM (with their
//                      surrounding Squeeze/Transpose glue); attention block → FusedAttention
//   select_layout    → backend-preferred layouts (e.g. pre-transposed GEMM weights)
// Each pass records what it did in the PassLog (shown by `ticksentry inspect`).
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/ir/graph.h"

namespace ts::engine {

struct PassLog {
  std::vector<std::string> lines;   // "fuse: FusedGemm /fc/Gemm ← [/fc/Gemm, /act/Relu]"
};

Status fold_constants(Graph& g, PassLog& log);
Status infer_shapes(Graph& g, PassLog& log);
Status remove_dead(Graph& g, PassLog& log);
Status fuse(Graph& g, PassLog& log);
Status select_layout(Graph& g, PassLog& log);
Status run_passes(Graph& g, PassLog& log);

// Not in run_passes: the builder runs it once the backend is known. Stacked GRU layers (GRU →
// Squeeze → GRU → …, as PyTorch exports num_layers = N ≥ 2) → one GRUStack node, stacked LSTM
// layers → one LSTMStack node, where `backend_runs` accepts it; then the model's input Transpose
// and head (last step → Gemm → Sigmoid) into that node, or into a single layer made a stack of
// one (fuse_rnn_stack.cpp). Returns the number of stack fusions (2 layers or more).
int fuse_rnn_stack(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs);

// Not in run_passes: the builder runs it for FP16 plans once the backend is known. A whole
// nn.TransformerEncoderLayer (post-norm, as PyTorch exports it; with the input projection before
// it where there is one) → one TransformerEncoderLayer node where `backend_runs` accepts it; the
// region's glue is proved on the CPU backend against the layer's definition first
// (fuse_encoder.cpp). max_seq: the longest sequence the plan's profiles allow, recorded on the
// node for the backend's check. Returns the number of fusions.
int fuse_encoder(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs, int64_t max_seq);

// Not in run_passes: the builder runs it once the backend is known. A 1-D Conv (stride 1, group
// 1) with the TCN glue PyTorch exports around it (input Transpose, causal-trim Slice, Relu,
// residual Add) → one FusedConv1d node where `backend_runs` accepts it (fuse_conv1d.cpp).
// Returns the number of fusions.
int fuse_conv1d(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs);

}  // namespace ts::engine
