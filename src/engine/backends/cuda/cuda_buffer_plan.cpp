// Device buffer reuse (see cuda_buffer_plan.h).
#include "engine/backends/cuda/cuda_buffer_plan.h"

#include <algorithm>
#include <numeric>

namespace ts::engine::cuda {

bool cuda_op_aliases_input(const std::string& op) {
  static const char* const kAliases[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Cast"};
  return std::find(std::begin(kAliases), std::end(kAliases), op) != std::end(kAliases);
}

BufferPlan plan_buffers(const Graph& g, const std::vector<bool>& skip) {
  const size_t nv = g.values.size(), nn = g.nodes.size();
  std::vector<ValueId> root(nv);
  std::iota(root.begin(), root.end(), ValueId(0));
  std::vector<bool> own(nv, false);  // keeps its own storage
  for (ValueId id : g.inputs) own[size_t(id)] = true;
  for (size_t v = 0; v < nv; ++v) own[v] = own[v] || g.values[v].is_constant;
  auto runs = [&](size_t i) { return i >= skip.size() || !skip[i]; };
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes[i];
    if (!runs(i)) {
      for (ValueId o : n.outputs) if (o != kNoValue) own[size_t(o)] = true;
      continue;
    }
    if (cuda_op_aliases_input(n.op) && !n.inputs.empty() && n.inputs[0] != kNoValue) {
      for (ValueId o : n.outputs) if (o != kNoValue) root[size_t(o)] = root[size_t(n.inputs[0])];
    }
  }
  for (ValueId id : g.outputs) own[size_t(root[size_t(id)])] = true;
  // Last node reading each root (through any of its aliases); a root nobody reads dies where
  // it is produced.
  std::vector<int64_t> last(nv, -1);
  for (size_t i = 0; i < nn; ++i) {
    if (!runs(i)) continue;
    for (ValueId in : g.nodes[i].inputs) {
      if (in != kNoValue) last[size_t(root[size_t(in)])] = std::max<int64_t>(last[size_t(root[size_t(in)])], int64_t(i));
    }
    for (ValueId o : g.nodes[i].outputs) {
      if (o != kNoValue && root[size_t(o)] == o) last[size_t(o)] = std::max<int64_t>(last[size_t(o)], int64_t(i));
    }
  }
  std::vector<std::vector<ValueId>> release_at(nn);
  BufferPlan p;
  p.slot.assign(nv, -1);
  std::vector<int> free_slots;
  for (size_t i = 0; i < nn; ++i) {
    if (!runs(i)) continue;
    const Node& n = g.nodes[i];
    if (!cuda_op_aliases_input(n.op)) {
      for (ValueId o : n.outputs) {
        if (o == kNoValue || own[size_t(o)] || root[size_t(o)] != o) continue;
        int s;
        if (!free_slots.empty()) {
          s = free_slots.back();
          free_slots.pop_back();
        } else {
          s = p.slots++;
        }
        p.slot[size_t(o)] = s;
        release_at[size_t(last[size_t(o)])].push_back(o);
      }
    }
    for (ValueId r : release_at[i]) free_slots.push_back(p.slot[size_t(r)]);
  }
  return p;
}

}  // namespace ts::engine::cuda
