// ONNX ModelProto → graph IR (contract in onnx_import.h).
//
// Order of checks, cheapest and most specific first so the user sees the clearest message:
//   1. bytes parse as a ModelProto with a graph ("not an ONNX model: ...")
//   2. default-domain opset in 7..21 ("unsupported opset N (supported 7..21)"); each node is
//      brought to the engine's form of its op (onnx_versions.h)
//   3. every node input names a graph input, an initializer, a Constant or an earlier node's
//      output ("node 'n' (Op): input 'w' is not defined ...") — before the ONNX checker, whose
//      message for the same fault is about topological order and harder to read
//   4. onnx::checker::check_model (anything else malformed: "invalid ONNX model: ..."); this
//      onnx (1.12) knows opsets up to 17, so models of opsets 18..21 are checked by the
//      importer's own checks and shape inference only
// Constant nodes become constant Values (their `value*` attribute is the data) and are not
// kept as nodes; ConstantOfShape's TENSOR attribute `value` becomes a scalar FLOAT attr
// "value" (and INT attr "value_dtype" with the DType) since the op only needs one element.
#include "engine/onnx_import.h"

#include "engine/onnx_versions.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

namespace ts::engine {
namespace {

constexpr int64_t kMinOpset = kMinOnnxOpset;
constexpr int64_t kMaxOpset = kMaxOnnxOpset;
constexpr int64_t kMaxCheckedOpset = 17;  // the newest opset this onnx's checker knows

Status import_error(const std::string& msg) { return Status(StatusCode::kParseError, msg); }

Result<DType> dtype_from_onnx(int32_t t, const std::string& where) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return DType::kF32;
    case onnx::TensorProto::FLOAT16: return DType::kF16;
    case onnx::TensorProto::BFLOAT16: return DType::kBF16;
    case onnx::TensorProto::INT8: return DType::kI8;
    case onnx::TensorProto::UINT8: return DType::kU8;
    case onnx::TensorProto::INT32: return DType::kI32;
    case onnx::TensorProto::INT64: return DType::kI64;
    case onnx::TensorProto::BOOL: return DType::kBool;
    case onnx::TensorProto::DOUBLE: return DType::kF64;
    default: break;
  }
  return Status(StatusCode::kUnsupported,
                where + ": unsupported element type " + onnx::TensorProto::DataType_Name(t) + " (" +
                    std::to_string(t) + ")");
}

// TensorProto → constant Value named `name`.
Result<Value> constant_from_tensor(const onnx::TensorProto& t, const std::string& name,
                                   const std::string& where) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    return Status(StatusCode::kUnsupported, where + ": tensor '" + name + "' uses external data");
  }
  auto dt = dtype_from_onnx(t.data_type(), where + ": tensor '" + name + "'");
  if (!dt) return dt.status();
  Value v;
  v.name = name;
  v.dtype = dt.value();
  v.rank_known = true;
  v.is_constant = true;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (auto d : dims) {
    if (d < 0) return import_error(where + ": tensor '" + name + "' has a negative dim");
  }
  v.shape = shape_of(dims);
  const size_t n = size_t(shape_numel(dims)), es = dtype_size(v.dtype);
  v.data.resize(n * es);
  auto bad_size = [&](size_t got) {
    return import_error(where + ": tensor '" + name + "' " + shape_to_string(v.shape) + " " +
                        dtype_name(v.dtype) + " holds " + std::to_string(got) + " elements, expected " +
                        std::to_string(n));
  };
  if (t.has_raw_data()) {
    if (t.raw_data().size() != v.data.size()) return bad_size(t.raw_data().size() / (es ? es : 1));
    if (n) std::memcpy(v.data.data(), t.raw_data().data(), v.data.size());  // little-endian host
    return v;
  }
  switch (v.dtype) {
    case DType::kF32:
      if (size_t(t.float_data_size()) != n) return bad_size(size_t(t.float_data_size()));
      if (n) std::memcpy(v.data.data(), t.float_data().data(), n * 4);
      break;
    case DType::kF64:
      if (size_t(t.double_data_size()) != n) return bad_size(size_t(t.double_data_size()));
      if (n) std::memcpy(v.data.data(), t.double_data().data(), n * 8);
      break;
    case DType::kI64:
      if (size_t(t.int64_data_size()) != n) return bad_size(size_t(t.int64_data_size()));
      if (n) std::memcpy(v.data.data(), t.int64_data().data(), n * 8);
      break;
    default: {  // int32_data holds i32, i8, u8, bool, f16 and bf16 (as bit patterns)
      if (size_t(t.int32_data_size()) != n) return bad_size(size_t(t.int32_data_size()));
      for (size_t i = 0; i < n; ++i) {
        int32_t x = t.int32_data(int(i));
        if (es == 4) std::memcpy(v.data.data() + i * 4, &x, 4);
        else if (es == 2) { uint16_t h = uint16_t(x); std::memcpy(v.data.data() + i * 2, &h, 2); }
        else v.data[i] = uint8_t(x);
      }
    }
  }
  return v;
}

