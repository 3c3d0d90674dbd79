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
  p.live.assign(nv, {-1, -1});
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
        p.live[size_t(o)] = {int64_t(i), std::max<int64_t>(int64_t(i), last[size_t(o)])};
        release_at[size_t(last[size_t(o)])].push_back(o);
      }
    }
    for (ValueId r : release_at[i]) free_slots.push_back(p.slot[size_t(r)]);
  }
  return p;
}

BufferPlan plan_buffers_by_size(const BufferPlan& p, const std::vector<size_t>& bytes) {
  BufferPlan q;
  q.slot.assign(p.slot.size(), -1);
  q.live = p.live;
  std::vector<size_t> order;
  for (size_t v = 0; v < p.slot.size(); ++v) {
    if (p.slot[v] >= 0) order.push_back(v);
  }
  auto size_of = [&](size_t v) { return v < bytes.size() ? bytes[v] : size_t(0); };
  // Largest first; equal sizes in node order, so the result does not depend on the sort.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size_of(a) > size_of(b); });
  std::vector<size_t> slot_size;                                   // its first (largest) value's bytes
  std::vector<std::vector<std::pair<int64_t, int64_t>>> slot_live;  // lifetimes placed in it
  for (size_t v : order) {
    const auto [first, last] = p.live[v];
    int best = -1;
    for (size_t s = 0; s < slot_size.size(); ++s) {
      bool free = true;
      for (const auto& [f, l] : slot_live[s]) free = free && (last < f || l < first);
      if (free && (best < 0 || slot_size[s] < slot_size[size_t(best)])) best = int(s);
    }
    if (best < 0) {
      best = int(slot_size.size());
      slot_size.push_back(size_of(v));
      slot_live.emplace_back();
    }
    q.slot[v] = best;
    slot_live[size_t(best)].push_back({first, last});
  }
  q.slots = int(slot_size.size());
  return q;
}

size_t plan_buffers_bytes(const BufferPlan& p, const std::vector<size_t>& bytes) {
  std::vector<size_t> need(size_t(p.slots), 0);
  for (size_t v = 0; v < p.slot.size() && v < bytes.size(); ++v) {
    if (p.slot[v] >= 0) need[size_t(p.slot[v])] = std::max(need[size_t(p.slot[v])], bytes[v]);
  }
  size_t total = 0;
  for (size_t b : need) total += b;
  return total;
}

}  // namespace ts::engine::cuda
