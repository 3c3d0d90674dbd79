// infer_shapes: every supported op, with symbolic dims carried through.
#include <gtest/gtest.h>

#include "engine/onnx_import.h"
#include "engine/passes/passes.h"
#include "onnx_model_builder.h"

namespace ts::engine {
namespace {

using testing::OnnxModelBuilder;
using B = OnnxModelBuilder;

// Imports b and runs infer_shapes only; returns the graph (fails the test on error).
Graph inferred(const OnnxModelBuilder& b) {
  auto r = import_onnx(b.bytes());
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return {};
  PassLog log;
  Status s = infer_shapes(r.value(), log);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return std::move(r).value();
}

std::string shape(const Graph& g, const std::string& name) {
  ValueId v = g.find_value(name);
  if (v == kNoValue) return "<no value " + name + ">";
  return shape_to_string(g.value(v).shape);
}

TEST(InferShapes, MatMulGemmAndBroadcastKeepSymbols) {
  B b;
  b.input("x", {"batch", "seq", 32});
  b.input("x2", {"batch", 32});
  b.init_f32("w", {32, 64}, std::vector<float>(32 * 64, 0.f));
  b.init_f32("wt", {16, 32}, std::vector<float>(16 * 32, 0.f));
  b.init_f32("bias", {64}, std::vector<float>(64, 0.f));
  b.node("MatMul", {"x", "w"}, {"mm"});
  b.node("Add", {"mm", "bias"}, {"add"});
  b.node("Relu", {"add"}, {"relu"});
  b.node("Sigmoid", {"relu"}, {"sig"});
  b.node("Tanh", {"sig"}, {"tanh"});
  b.node("Erf", {"tanh"}, {"erf"});
  b.node("Sqrt", {"erf"}, {"sqrt"});
  b.node("Pow", {"sqrt", "bias"}, {"pow"});
  b.node("Sub", {"pow", "mm"}, {"sub"});
  b.node("Div", {"sub", "mm"}, {"div"});
  b.node("Mul", {"div", "mm"}, {"mul"});
  auto& gemm = b.node("Gemm", {"x2", "wt"}, {"gemm"});
  B::attr_i(gemm, "transB", 1);
  b.output("mul", {"batch", "seq", 64});
  b.output("gemm", {"batch", 16});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "mm"), "[batch,seq,64]");
  EXPECT_EQ(shape(g, "add"), "[batch,seq,64]");
  EXPECT_EQ(shape(g, "mul"), "[batch,seq,64]");
  EXPECT_EQ(shape(g, "gemm"), "[batch,16]");
}

TEST(InferShapes, BroadcastMismatchNamesNode) {
  B b;
  b.input("a", {"batch", 3});
  b.input("c", {4});
  b.node("Add", {"a", "c"}, {"y"}, "bad_add");
  b.output("y", {"batch", 3});
  auto r = import_onnx(b.bytes());
  ASSERT_TRUE(r.is_ok());
  PassLog log;
  EXPECT_EQ(infer_shapes(r.value(), log).message(),
            "node 'bad_add' (Add): shapes [batch,3] and [4] cannot broadcast (axis 1)");
}

TEST(InferShapes, ConvOneAndTwoD) {
  B b;
  b.input("x", {"batch", 8, "seq"});
  b.init_f32("w1", {16, 8, 3}, std::vector<float>(16 * 8 * 3, 0.f));
  auto& c1 = b.node("Conv", {"x", "w1"}, {"same"});  // causal-style "same" padding with dilation 2
  B::attr_ints(c1, "dilations", {2});
  B::attr_ints(c1, "pads", {2, 2});
  auto& c1b = b.node("Conv", {"x", "w1"}, {"grow"});
  B::attr_ints(c1b, "dilations", {2});
  B::attr_ints(c1b, "pads", {4, 4});
  b.input("img", {1, 4, 10, 9});
  b.init_f32("w2", {6, 2, 3, 3}, std::vector<float>(6 * 2 * 9, 0.f));
  auto& c2 = b.node("Conv", {"img", "w2"}, {"img_out"});
  B::attr_ints(c2, "strides", {2, 2});
  B::attr_ints(c2, "pads", {1, 1, 1, 1});
  B::attr_i(c2, "group", 2);
  b.output("same", {"batch", 16, "seq"});
  b.output("grow", {"batch", 16, ""});
  b.output("img_out", {1, 6, 5, 5});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "same"), "[batch,16,seq]");
  EXPECT_EQ(shape(g, "grow"), "[batch,16,grow#2]");  // seq+4: a fresh symbol
  EXPECT_EQ(shape(g, "img_out"), "[1,6,5,5]");
}