// The data of a Constant node (value, value_float(s), value_int(s)).
Result<Value> constant_from_node(const onnx::NodeProto& n, const std::string& where) {
  for (const auto& a : n.attribute()) {
    const std::string& out = n.output_size() ? n.output(0) : n.name();
    if (a.name() == "value") return constant_from_tensor(a.t(), out, where);
    if (a.name() == "value_float") return make_constant(out, DType::kF32, {}, {double(a.f())});
    if (a.name() == "value_int") return make_constant_i64(out, {}, {a.i()});
    if (a.name() == "value_floats") {
      std::vector<double> xs(a.floats().begin(), a.floats().end());
      return make_constant(out, DType::kF32, {int64_t(xs.size())}, xs);
    }
    if (a.name() == "value_ints") {
      std::vector<int64_t> xs(a.ints().begin(), a.ints().end());
      return make_constant_i64(out, {int64_t(xs.size())}, xs);
    }
  }
  return Status(StatusCode::kUnsupported,
                where + ": Constant without a supported value attribute (value, value_float(s), value_int(s))");
}

Status convert_attr(const onnx::AttributeProto& a, Node& node, const std::string& where) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: node.attrs[a.name()] = int64_t(a.i()); break;
    case onnx::AttributeProto::FLOAT: node.attrs[a.name()] = a.f(); break;
    case onnx::AttributeProto::STRING: node.attrs[a.name()] = a.s(); break;
    case onnx::AttributeProto::INTS:
      node.attrs[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      node.attrs[a.name()] = std::vector<float>(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      // Only RNN `activations` uses STRINGS among supported ops: join with ',' .
      {
        std::string joined;
        for (const auto& s : a.strings()) joined += (joined.empty() ? "" : ",") + s;
        node.attrs[a.name()] = joined;
      }
      break;
    case onnx::AttributeProto::TENSOR:
      if (node.op == "ConstantOfShape" && a.name() == "value") {
        auto c = constant_from_tensor(a.t(), a.name(), where);
        if (!c) return c.status();
        auto xs = constant_as_f64(c.value());
        if (xs.size() != 1) return import_error(where + ": ConstantOfShape value must have one element");
        node.attrs["value"] = float(xs[0]);
        node.attrs["value_dtype"] = int64_t(c.value().dtype);
        break;
      }
      [[fallthrough]];
    default:
      return Status(StatusCode::kUnsupported,
                    where + ": attribute '" + a.name() + "' has unsupported type " +
                        onnx::AttributeProto::AttributeType_Name(a.type()));
  }
  return Status::ok();
}

Result<Value> value_from_info(const onnx::ValueInfoProto& vi, const std::string& where) {
  Value v;
  v.name = vi.name();
  if (!vi.type().has_tensor_type()) {
    return Status(StatusCode::kUnsupported, where + " '" + vi.name() + "' is not a tensor");
  }
  const auto& tt = vi.type().tensor_type();
  auto dt = dtype_from_onnx(tt.elem_type(), where + " '" + vi.name() + "'");
  if (!dt) return dt.status();
  v.dtype = dt.value();
  if (tt.has_shape()) {
    v.rank_known = true;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value()) v.shape.push_back(Dim::known(d.dim_value()));
      else if (d.has_dim_param() && !d.dim_param().empty()) v.shape.push_back(Dim::sym(d.dim_param()));
      else v.shape.push_back(Dim::sym("d" + vi.name() + "_" + std::to_string(i)));
    }
  }
  return v;
}

std::string node_where(const onnx::NodeProto& n, int index) {
  std::string name = n.name();
  if (name.empty()) name.append("#").append(std::to_string(index));
  return "node '" + name + "' (" + n.op_type() + ")";
}

