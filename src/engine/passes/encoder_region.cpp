// Graph walks, CPU runs of node sets and the causal mask's proof for fuse_encoder.cpp
// (contracts in encoder_region.h).
#include "engine/passes/encoder_region.h"

#include <algorithm>

#include "engine/builder.h"
#include "engine/engine.h"
#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine::encoder_region {

int producer(const Graph& g, ValueId v) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId o : g.nodes[i].outputs)
      if (o == v) return int(i);
  return -1;
}

bool is_const(const Graph& g, ValueId v) { return v != kNoValue && g.value(v).is_constant; }

bool vec_or(const Graph& g, const Node& n, size_t i, int64_t len, float fill, std::vector<float>* out) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) {
    out->assign(size_t(len), fill);
    return true;
  }
  const Value& v = g.value(n.inputs[i]);
  if (!v.is_constant || v.dtype != DType::kF32 || v.numel() != len) return false;
  out->assign(v.as<float>(), v.as<float>() + len);
  return true;
}

namespace {
thread_local int proof_depth = 0;
struct ProofScope {
  ProofScope() { ++proof_depth; }
  ~ProofScope() { --proof_depth; }
};
}  // namespace

bool proving() { return proof_depth > 0; }

// Runs `nodes` (of g, in order) on the CPU backend, inputs → y; `room` bounds y's dims (the
// output buffer's room, TensorView's convention). y's dims go to *dims.
Result<std::vector<float>> run_nodes(const Graph& g, const std::vector<int>& nodes, const std::vector<RegionInput>& inputs,
                                     ValueId y, const std::vector<int64_t>& room, std::vector<int64_t>* dims) {
  Graph s;
  s.values = g.values;
  s.opset = g.opset;
  s.producer = g.producer;
  for (int i : nodes) s.nodes.push_back(g.nodes[size_t(i)]);
  for (Node& n : s.nodes) n.tactic.clear();
  s.outputs = {y};
  BuildOptions o;
  o.backend = "cpu";
  o.time_tactics = false;
  OptimizationProfile prof;
  std::vector<TensorView> ins;
  for (const RegionInput& in : inputs) {
    s.inputs.push_back(in.v);
    prof.inputs[g.value(in.v).name] = ShapeRange{in.dims, in.dims, in.dims};
    TensorView tv;
    tv.dims = in.dims;
    tv.data = const_cast<float*>(in.data.data());
    ins.push_back(tv);
  }
  o.profiles = {prof};
  const ProofScope scope;  // the region is built as it is: no encoder fusion inside the proof
  auto plan = build_from_graph(std::move(s), PassLog{}, o);
  if (!plan) return plan.status();
  auto e = Engine::load(plan.value());
  if (!e) return e.status();
  auto ctx = e.value()->create_context();
  if (!ctx) return ctx.status();
  std::vector<float> out(size_t(shape_numel(room)));
  TensorView ov;
  ov.dims = room;
  ov.data = out.data();
  std::vector<TensorView> outs{ov};
  TS_RETURN_IF_ERROR(ctx.value()->execute(ins, outs));
  *dims = outs[0].dims;
  out.resize(size_t(shape_numel(outs[0].dims)));
  return out;
}

// The values whose data depend on x's (x itself included), over g's nodes in order. A Shape
// reads only x's dims: the causal mask PyTorch slices to the input's length does not depend on it.
std::vector<bool> depends_on(const Graph& g, ValueId x) {
  std::vector<bool> dep(g.values.size(), false);
  dep[size_t(x)] = true;
  for (const Node& n : g.nodes) {
    if (n.op == "Shape") continue;
    bool any = false;
    for (ValueId i : n.inputs) any = any || (i != kNoValue && dep[size_t(i)]);
    if (any)
      for (ValueId o : n.outputs)
        if (o != kNoValue) dep[size_t(o)] = true;
  }
  return dep;
}