TEST(InferShapes, ConvChannelMismatchNamesNode) {
  B b;
  b.input("x", {1, 5, 10});
  b.init_f32("w", {4, 8, 3}, std::vector<float>(96, 0.f));
  b.node("Conv", {"x", "w"}, {"y"}, "conv0");
  b.output("y", {1, 4, 8});
  auto r = import_onnx(b.bytes());
  ASSERT_TRUE(r.is_ok());
  PassLog log;
  auto m = infer_shapes(r.value(), log).message();
  EXPECT_NE(m.find("node 'conv0' (Conv): input channels 5"), std::string::npos) << m;
}

TEST(InferShapes, DataMovementOps) {
  B b;
  b.input("x", {"batch", "seq", 32});
  auto& tr = b.node("Transpose", {"x"}, {"t"});
  B::attr_ints(tr, "perm", {1, 0, 2});
  b.init_i64("shp", {4}, {0, 0, 4, -1});
  b.node("Reshape", {"x", "shp"}, {"r"});
  b.init_i64("shp2", {2}, {-1, 32});
  b.node("Reshape", {"x", "shp2"}, {"r2"});
  auto& fl = b.node("Flatten", {"x"}, {"f"});
  B::attr_i(fl, "axis", 2);
  b.init_i64("ax0", {1}, {0});
  b.init_i64("ax1", {1}, {1});
  b.node("Unsqueeze", {"x", "ax0"}, {"u"});
  b.node("Squeeze", {"u", "ax0"}, {"sq"});
  b.init_i64("st", {1}, {-1});
  b.init_i64("en", {1}, {INT64_MAX});
  b.node("Slice", {"x", "st", "en", "ax1"}, {"sl"});
  b.init_i64("st2", {1}, {4});
  b.init_i64("en2", {1}, {20});
  b.init_i64("ax2", {1}, {2});
  b.init_i64("step2", {1}, {2});
  b.node("Slice", {"x", "st2", "en2", "ax2", "step2"}, {"sl2"});
  b.init_i64("idx", {}, {-1});
  auto& ga = b.node("Gather", {"x", "idx"}, {"ga"});
  B::attr_i(ga, "axis", 1);
  auto& cc = b.node("Concat", {"x", "x"}, {"cc"});
  B::attr_i(cc, "axis", 2);
  auto& cc2 = b.node("Concat", {"x", "x"}, {"cc2"});
  B::attr_i(cc2, "axis", 1);
  b.node("Identity", {"x"}, {"id"});
  auto& ca = b.node("Cast", {"x"}, {"ca"});
  B::attr_i(ca, "to", onnx::TensorProto::INT64);
  for (auto o : {"t", "r", "r2", "f", "sq", "sl", "sl2", "ga", "cc", "cc2", "id", "ca"}) b.output(o, {});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "t"), "[seq,batch,32]");
  EXPECT_EQ(shape(g, "r"), "[batch,seq,4,8]");
  EXPECT_EQ(shape(g, "r2"), "[batch*seq,32]");
  EXPECT_EQ(shape(g, "f"), "[batch*seq,32]");
  EXPECT_EQ(shape(g, "sq"), "[batch,seq,32]");
  EXPECT_EQ(shape(g, "sl"), "[batch,1,32]");
  EXPECT_EQ(shape(g, "sl2"), "[batch,seq,8]");
  EXPECT_EQ(shape(g, "ga"), "[batch,32]");
  EXPECT_EQ(shape(g, "cc"), "[batch,seq,64]");
  EXPECT_EQ(shape(g, "cc2"), "[batch,cc2#1,32]");
  EXPECT_EQ(shape(g, "id"), "[batch,seq,32]");
  EXPECT_EQ(g.value(g.find_value("ca")).dtype, DType::kI64);
}