Result<Graph> convert(const onnx::ModelProto& model, int64_t opset) {
  Graph g;
  g.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  const auto& gp = model.graph();

  std::map<std::string, ValueId> ids;  // every defined name → value
  std::set<std::string> initializer_names;
  for (const auto& t : gp.initializer()) {
    auto c = constant_from_tensor(t, t.name(), "initializer '" + t.name() + "'");
    if (!c) return c.status();
    ids[t.name()] = g.add_value(std::move(c.value()));
    initializer_names.insert(t.name());
  }
  for (const auto& in : gp.input()) {
    if (initializer_names.count(in.name())) continue;  // an initializer listed as input: constant
    auto v = value_from_info(in, "graph input");
    if (!v) return v.status();
    ValueId id = g.add_value(std::move(v.value()));
    ids[in.name()] = id;
    g.inputs.push_back(id);
  }

  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& n = gp.node(i);
    const std::string where = node_where(n, i);
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      return Status(StatusCode::kUnsupported, where + ": op domain '" + n.domain() + "' is not supported");
    }
    for (const auto& in : n.input()) {
      if (in.empty() || ids.count(in)) continue;
      return import_error(where + ": input '" + in +
                          "' is not defined (not a graph input, initializer, or output of an earlier "
                          "node; missing initializer?)");
    }
    if (n.op_type() == "Constant") {
      auto c = constant_from_node(n, where);
      if (!c) return c.status();
      if (n.output_size() != 1) return import_error(where + ": Constant must have one output");
      ids[n.output(0)] = g.add_value(std::move(c.value()));
      continue;
    }
    Node node;
    node.name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    node.op = n.op_type();
    for (const auto& a : n.attribute()) TS_RETURN_IF_ERROR(convert_attr(a, node, where));
    for (const auto& in : n.input()) node.inputs.push_back(in.empty() ? kNoValue : ids[in]);
    for (const auto& out : n.output()) {
      if (out.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      if (ids.count(out)) return import_error(where + ": output '" + out + "' is defined twice");
      Value v;
      v.name = out;
      ValueId id = g.add_value(std::move(v));
      ids[out] = id;
      node.outputs.push_back(id);
    }
    TS_RETURN_IF_ERROR(upgrade_node(std::move(node), opset, g, where, g.nodes));
  }

  for (const auto& out : gp.output()) {
    auto it = ids.find(out.name());
    if (it == ids.end()) return import_error("graph output '" + out.name() + "' is not produced by any node");
    auto declared = value_from_info(out, "graph output");
    if (!declared) return declared.status();
    Value& v = g.value(it->second);
    if (!v.is_constant) {  // keep the declared type/shape until shape inference refines it
      v.dtype = declared.value().dtype;
      v.shape = declared.value().shape;
      v.rank_known = declared.value().rank_known;
    }
    g.outputs.push_back(it->second);
  }
  return g;
}

}  // namespace

Result<Graph> import_onnx(std::span<const uint8_t> model_bytes) {
  if (model_bytes.empty()) return import_error("not an ONNX model: empty input (0 bytes)");
  onnx::ModelProto model;
  if (model_bytes.size() > size_t(INT32_MAX) ||
      !model.ParseFromArray(model_bytes.data(), int(model_bytes.size()))) {
    return import_error("not an ONNX model: protobuf parse failed (" + std::to_string(model_bytes.size()) +
                        " bytes; corrupt or not a ModelProto)");
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    return import_error("not an ONNX model: no graph or ir_version (" + std::to_string(model_bytes.size()) +
                        " bytes parsed as an empty ModelProto)");
  }
  int64_t opset = -1;
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  }
  if (opset < 0) return Status(StatusCode::kUnsupported, "model imports no default-domain (ai.onnx) opset");
  if (opset < kMinOpset || opset > kMaxOpset) {
    return Status(StatusCode::kUnsupported, "unsupported opset " + std::to_string(opset) + " (supported " +
                                                std::to_string(kMinOpset) + ".." + std::to_string(kMaxOpset) + ")");
  }
  auto g = convert(model, opset);  // names undefined inputs precisely before the checker does
  if (!g) return g.status();
  try {
    if (opset <= kMaxCheckedOpset) onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto p = what.find("\n\n==> Context"); p != std::string::npos) what.resize(p);
    return import_error("invalid ONNX model (onnx checker): " + what);
  }
  g.value().opset = opset;
  return g;
}

Result<Graph> import_onnx_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kIoError, "cannot open ONNX model '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto g = import_onnx(bytes);
  if (!g) return g.status().with_context("importing " + path);
  return g;
}

}  // namespace ts::engine
