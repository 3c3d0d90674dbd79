#pragma once
// ONNX op versions (opsets 7–21) → the engine's one form of each op. The importer calls this
// for every node of the default domain. An op whose definition did not change in a way the
// engine sees (new types, optional outputs) is taken as is at any opset; the ops that changed
// are rewritten into today's form:
//   Softmax/LogSoftmax < 13  flatten to 2-D at `axis` (default 1), normalize, reshape back
//   Slice < 10               starts/ends/axes attributes → constant inputs
//   Max/Min (any)            variadic → a chain of two-input nodes (one input: Identity)
// and those whose older/newer forms the passes and backends read directly are kept
// (Squeeze/Unsqueeze/ReduceMean axes as attribute < 13/18 or input; Shape's start/end ≥ 15;
// GRU/LSTM without `layout` < 14). An op used at an opset before its first version is refused.
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/ir/graph.h"

namespace ts::engine {

constexpr int64_t kMinOnnxOpset = 7;
constexpr int64_t kMaxOnnxOpset = 21;

// Rewrites `node` (already converted, inputs and outputs in g) for `opset` into the nodes that
// replace it, appended to `out` in order. `where` names the node for errors.
Status upgrade_node(Node node, int64_t opset, Graph& g, const std::string& where, std::vector<Node>& out);

}  // namespace ts::engine