// Constant axes, starts and steps of -2 (PyTorch's x[:, -2:], unsqueeze(-2), flip(dims=[-2])).
// -2 once collided with the "unknown element" sentinel of shape data and such models failed
// with "axes input is not constant" / "starts/ends are not constant".
TEST(InferShapes, NegativeTwoIsAConstantLikeAnyOther) {
  B b;
  b.input("x", {"batch", 6, 1, 8});
  b.init_i64("m2", {1}, {-2});
  b.init_i64("big", {1}, {INT64_MAX});
  b.init_i64("m1", {1}, {-1});
  b.init_i64("lowest", {1}, {-INT64_MAX});
  b.init_i64("ax_pair", {2}, {-3, -2});
  b.node("Squeeze", {"x", "m2"}, {"sq"});                          // [batch,6,8]
  b.node("Unsqueeze", {"sq", "m2"}, {"un"});                       // [batch,6,1,8]
  b.init_i64("ax1", {1}, {1});
  b.node("Slice", {"sq", "m2", "big", "ax1"}, {"last2"});          // [batch,2,8]
  b.node("Slice", {"sq", "m1", "lowest", "m2", "m1"}, {"flip"});   // [batch,6,8]
  b.init_i64("st2", {2}, {0, -2});
  b.init_i64("en2", {2}, {-2, 8});
  b.node("Slice", {"x", "st2", "en2", "ax_pair"}, {"sl2"});        // [batch,4,1,8]
  for (auto o : {"un", "last2", "flip", "sl2"}) b.output(o, {});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "sq"), "[batch,6,8]");
  EXPECT_EQ(shape(g, "un"), "[batch,6,1,8]");
  EXPECT_EQ(shape(g, "last2"), "[batch,2,8]");
  EXPECT_EQ(shape(g, "flip"), "[batch,6,8]");
  EXPECT_EQ(shape(g, "sl2"), "[batch,4,1,8]");
}

TEST(InferShapes, ShapeDataFlowsIntoReshapeExpandConstantOfShape) {
  // PyTorch's head split: Reshape(x, Concat(Shape(x)[0], Shape(x)[1], 4, 8)) with symbolic dims.
  B b;
  b.input("x", {"batch", "seq", 32});
  b.node("Shape", {"x"}, {"s"});
  b.init_i64("i0", {}, {0});
  b.init_i64("i1", {}, {1});
  b.init_i64("ax", {1}, {0});
  b.node("Gather", {"s", "i0"}, {"g0"});
  b.node("Gather", {"s", "i1"}, {"g1"});
  b.node("Unsqueeze", {"g0", "ax"}, {"u0"});
  b.node("Unsqueeze", {"g1", "ax"}, {"u1"});
  b.init_i64("tail", {2}, {4, 8});
  auto& cc = b.node("Concat", {"u0", "u1", "tail"}, {"target"});
  B::attr_i(cc, "axis", 0);
  b.node("Reshape", {"x", "target"}, {"heads"});
  b.init_i64("two", {1}, {2});
  auto& c2 = b.node("Concat", {"two", "u0", "tail"}, {"h0shape"});
  B::attr_i(c2, "axis", 0);
  b.node("ConstantOfShape", {"h0shape"}, {"h0"});
  b.init_f32("one", {1, 1, 32}, std::vector<float>(32, 1.f));
  b.node("Expand", {"one", "s"}, {"ex"});
  b.output("heads", {});
  b.output("h0", {});
  b.output("ex", {});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "s"), "[3]");
  EXPECT_EQ(shape(g, "heads"), "[batch,seq,4,8]");
  EXPECT_EQ(shape(g, "h0"), "[2,batch,4,8]");
  EXPECT_EQ(shape(g, "ex"), "[batch,seq,32]");
}