// Backward closure of `from`, stopping at `stops`, constants and the values `side` picks (put
// in *sides): node indices (sorted), or false if it reaches a value nothing in the graph makes
// (a graph input not in stops).
bool closure(const Graph& g, ValueId from, const std::set<ValueId>& stops, std::vector<int>* nodes,
             const std::function<bool(ValueId)>& side, std::set<ValueId>* sides) {
  std::set<int> seen;
  std::vector<ValueId> stack{from};
  std::set<ValueId> visited;
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (v == kNoValue || stops.count(v) || is_const(g, v) || !visited.insert(v).second) continue;
    if (side && side(v)) {
      sides->insert(v);
      continue;
    }
    const int p = producer(g, v);
    if (p < 0) return false;
    if (seen.insert(p).second)
      for (ValueId i : g.nodes[size_t(p)].inputs) stack.push_back(i);
  }
  nodes->assign(seen.begin(), seen.end());
  return true;
}


// m at sequence length t, as the graph computes it (dims and values).
Result<std::vector<float>> mask_at(const Graph& g, const MaskSource& ms, int64_t t, std::vector<int64_t>* dims) {
  RegionInput in{ms.graph_in, {1, t, ms.features}, std::vector<float>(size_t(t * ms.features), 0.5f)};
  return run_nodes(g, ms.nodes, {in}, ms.m, {4, t, t}, dims);
}

// True when m is, at every sequence length tried (1, 5, 7 and max_seq up to 1024), [.., t, t] of
// 0 on and below the diagonal and -inf above it (≤ -1e4 counts as -inf, as in masks written with
// -1e4 or -1e9: beside the finite diagonal score softmax gives it weight 0 in fp32; the layer's
// proof against the -inf definition checks the whole region anyway).
bool mask_is_causal(const Graph& g, ValueId m, int64_t max_seq, MaskSource* ms) {
  ms->m = m;
  const Value& mv = g.value(m);
  if (mv.dtype != DType::kF32) return false;
  std::set<ValueId> ins(g.inputs.begin(), g.inputs.end());
  if (!closure(g, m, ins, &ms->nodes) || ms->nodes.empty()) return false;
  std::set<ValueId> reached;
  for (int i : ms->nodes)
    for (ValueId v : g.nodes[size_t(i)].inputs)
      if (ins.count(v)) reached.insert(v);
  if (reached.size() != 1) return false;
  ms->graph_in = *reached.begin();
  const Value& in = g.value(ms->graph_in);
  if (in.dtype != DType::kF32 || !in.rank_known || in.shape.size() != 3 || !in.shape[2].is_known()) return false;
  ms->features = in.shape[2].value;
  // The longest length tried is capped (no fused kernel runs sequences that long; the backend's
  // check refuses them by max_seq).
  for (int64_t t : {int64_t(1), int64_t(5), int64_t(7), std::clamp<int64_t>(max_seq, 1, 1024)}) {
    std::vector<int64_t> dims;
    auto got = mask_at(g, *ms, t, &dims);
    if (!got || dims.size() < 2 || dims[dims.size() - 1] != t || dims[dims.size() - 2] != t || got.value().size() != size_t(t * t))
      return false;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j) {
        const float v = got.value()[size_t(i * t + j)];
        if (j <= i ? v != 0.f : v > -1e4f) return false;
      }
  }
  return true;
}

// Names of the mask's nodes (indices change as nodes are erased).
std::set<std::string> mask_names(const Graph& g, const MaskSource& ms) {
  std::set<std::string> names;
  for (int i : ms.nodes) names.insert(g.nodes[size_t(i)].name);
  return names;
}

// Erases the nodes named in `names` whose outputs nothing reads any more (the mask's slices once
// every layer reading them is fused), repeatedly.
void drop_unread(Graph& g, const std::set<std::string>& names) {
  for (bool again = true; again;) {
    again = false;
    const auto users = passes::consumers(g);
    for (Node& n : g.nodes) {
      if (n.op.empty() || !names.count(n.name)) continue;
      bool read = false;
      for (ValueId o : n.outputs) read = read || (o != kNoValue && (!users[size_t(o)].empty() || passes::is_graph_output(g, o)));
      if (!read) {
        n.op.clear();
        again = true;
      }
    }
    passes::erase_absorbed(g);
  }
}

}  // namespace ts::engine::encoder_region
