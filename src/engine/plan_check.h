#pragma once
// plan_check: a plan checked on load against the rules the builder applied when it wrote it,
// so that a plan damaged or edited behind a valid checksum is refused with the node and the
// rule, before any kernel is made or run (Engine::load calls it after the graph's structure,
// validate_graph in runtime.h, is known to be sound).
//
//   - settings: workspace and memory sizes are not negative; every profile names graph inputs,
//     at their rank, with 0 <= min <= opt <= max in every dim and static dims inside the range;
//   - bindings: every graph input has a known rank, and every dim of an input or output is a
//     size (>= 0) or a symbol;
//   - nodes: each node whose op the builder's shape inference knows (every ONNX op the engine
//     imports; fused and backend ops are checked by their kernels when they are made) is
//     re-inferred on its own from its inputs' shapes, its attributes and its constant inputs.
//     An attribute out of range (a Gather axis past the input's rank, a Transpose perm that is
//     not a permutation) or changed so that the node computes another shape (a Gather that lost
//     its axis attribute) is an error:
//       "node '/g' (Gather): output y is [3,45,20] by its inputs and attributes, the plan says [batch,3,20]".
#include "core/status.h"
#include "engine/plan.h"

namespace ts::engine {

// Ok, or kParseError "invalid plan: <what and where>".
Status check_plan(const Plan& plan);

}  // namespace ts::engine
