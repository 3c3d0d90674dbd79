#include "engine/plan_check.h"

#include <algorithm>

#include "engine/passes/passes.h"

namespace ts::engine {
namespace {

Status invalid_plan(const std::string& m) { return Status(StatusCode::kParseError, "invalid plan: " + m); }

std::string where(const Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

// Small integer constants carry shape data (Reshape's shape, Slice's starts, axes): the node's
// check needs their values. Larger or float constants only need their shapes.
bool keep_data(const Value& v) {
  return v.is_constant && (v.dtype == DType::kI64 || v.dtype == DType::kI32) && v.data.size() <= 64 * 1024;
}

bool dims_sound(const Shape& s) {
  for (const Dim& d : s) {
    if (d.value < 0 && d.symbol.empty()) return false;
  }
  return true;
}

Status check_settings(const Plan& p) {
  if (p.workspace_bytes < 0 || p.device_memory_bytes < 0) {
    return invalid_plan("negative workspace (" + std::to_string(p.workspace_bytes) + ") or memory size (" +
                        std::to_string(p.device_memory_bytes) + ")");
  }
  for (size_t i = 0; i < p.bucket_memory.size(); ++i) {
    const BucketMemory& m = p.bucket_memory[i];
    if (m.batch < 1 || m.bytes < 0 || (i > 0 && m.batch <= p.bucket_memory[i - 1].batch)) {
      return invalid_plan("memory per bucket: entry " + std::to_string(i) + " (batch " + std::to_string(m.batch) +
                          ", " + std::to_string(m.bytes) + " bytes) must have batch >= 1, ascending, and bytes >= 0");
    }
  }
  const Graph& g = p.graph;
  for (size_t k = 0; k < p.profiles.size(); ++k) {
    for (const auto& [name, r] : p.profiles[k].inputs) {
      const std::string what = "profile " + std::to_string(k) + " input " + name;
      ValueId id = kNoValue;
      for (ValueId in : g.inputs) {
        if (g.value(in).name == name) id = in;
      }
      if (id == kNoValue) return invalid_plan(what + ": the graph has no such input");
      const Shape& s = g.value(id).shape;
      if (r.min.size() != s.size() || r.opt.size() != s.size() || r.max.size() != s.size()) {
        return invalid_plan(what + ": rank of min/opt/max differs from " + shape_to_string(s));
      }
      for (size_t i = 0; i < s.size(); ++i) {
        if (r.min[i] < 0 || r.min[i] > r.opt[i] || r.opt[i] > r.max[i]) {
          return invalid_plan(what + ": need 0 <= min <= opt <= max, got " + dims_str(r.min) + " / " + dims_str(r.opt) +
                              " / " + dims_str(r.max));
        }
        if (s[i].is_known() && (r.min[i] > s[i].value || r.max[i] < s[i].value)) {
          return invalid_plan(what + ": dim " + std::to_string(i) + " is " + std::to_string(s[i].value) +
                              ", outside the range " + dims_str(r.min) + " .. " + dims_str(r.max));
        }
      }
    }
  }
  return Status::ok();
}

Status check_bindings(const Graph& g) {
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    if (!v.rank_known || !dims_sound(v.shape)) return invalid_plan("input " + v.name + " has no usable shape");
  }
  for (ValueId id : g.outputs) {
    const Value& v = g.value(id);
    if (v.rank_known && !dims_sound(v.shape)) return invalid_plan("output " + v.name + " has an unnamed unknown dim");
  }
  return Status::ok();
}

// The node alone: its inputs as graph inputs (small integer constants kept), its outputs to infer.
Graph node_graph(const Graph& g, const Node& n, Node* local) {
  Graph m;
  m.opset = g.opset;
  *local = n;
  local->inputs.clear();
  local->outputs.clear();
  for (ValueId id : n.inputs) {
    if (id == kNoValue) {
      local->inputs.push_back(kNoValue);
      continue;
    }
    const Value& v = g.value(id);
    Value c;
    c.name = v.name;
    c.dtype = v.dtype;
    c.shape = v.shape;
    c.rank_known = v.rank_known;
    c.is_constant = keep_data(v);
    if (c.is_constant) c.data = v.data;
    ValueId nid = m.add_value(std::move(c));
    if (!m.value(nid).is_constant) m.inputs.push_back(nid);
    local->inputs.push_back(nid);
  }
  for (ValueId id : n.outputs) {
    if (id == kNoValue) {
      local->outputs.push_back(kNoValue);
      continue;
    }
    Value o;
    o.name = g.value(id).name;
    ValueId nid = m.add_value(std::move(o));
    local->outputs.push_back(nid);
    m.outputs.push_back(nid);
  }
  m.nodes.push_back(*local);
  return m;
}

// A node's inputs that carry computed shape data (a Shape → Gather → Concat chain): alone, the
// node does not see their values, so only a successful inference is compared.
bool reads_computed_ints(const Graph& g, const Node& n) {
  for (ValueId id : n.inputs) {
    if (id == kNoValue) continue;
    const Value& v = g.value(id);
    if ((v.dtype == DType::kI64 || v.dtype == DType::kI32) && !keep_data(v)) return true;
  }
  return false;
}

Status check_node(const Graph& g, const Node& n) {
  // A graph handed to build_from_graph without shape inference (tests, the encoder proof) has
  // values of unknown rank: nothing was stated, so there is nothing to contradict.
  for (ValueId id : n.inputs) {
    if (id != kNoValue && !g.value(id).rank_known) return Status::ok();
  }
  Node local;
  Graph m = node_graph(g, n, &local);
  PassLog log;
  Status s = infer_shapes(m, log);
  if (s.code() == StatusCode::kUnsupported) return Status::ok();  // a fused or backend op
  if (!s) {
    if (reads_computed_ints(g, n)) return Status::ok();
    return invalid_plan(s.message());
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] == kNoValue) continue;
    const Value& stored = g.value(n.outputs[i]);
    const Value& got = m.value(local.outputs[i]);
    if (!stored.rank_known || !got.rank_known) continue;
    bool same = stored.shape.size() == got.shape.size();
    for (size_t k = 0; same && k < got.shape.size(); ++k) {
      const Dim& a = stored.shape[k];
      const Dim& b = got.shape[k];
      if (a.is_known() && b.is_known() && a.value != b.value) same = false;
    }
    if (!same) {
      return invalid_plan(where(n) + ": output " + stored.name + " is " + shape_to_string(got.shape) +
                          " by its inputs and attributes, the plan says " + shape_to_string(stored.shape));
    }
  }
  return Status::ok();
}

}  // namespace

Status check_plan(const Plan& plan) {
  TS_RETURN_IF_ERROR(check_settings(plan));
  const Graph& g = plan.graph;
  TS_RETURN_IF_ERROR(check_bindings(g));
  for (const Node& n : g.nodes) TS_RETURN_IF_ERROR(check_node(g, n));
  return Status::ok();
}

}  // namespace ts::engine
