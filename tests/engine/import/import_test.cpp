// import_onnx: what a model becomes in the IR, and the errors for bad models.
#include <gtest/gtest.h>

#include "engine/onnx_import.h"
#include "engine/passes/passes.h"
#include "onnx_model_builder.h"

namespace ts::engine {
namespace {

using testing::OnnxModelBuilder;

std::string err(const Result<Graph>& r) { return r.is_ok() ? "<ok>" : r.status().message(); }

OnnxModelBuilder relu_model(int64_t opset) {
  OnnxModelBuilder b(opset);
  b.input("x", {"batch", 4});
  b.output("y", {"batch", 4});
  b.node("Relu", {"x"}, {"y"}, "act");
  return b;
}

TEST(OnnxImport, InputsDimsInitializersConstantsAndAttrs) {
  OnnxModelBuilder b;
  b.input("x", {"batch", "", 8});
  b.input("w", {8, 2});  // also an initializer: a constant, not a runtime input
  b.init_f32("w", {8, 2}, std::vector<float>(16, 0.5f), /*raw=*/false);
  b.init_f32("bias", {2}, {1.f, 2.f});
  b.constant_i64("perm_src", {3}, {2, 0, 1});
  b.constant_f32("half", 0.5f);
  b.output("y", {"batch", "", 2});
  b.node("MatMul", {"x", "w"}, {"mm"}, "mm");
  auto& sm = b.node("Softmax", {"mm"}, {"y"}, "sm");
  OnnxModelBuilder::attr_i(sm, "axis", -1);
  auto r = import_onnx(b.bytes());
  ASSERT_TRUE(r.is_ok()) << err(r);
  const Graph& g = r.value();
  EXPECT_EQ(g.opset, 14);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(shape_to_string(g.value(g.inputs[0]).shape), "[batch,dx_1,8]");
  ValueId w = g.find_value("w");
  ASSERT_NE(w, kNoValue);
  EXPECT_TRUE(g.value(w).is_constant);
  EXPECT_EQ(constant_as_f64(g.value(w))[15], 0.5);
  EXPECT_EQ(constant_as_f64(g.value(g.find_value("bias")))[1], 2.0);
  EXPECT_EQ(constant_as_i64(g.value(g.find_value("perm_src"))), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(g.value(g.find_value("half")).shape.size(), 0u);
  EXPECT_FLOAT_EQ(float(constant_as_f64(g.value(g.find_value("half")))[0]), 0.5f);
  ASSERT_EQ(g.nodes.size(), 2u);  // Constant nodes become values, not nodes
  EXPECT_EQ(g.nodes[1].op, "Softmax");
  EXPECT_EQ(g.nodes[1].attr_i("axis", 0), -1);
  EXPECT_EQ(g.outputs.size(), 1u);
}

TEST(OnnxImport, ConstantOfShapeTensorValueBecomesFloatAttr) {
  OnnxModelBuilder b;
  b.constant_i64("shp", {2}, {2, 3});
  auto& n = b.node("ConstantOfShape", {"shp"}, {"y"}, "cos");
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_float_data(7.f);
  b.output("y", {2, 3});
  auto r = import_onnx(b.bytes());
  ASSERT_TRUE(r.is_ok()) << err(r);
  EXPECT_FLOAT_EQ(r.value().nodes[0].attr_f("value", 0), 7.f);
}

TEST(OnnxImport, OpsetOutsideSevenToTwentyOneIsRefused) {
  for (int64_t opset : {1, 6, 22, 23}) {
    auto r = import_onnx(relu_model(opset).bytes());
    ASSERT_FALSE(r.is_ok()) << opset;
    EXPECT_EQ(err(r), "unsupported opset " + std::to_string(opset) + " (supported 7..21)");
  }
  for (int64_t opset : {7, 9, 13, 14, 17, 18, 21}) EXPECT_TRUE(import_onnx(relu_model(opset).bytes()).is_ok()) << opset;
}

TEST(OnnxImport, MissingInitializerNamesNodeAndInput) {
  OnnxModelBuilder b;
  b.input("x", {"batch", 4});
  b.output("y", {"batch", 2});
  b.node("Gemm", {"x", "fc.weight", "fc.bias"}, {"y"}, "/fc/Gemm");
  b.init_f32("fc.bias", {2}, {0.f, 0.f});  // weight never stored
  auto r = import_onnx(b.bytes());
  EXPECT_NE(err(r).find("node '/fc/Gemm' (Gemm): input 'fc.weight' is not defined"), std::string::npos) << err(r);
  EXPECT_NE(err(r).find("missing initializer"), std::string::npos);
}

TEST(OnnxImport, DanglingInputNamesNodeAndInput) {
  OnnxModelBuilder b;
  b.input("x", {4});
  b.output("y", {4});
  b.node("Add", {"x", "nowhere"}, {"y"}, "adder");
  auto r = import_onnx(b.bytes());
  EXPECT_NE(err(r).find("node 'adder' (Add): input 'nowhere' is not defined"), std::string::npos) << err(r);
}

TEST(OnnxImport, CorruptAndEmptyBytesAreNotAModel) {
  EXPECT_EQ(err(import_onnx({})), "not an ONNX model: empty input (0 bytes)");
  std::vector<uint8_t> junk = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x34};
  EXPECT_NE(err(import_onnx(junk)).find("not an ONNX model"), std::string::npos) << err(import_onnx(junk));
  std::string text = "this is a text file, not a model";
  std::vector<uint8_t> t(text.begin(), text.end());
  EXPECT_NE(err(import_onnx(t)).find("not an ONNX model"), std::string::npos) << err(import_onnx(t));
  auto good = relu_model(14).bytes();
  good.resize(good.size() / 2);  // truncated
  EXPECT_NE(err(import_onnx(good)).find("not an ONNX model"), std::string::npos) << err(import_onnx(good));
}

TEST(OnnxImport, MissingFileIsAnIoError) {
  auto r = import_onnx_file("/nonexistent/model.onnx");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(err(r).find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(OnnxImport, CheckerRejectsWhatTheImporterDoesNot) {
  auto b = relu_model(14);
  b.model().mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  auto r = import_onnx(b.bytes());
  EXPECT_NE(err(r).find("invalid ONNX model (onnx checker)"), std::string::npos) << err(r);
  EXPECT_NE(err(r).find("NoSuchOp"), std::string::npos) << err(r);
}

TEST(OnnxImport, ShapeMismatchNamesTheNode) {
  OnnxModelBuilder b;
  b.input("a", {2, 3});
  b.input("b", {4, 5});
  b.output("y", {2, 5});
  b.node("MatMul", {"a", "b"}, {"y"}, "mm");
  auto r = import_onnx(b.bytes());
  ASSERT_TRUE(r.is_ok()) << err(r);
  PassLog log;
  Status s = run_passes(r.value(), log);
  EXPECT_EQ(s.message(), "node 'mm' (MatMul): inner dims differ: [2,3] · [4,5] (3 vs 4)");
}

}  // namespace
}  // namespace ts::engine
