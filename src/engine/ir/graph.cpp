#include "engine/ir/graph.h"

namespace ts::engine {

int64_t Node::attr_i(const std::string& k, int64_t def) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return def;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  return def;
}

float Node::attr_f(const std::string& k, float def) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return def;
  if (auto* v = std::get_if<float>(&it->second)) return *v;
  if (auto* i = std::get_if<int64_t>(&it->second)) return float(*i);
  return def;
}

std::string Node::attr_s(const std::string& k, const std::string& def) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return def;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  return def;
}

std::vector<int64_t> Node::attr_ints(const std::string& k) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  return {};
}

ValueId Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return ValueId(values.size() - 1);
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].name == name) return ValueId(i);
  }
  return kNoValue;
}

}  // namespace ts::engine
