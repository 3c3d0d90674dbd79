#pragma once
// What fuse_encoder.cpp needs to find an encoder layer's region and the causal mask it reads:
// graph walks (producer, data dependence, backward closure), running a set of nodes on the CPU
// backend, and the mask's proof (run at several lengths, compared with triu(-inf, 1)).
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "engine/ir/graph.h"
#include "core/status.h"

namespace ts::engine::encoder_region {

// The node making v, or -1 (a graph input, a constant).
int producer(const Graph& g, ValueId v);
bool is_const(const Graph& g, ValueId v);
// Input i of n as a constant f32 vector of `len` values (absent → `fill`); false if present but
// not that (fuse_encoder's layer reading, the CPU backend's fused layer).
bool vec_or(const Graph& g, const Node& n, size_t i, int64_t len, float fill, std::vector<float>* out);

// True while run_nodes is building a region on this thread: the builder then keeps the region's
// layers as they are (fusing them would prove them again, and again: the CPU backend runs the
// fused layer too).
bool proving();

// One input of a region run: the value, its dims and its f32 data.
struct RegionInput {
  ValueId v = kNoValue;
  std::vector<int64_t> dims;
  std::vector<float> data;
};

// Runs `nodes` (of g, in order) on the CPU backend, inputs → y; `room` bounds y's dims (the
// output buffer's room, TensorView's convention). y's dims go to *dims.
Result<std::vector<float>> run_nodes(const Graph& g, const std::vector<int>& nodes, const std::vector<RegionInput>& inputs,
                                     ValueId y, const std::vector<int64_t>& room, std::vector<int64_t>* dims);

// The values whose data depend on x's (x itself included). A Shape reads only x's dims: the
// causal mask PyTorch slices to the input's length does not depend on it.
std::vector<bool> depends_on(const Graph& g, ValueId x);

// Backward closure of `from`, stopping at `stops`, constants and the values `side` picks (put
// in *sides): node indices (sorted), or false if it reaches a value nothing in the graph makes
// (a graph input not in stops).
bool closure(const Graph& g, ValueId from, const std::set<ValueId>& stops, std::vector<int>* nodes,
             const std::function<bool(ValueId)>& side = nullptr, std::set<ValueId>* sides = nullptr);

// The attention mask a layer reads from outside itself: value m (not depending on the layer's
// input), computed from the graph's one input of rank 3 ([batch, seq, F]: typically PyTorch's
// causal buffer sliced to the input's length). `nodes`: m's closure back to that input.
struct MaskSource {
  ValueId m = kNoValue, graph_in = kNoValue;
  int64_t features = 0;
  std::vector<int> nodes;
};

// m at sequence length t, as the graph computes it (dims and values).
Result<std::vector<float>> mask_at(const Graph& g, const MaskSource& ms, int64_t t, std::vector<int64_t>* dims);

// True when m is, at every sequence length tried (1, 5, 7 and max_seq up to 1024), [.., t, t] of
// 0 on and below the diagonal and -inf above it (<= -1e4 counts as -inf, as in masks written with
// -1e4 or -1e9: beside the finite diagonal score softmax gives it weight 0 in fp32; the layer's
// proof against the -inf definition checks the whole region anyway). Fills *ms.
bool mask_is_causal(const Graph& g, ValueId m, int64_t max_seq, MaskSource* ms);

// Names of the mask's nodes (indices change as nodes are erased).
std::set<std::string> mask_names(const Graph& g, const MaskSource& ms);

// Erases the nodes named in `names` whose outputs nothing reads any more (the mask's slices once
// every layer reading them is fused), repeatedly.
void drop_unread(Graph& g, const std::set<std::string>& names);

}  // namespace ts::engine::encoder_region
