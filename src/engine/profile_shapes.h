#pragma once
// The builder's view of a model at concrete input shapes: shape inference with a profile's
// min, opt or max dims in place of the symbols, so every shape argument computed from
// x.shape (Slice starts/ends, Reshape targets, Expand shapes, Range limits) is evaluated at
// that shape, and the build's trial run gets inputs a user could give.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/ir/graph.h"

namespace ts::engine {

using InputDims = std::map<std::string, std::vector<int64_t>>;  // input name → concrete dims

// A copy of g (without float constants' data) whose inputs have `dims` and every value the
// shape it takes there. Inputs not in `dims` keep their shapes. Errors name the node.
Result<Graph> graph_at_dims(const Graph& g, const InputDims& dims);

// Shape inference at each profile's min, opt and max dims (only opt when the profile was not
// the user's: `user_profiles` false); an error quotes the shapes: "at profile 0's max shapes
// x:1024x512x32: node '/Slice' (Slice): ...".
Status check_profile_dims(const Graph& g, const std::vector<OptimizationProfile>& profiles, bool user_profiles);

// "x:64x60x32" for inputs' dims (trtexec's form), in graph input order.
std::string input_dims_str(const Graph& g, const InputDims& dims);

// Fills the build's trial-run input `id` (its view's dtype and dims set, data sized) as a user
// could: float data uniform in [-1, 1]; integer inputs by what reads them (at_opt: the graph at
// the trial shapes): a Reshape shape the data's own dims, an Expand shape ones, Slice starts 0,
// ends the whole axis, axes 0..k-1 and steps 1, Gather indices 0, any other integer 1; bool
// alternating. Never an all-zero shape tensor. Returns how the values were chosen ("" for
// float data) for error messages.
std::string fill_trial_input(const Graph& at_opt, ValueId id, TensorView& tv, std::mt19937& rng);

}  // namespace ts::engine