TEST(InferShapes, NormReduceSoftmaxWhere) {
  B b(17);  // LayerNormalization is an opset-17 op
  b.input("x", {"batch", "seq", 64});
  b.init_f32("gamma", {64}, std::vector<float>(64, 1.f));
  b.init_f32("beta", {64}, std::vector<float>(64, 0.f));
  b.node("LayerNormalization", {"x", "gamma", "beta"}, {"ln"});
  auto& rm = b.node("ReduceMean", {"x"}, {"rm"});
  B::attr_ints(rm, "axes", {-1});
  auto& rm2 = b.node("ReduceMean", {"x"}, {"rm2"});
  B::attr_ints(rm2, "axes", {1});
  B::attr_i(rm2, "keepdims", 0);
  auto& sm = b.node("Softmax", {"x"}, {"sm"});
  B::attr_i(sm, "axis", -1);
  b.input("cond", {1, "seq", 1}, onnx::TensorProto::BOOL);
  b.node("Where", {"cond", "x", "rm"}, {"wh"});
  for (auto o : {"ln", "rm", "rm2", "sm", "wh"}) b.output(o, {});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "ln"), "[batch,seq,64]");
  EXPECT_EQ(shape(g, "rm"), "[batch,seq,1]");
  EXPECT_EQ(shape(g, "rm2"), "[batch,64]");
  EXPECT_EQ(shape(g, "sm"), "[batch,seq,64]");
  EXPECT_EQ(shape(g, "wh"), "[batch,seq,64]");
  EXPECT_EQ(g.value(g.find_value("wh")).dtype, DType::kF32);
}

TEST(InferShapes, GruAndLstmOutputs) {
  B b;
  b.input("x", {"seq", "batch", 32});
  b.init_f32("W", {1, 3 * 16, 32}, std::vector<float>(48 * 32, 0.f));
  b.init_f32("R", {1, 3 * 16, 16}, std::vector<float>(48 * 16, 0.f));
  auto& gru = b.node("GRU", {"x", "W", "R"}, {"Y", "Yh"}, "gru");
  B::attr_i(gru, "hidden_size", 16);
  B::attr_i(gru, "linear_before_reset", 1);
  b.init_f32("LW", {2, 4 * 8, 32}, std::vector<float>(2 * 32 * 32, 0.f));
  b.init_f32("LR", {2, 4 * 8, 8}, std::vector<float>(2 * 32 * 8, 0.f));
  auto& lstm = b.node("LSTM", {"x", "LW", "LR"}, {"LY", "LYh", "LYc"}, "lstm");
  B::attr_i(lstm, "hidden_size", 8);
  B::attr_s(lstm, "direction", "bidirectional");
  for (auto o : {"Y", "Yh", "LY", "LYh", "LYc"}) b.output(o, {});
  Graph g = inferred(b);
  EXPECT_EQ(shape(g, "Y"), "[seq,1,batch,16]");
  EXPECT_EQ(shape(g, "Yh"), "[1,batch,16]");
  EXPECT_EQ(shape(g, "LY"), "[seq,2,batch,8]");
  EXPECT_EQ(shape(g, "LYc"), "[2,batch,8]");
}

TEST(InferShapes, UnsupportedOpNamesNodeAndOp) {
  B b;
  b.input("x", {4});
  b.node("Sin", {"x"}, {"y"}, "sine");
  b.output("y", {4});
  auto r = import_onnx(b.bytes());
  ASSERT_TRUE(r.is_ok());
  PassLog log;
  Status s = infer_shapes(r.value(), log);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "node 'sine' (Sin): unsupported op 'Sin' (no shape inference)");
}

}  // namespace
}  // namespace ts::engine
