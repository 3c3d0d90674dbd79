// fuse: runs the fusion patterns (fuse_patterns.h) in an order where later patterns see the
// earlier ones' results: LayerNorm and attention first (they contain MatMul/Add that the GEMM
// pattern must not take), then GEMM epilogues, then the RNN simplification.
//
// GRU/LSTM stay as the ONNX ops "GRU"/"LSTM" with ONNX semantics (a whole layer, all time
// steps, in one node). PyTorch's Transpose/Squeeze glue around them is left as separate nodes:
// absorbing it would change the node's output layout, which the backend would have to agree
// on; it is cheap next to the recurrence. A provably zero initial_h/initial_c
// (ConstantOfShape(0) → Slice, as PyTorch exports it) is removed so the backend uses its
// zero default.
#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine {
namespace passes {

void erase_absorbed(Graph& g) {
  std::vector<Node> kept;
  for (auto& n : g.nodes) {
    if (!n.op.empty()) kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

std::string fusion_line(const Node& f) {
  std::string s = "fuse: " + f.op + " " + f.name + " ← [";
  for (size_t i = 0; i < f.fused_from.size(); ++i) s += (i ? ", " : "") + f.fused_from[i];
  return s + "]";
}

namespace {

// True if v is all zeros: a zero constant, or ConstantOfShape(value 0) possibly followed by
// Slice/Expand/Identity/Reshape/Unsqueeze/Squeeze.
bool is_zero(const Graph& g, ValueId v, int depth = 0) {
  if (v == kNoValue || depth > 8) return false;
  if (g.value(v).is_constant) return is_constant_scalar(g, v, 0.0);
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] != v) continue;
    if (n.op == "ConstantOfShape") return n.attr_f("value", 0.f) == 0.f;
    if (n.op == "Slice" || n.op == "Expand" || n.op == "Identity" || n.op == "Reshape" ||
        n.op == "Unsqueeze" || n.op == "Squeeze") {
      return is_zero(g, n.inputs[0], depth + 1);
    }
    return false;
  }
  return false;
}

}  // namespace

int simplify_rnn(Graph& g, PassLog& log) {
  int count = 0;
  for (Node& n : g.nodes) {
    if (n.op != "GRU" && n.op != "LSTM") continue;
    for (size_t i : {size_t(5), size_t(6)}) {
      if (i >= n.inputs.size() || (i == 6 && n.op != "LSTM")) continue;
      if (n.inputs[i] == kNoValue || !is_zero(g, n.inputs[i])) continue;
      log.lines.push_back("fuse: " + n.op + " " + n.name + ": zero " + (i == 5 ? "initial_h" : "initial_c") +
                          " '" + g.value(n.inputs[i]).name + "' dropped (backend default)");
      n.inputs[i] = kNoValue;
      ++count;
    }
  }
  return count;
}

}  // namespace passes

Status fuse(Graph& g, PassLog& log) {
  int n = passes::fuse_layernorm(g, log);
  n += passes::fuse_attention(g, log);
  n += passes::fuse_gemm(g, log);
  n += passes::simplify_rnn(g, log);
  log.lines.push_back("fuse: " + std::to_string(n) + " rewrites");
  return Status::ok();
}

}  // namespace ts::engine
