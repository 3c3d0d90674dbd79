// ONNX op versions → the engine's form of each op (contract in onnx_versions.h).
#include "engine/onnx_versions.h"

#include <map>

namespace ts::engine {
namespace {

// First opset of the engine's ops that appeared after opset 7.
const std::map<std::string, int64_t> kIntroduced = {
    {"Expand", 8},  {"ConstantOfShape", 9}, {"Erf", 9},  {"Where", 9},
    {"Range", 11},  {"LayerNormalization", 17}, {"Gelu", 20}};

ValueId add_temp(Graph& g, const std::string& name) {
  Value v;
  v.name = name;
  return g.add_value(std::move(v));
}

// Softmax-1/11: the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] and
// normalized along the second axis, i.e. jointly over every axis from `axis` on.
void upgrade_softmax(Node node, Graph& g, std::vector<Node>& out) {
  const int64_t axis = node.attr_i("axis", 1);
  const ValueId x = node.inputs[0], y = node.outputs[0];
  const std::string base = node.name + "/opset13";
  Node shape;
  shape.name = base + "/Shape";
  shape.op = "Shape";
  shape.inputs = {x};
  shape.outputs = {add_temp(g, base + "/shape")};
  Node flat;
  flat.name = base + "/Flatten";
  flat.op = "Flatten";
  flat.attrs["axis"] = axis;
  flat.inputs = {x};
  flat.outputs = {add_temp(g, base + "/flat")};
  node.attrs["axis"] = int64_t(1);
  node.inputs = {flat.outputs[0]};
  node.outputs = {add_temp(g, base + "/norm")};
  Node back;
  back.name = base + "/Reshape";
  back.op = "Reshape";
  back.inputs = {node.outputs[0], shape.outputs[0]};
  back.outputs = {y};
  out.push_back(std::move(shape));
  out.push_back(std::move(flat));
  out.push_back(std::move(node));
  out.push_back(std::move(back));
}

// Slice-1: starts/ends/axes as attributes.
Status upgrade_slice(Node node, Graph& g, const std::string& where, std::vector<Node>& out) {
  if (node.inputs.size() != 1) return Status(StatusCode::kParseError, where + ": Slice-1 takes one input");
  auto st = node.attr_ints("starts"), en = node.attr_ints("ends"), ax = node.attr_ints("axes");
  if (st.size() != en.size() || (!ax.empty() && ax.size() != st.size())) {
    return Status(StatusCode::kInvalidArgument, where + ": starts, ends and axes differ in length");
  }
  auto constant = [&](const char* what, const std::vector<int64_t>& xs) {
    return g.add_value(make_constant_i64(node.name + "/" + what, {int64_t(xs.size())}, xs));
  };
  node.inputs.push_back(constant("starts", st));
  node.inputs.push_back(constant("ends", en));
  if (!ax.empty()) node.inputs.push_back(constant("axes", ax));
  node.attrs.erase("starts");
  node.attrs.erase("ends");
  node.attrs.erase("axes");
  out.push_back(std::move(node));
  return Status::ok();
}

// Max/Min of n inputs → n-1 two-input nodes (one input: Identity).
void upgrade_variadic(Node node, Graph& g, std::vector<Node>& out) {
  std::vector<ValueId> ins;
  for (ValueId v : node.inputs) {
    if (v != kNoValue) ins.push_back(v);
  }
  if (ins.size() <= 2) {
    if (ins.size() == 1) node.op = "Identity";
    node.inputs = ins;
    out.push_back(std::move(node));
    return;
  }
  ValueId acc = ins[0];
  for (size_t i = 1; i < ins.size(); ++i) {
    Node step = node;
    step.name = node.name + (i + 1 == ins.size() ? "" : "/" + std::to_string(i));
    step.inputs = {acc, ins[i]};
    step.outputs = {i + 1 == ins.size() ? node.outputs[0] : add_temp(g, node.name + "/partial" + std::to_string(i))};
    acc = step.outputs[0];
    out.push_back(std::move(step));
  }
}

}  // namespace

Status upgrade_node(Node node, int64_t opset, Graph& g, const std::string& where, std::vector<Node>& out) {
  if (auto it = kIntroduced.find(node.op); it != kIntroduced.end() && opset < it->second) {
    return Status(StatusCode::kUnsupported, where + ": " + node.op + " exists from opset " + std::to_string(it->second) +
                                                ", this model imports opset " + std::to_string(opset));
  }
  if ((node.op == "Softmax" || node.op == "LogSoftmax") && opset < 13) {
    upgrade_softmax(std::move(node), g, out);
    return Status::ok();
  }
  if (node.op == "Slice" && opset < 10) return upgrade_slice(std::move(node), g, where, out);
  if (node.op == "Max" || node.op == "Min") {
    upgrade_variadic(std::move(node), g, out);
    return Status::ok();
  }
  out.push_back(std::move(node));
  return Status::ok();
}

}  // namespace ts::engine
