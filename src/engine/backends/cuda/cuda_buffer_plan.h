#pragma once
// Internal to the CUDA backend: device buffer reuse across one run. Intermediate values whose
// lifetimes do not overlap share one grow-only device buffer (a "slot"), as PyTorch's caching
// allocator and TensorRT's activation memory do, so a context holds about the live set of the
// largest shape it ran instead of every intermediate.
//
// Lifetimes are by node order (the executor runs nodes in graph order on one stream): a value's
// slot is taken when its producer runs and returned after its last reader. Outputs of aliasing
// ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity, same-dtype Cast: they point at their
// input's memory) extend their input's lifetime instead of taking a slot. Graph inputs, graph
// outputs (and whatever they alias), constants and the outputs of skipped (constant) nodes keep
// their own storage (slot −1).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/graph.h"

namespace ts::engine::cuda {

struct BufferPlan {
  std::vector<int> slot;  // per value: its slot, or −1 for its own storage
  int slots = 0;
  // Per value with a slot: the nodes (indices) between which it is live, both included (taken
  // when its producer runs, returned after its last reader); {-1, -1} for the others.
  std::vector<std::pair<int64_t, int64_t>> live;
};

// Whether the cuda kernel of `op` returns a view of input 0 (no allocation, no copy).
bool cuda_op_aliases_input(const std::string& op);

// skip[i]: node i is not run (all its outputs are constants).
BufferPlan plan_buffers(const Graph& g, const std::vector<bool>& skip);

// The same values and lifetimes as `p`, their slots chosen by size once the sizes are known
// (bytes[v]: the most value v took in the runs so far; 0 = never ran). Largest first, each value
// into the smallest slot made so far whose values' lifetimes do not overlap its own, else a new
// slot: a slot's size is then its first (largest) value. Usually far less in all than
// plan_buffers' node-order choice for the same sizes (plan_buffers_bytes), which puts a large
// value into whichever slot a small one freed; not always, so the caller compares the two.
BufferPlan plan_buffers_by_size(const BufferPlan& p, const std::vector<size_t>& bytes);

// Device bytes a plan's slots need for those sizes: the sum over slots of their largest value.
size_t plan_buffers_bytes(const BufferPlan& p, const std::vector<size_t>& bytes);

}  // namespace ts::engine::cuda
