#pragma once
// Helpers shared by the builder passes (internal to src/engine/passes).
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/ir/graph.h"

namespace ts::engine::passes {

// "node '/fc/Gemm' (Gemm)": how every pass names a node in an error.
inline std::string where(const Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

inline Status node_error(const Node& n, const std::string& msg) {
  return Status(StatusCode::kInvalidArgument, where(n) + ": " + msg);
}

// Axis in [-rank, rank) → [0, rank); -1 if out of range.
inline int64_t norm_axis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  return (axis < 0 || axis >= rank) ? -1 : axis;
}

// "" when perm is a permutation of [0, rank) (Transpose), else what is wrong with it. A repeated
// entry once passed shape inference and constant folding, which then read past the input.
inline std::string perm_problem(const std::vector<int64_t>& perm, size_t rank) {
  if (perm.size() != rank) return "perm size " + std::to_string(perm.size()) + " != rank " + std::to_string(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank)) return "perm entry " + std::to_string(p) + " out of range";
    if (seen[size_t(p)]) return "perm repeats axis " + std::to_string(p);
    seen[size_t(p)] = true;
  }
  return "";
}

// For every value: indices of the nodes that read it.
inline std::vector<std::vector<int>> consumers(const Graph& g) {
  std::vector<std::vector<int>> c(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (ValueId v : g.nodes[i].inputs) {
      if (v != kNoValue) c[size_t(v)].push_back(int(i));
    }
  }
  return c;
}

inline bool is_graph_output(const Graph& g, ValueId v) {
  for (ValueId o : g.outputs) {
    if (o == v) return true;
  }
  return false;
}

// True if v is a constant whose every element equals x (within 1e-6 relative).
inline bool is_constant_scalar(const Graph& g, ValueId v, double x) {
  if (v == kNoValue || !g.value(v).is_constant) return false;
  auto xs = constant_as_f64(g.value(v));
  if (xs.empty()) return false;
  for (double e : xs) {
    double tol = 1e-6 * (x < 0 ? -x : x) + 1e-7;
    if (e - x > tol || x - e > tol) return false;
  }
  return true;
}

}  // namespace ts::engine::passes
