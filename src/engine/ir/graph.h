#pragma once
// The engine's graph IR: what the ONNX importer produces, what the builder passes rewrite, and
// what a plan file stores. Values are indexed by position; nodes are kept in topological order.
// Not thread-safe while being built or rewritten; immutable once inside an Engine.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "engine/ir/tensor.h"

namespace ts::engine {

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;  // an omitted optional input

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;

struct Node {
  std::string name;                 // ONNX node name (or generated), kept for error messages
  std::string op;                   // ONNX op type ("MatMul"), or a fused op ("FusedGemm", "FusedGRU", ...)
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, AttrValue> attrs;
  std::vector<std::string> fused_from;  // names of the original nodes a fusion replaced (inspect)
  std::string tactic;               // chosen implementation (set by the builder's tactic pass)

  int64_t attr_i(const std::string& k, int64_t def) const;
  float attr_f(const std::string& k, float def) const;
  std::string attr_s(const std::string& k, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& k) const;
  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;          // topological order
  std::vector<ValueId> inputs;      // runtime inputs (not constants)
  std::vector<ValueId> outputs;
  int64_t opset = 0;
  std::string producer;             // "pytorch 1.13.1"

  ValueId add_value(Value v);
  ValueId find_value(const std::string& name) const;  // kNoValue if absent
  Value& value(ValueId id) { return values[size_t(id)]; }
  const Value& value(ValueId id) const { return values[size_t(id)]; }
};

}  // namespace ts::engine
