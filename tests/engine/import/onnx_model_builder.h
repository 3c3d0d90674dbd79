#pragma once
// Builds small ONNX models in tests with onnx's protobuf classes.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ts::engine::testing {

// A dim for a graph input/output: a size, a symbol, or "" for an unnamed dynamic dim.
struct D {
  int64_t v = -1;
  std::string s;
  D(int64_t x) : v(x) {}                 // NOLINT: implicit for brace lists
  D(const char* x) : s(x) {}             // NOLINT
};

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int64_t opset = 14) {
    m_.set_ir_version(8);
    m_.set_producer_name("test");
    auto* op = m_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    g_ = m_.mutable_graph();
    g_->set_name("test");
  }
  void input(const std::string& name, const std::vector<D>& dims, int elem = onnx::TensorProto::FLOAT) {
    value_info(g_->add_input(), name, dims, elem);
  }
  void output(const std::string& name, const std::vector<D>& dims, int elem = onnx::TensorProto::FLOAT) {
    value_info(g_->add_output(), name, dims, elem);
  }
  void init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& xs,
                bool raw = true) {
    auto* t = g_->add_initializer();
    fill(t, name, dims, onnx::TensorProto::FLOAT);
    if (raw) t->set_raw_data(std::string(reinterpret_cast<const char*>(xs.data()), xs.size() * 4));
    else for (float x : xs) t->add_float_data(x);
  }
  void init_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& xs) {
    auto* t = g_->add_initializer();
    fill(t, name, dims, onnx::TensorProto::INT64);
    for (auto x : xs) t->add_int64_data(x);
  }
  // Constant node with an INT64 tensor `value`.
  void constant_i64(const std::string& out, const std::vector<int64_t>& dims, const std::vector<int64_t>& xs) {
    auto& n = node("Constant", {}, {out}, "const_" + out);
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    fill(a->mutable_t(), "", dims, onnx::TensorProto::INT64);
    for (auto x : xs) a->mutable_t()->add_int64_data(x);
  }
  void constant_f32(const std::string& out, float x) {
    auto& n = node("Constant", {}, {out}, "const_" + out);
    auto* a = n.add_attribute();
    a->set_name("value_float");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(x);
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(g_->node_size()) : name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return *n;
  }
  static void attr_i(onnx::NodeProto& n, const std::string& k, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_f(onnx::NodeProto& n, const std::string& k, float v) {
    auto* a = n.add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_s(onnx::NodeProto& n, const std::string& k, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr_ints(onnx::NodeProto& n, const std::string& k, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  std::vector<uint8_t> bytes() const {
    std::string s = m_.SerializeAsString();
    return std::vector<uint8_t>(s.begin(), s.end());
  }
  onnx::ModelProto& model() { return m_; }

 private:
  static void fill(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims, int elem) {
    t->set_name(name);
    t->set_data_type(elem);
    for (auto d : dims) t->add_dims(d);
  }
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<D>& dims, int elem) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* sh = tt->mutable_shape();
    for (auto& d : dims) {
      auto* dim = sh->add_dim();
      if (d.v >= 0) dim->set_dim_value(d.v);
      else if (!d.s.empty()) dim->set_dim_param(d.s);
    }
  }
  onnx::ModelProto m_;
  onnx::GraphProto* g_;
};

}  // namespace ts::engine::testing
