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
#include <string>
#include <vector>

#include "engine/ir/graph.h"

namespace ts::engine::cuda {

struct BufferPlan {
  std::vector<int> slot;  // per value: its slot, or −1 for its own storage
  int slots = 0;
};

// Whether the cuda kernel of `op` returns a view of input 0 (no allocation, no copy).
bool cuda_op_aliases_input(const std::string& op);

// skip[i]: node i is not run (all its outputs are constants).
BufferPlan plan_buffers(const Graph& g, const std::vector<bool>& skip);

}  // namespace ts::engine::cuda
