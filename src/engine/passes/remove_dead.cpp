// remove_dead: drops nodes whose outputs reach no graph output, then compacts the value table
// (unreferenced constants and intermediate values go; ValueIds are renumbered, graph inputs
// are always kept even when unused).
#include "engine/passes/passes.h"

namespace ts::engine {

Status remove_dead(Graph& g, PassLog& log) {
  std::vector<bool> live(g.values.size(), false);
  for (ValueId o : g.outputs) live[size_t(o)] = true;
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {  // reverse topological order
    const Node& n = g.nodes[i];
    for (ValueId o : n.outputs) {
      if (o != kNoValue && live[size_t(o)]) keep[i] = true;
    }
    if (!keep[i]) continue;
    for (ValueId v : n.inputs) {
      if (v != kNoValue) live[size_t(v)] = true;
    }
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (keep[i]) nodes.push_back(std::move(g.nodes[i]));
  }
  size_t dead_nodes = g.nodes.size() - nodes.size();
  g.nodes = std::move(nodes);

  // Compact values: referenced by a kept node, a graph input or a graph output.
  std::vector<bool> used(g.values.size(), false);
  for (ValueId v : g.inputs) used[size_t(v)] = true;
  for (ValueId v : g.outputs) used[size_t(v)] = true;
  for (const Node& n : g.nodes) {
    for (ValueId v : n.inputs) if (v != kNoValue) used[size_t(v)] = true;
    for (ValueId v : n.outputs) if (v != kNoValue) used[size_t(v)] = true;
  }
  std::vector<ValueId> remap(g.values.size(), kNoValue);
  std::vector<Value> values;
  for (size_t i = 0; i < g.values.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = ValueId(values.size());
    values.push_back(std::move(g.values[i]));
  }
  size_t dead_values = g.values.size() - values.size();
  g.values = std::move(values);
  auto fix = [&](ValueId& v) { if (v != kNoValue) v = remap[size_t(v)]; };
  for (auto& v : g.inputs) fix(v);
  for (auto& v : g.outputs) fix(v);
  for (Node& n : g.nodes) {
    for (auto& v : n.inputs) fix(v);
    for (auto& v : n.outputs) {
      // An unused secondary output (GRU's Y_h) stays: the node still writes it.
      fix(v);
    }
  }
  log.lines.push_back("remove_dead: removed " + std::to_string(dead_nodes) + " nodes, " +
                      std::to_string(dead_values) + " values");
  return Status::ok();
}

}  // namespace ts::engine
