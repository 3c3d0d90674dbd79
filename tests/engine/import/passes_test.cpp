// fold_constants, remove_dead, fuse and run_passes on small models.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/onnx_import.h"
#include "engine/passes/passes.h"
#include "onnx_model_builder.h"

namespace ts::engine {
namespace {

using testing::OnnxModelBuilder;
using B = OnnxModelBuilder;

Graph passed(const OnnxModelBuilder& b, PassLog& log) {
  auto r = import_onnx(b.bytes());
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return {};
  Status s = run_passes(r.value(), log);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return std::move(r).value();
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> o;
  for (auto& n : g.nodes) o.push_back(n.op);
  return o;
}

// x → Shape → Gather(0) → Unsqueeze → Concat(·, [-1]) → Reshape(x, ·)
B flatten_chain(bool symbolic_batch) {
  B b;
  if (symbolic_batch) b.input("x", {"batch", 3, 4});
  else b.input("x", {2, 3, 4});
  b.node("Shape", {"x"}, {"s"}, "/Shape");
  b.constant_i64("i0", {}, {0});
  b.node("Gather", {"s", "i0"}, {"g"}, "/Gather");
  b.constant_i64("ax", {1}, {0});
  b.node("Unsqueeze", {"g", "ax"}, {"u"}, "/Unsqueeze");
  b.constant_i64("minus1", {1}, {-1});
  auto& cc = b.node("Concat", {"u", "minus1"}, {"target"}, "/Concat");
  B::attr_i(cc, "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"}, "/Reshape");
  b.output("y", {});
  return b;
}

TEST(FoldConstants, ShapeGatherUnsqueezeConcatReshapeFoldsWithStaticDims) {
  PassLog log;
  Graph g = passed(flatten_chain(false), log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Reshape"}));
  const Value& target = g.value(g.nodes[0].inputs[1]);
  ASSERT_TRUE(target.is_constant);
  EXPECT_EQ(constant_as_i64(target), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(shape_to_string(g.value(g.outputs[0]).shape), "[2,12]");
  // Folded intermediate values are gone from the value table.
  EXPECT_EQ(g.find_value("g"), kNoValue);
  EXPECT_EQ(g.find_value("i0"), kNoValue);
}

TEST(FoldConstants, ShapeOfSymbolicDimIsLeftButShapeStillInferred) {
  PassLog log;
  Graph g = passed(flatten_chain(true), log);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Shape", "Gather", "Unsqueeze", "Concat", "Reshape"}));
  EXPECT_EQ(shape_to_string(g.value(g.outputs[0]).shape), "[batch,12]");
}

TEST(FoldConstants, ArithmeticTransposeCastOnConstants) {
  B b;
  b.input("x", {"batch", 2});
  b.init_f32("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  auto& t = b.node("Transpose", {"w"}, {"wt"});
  B::attr_ints(t, "perm", {1, 0});
  b.init_f32("two", {}, {2.f});
  b.node("Mul", {"wt", "two"}, {"w2"});
  b.node("MatMul", {"x", "w2"}, {"y"}, "mm");
  b.output("y", {"batch", 3});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"MatMul"}));
  const Value& w2 = g.value(g.nodes[0].inputs[1]);
  ASSERT_TRUE(w2.is_constant);
  EXPECT_EQ(shape_to_string(w2.shape), "[2,3]");
  EXPECT_EQ(constant_as_f64(w2), (std::vector<double>{2, 6, 10, 4, 8, 12}));
}

TEST(RemoveDead, DropsNodesThatReachNoOutput) {
  B b;
  b.input("x", {"batch", 4});
  b.node("Relu", {"x"}, {"y"}, "live");
  b.node("Sigmoid", {"x"}, {"unused"}, "dead");
  b.output("y", {"batch", 4});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "live");
  EXPECT_EQ(g.find_value("unused"), kNoValue);
}

TEST(Fuse, GemmWithBiasAndReluBecomesOneFusedGemm) {
  B b;
  b.input("x", {"batch", 8});
  b.init_f32("W", {4, 8}, std::vector<float>(32, 0.1f));
  b.init_f32("C", {4}, std::vector<float>(4, 0.f));
  auto& gm = b.node("Gemm", {"x", "W", "C"}, {"h"}, "/fc/Gemm");
  B::attr_i(gm, "transB", 1);
  b.node("Relu", {"h"}, {"y"}, "/act/Relu");
  b.output("y", {"batch", 4});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "FusedGemm");
  EXPECT_EQ(f.attr_s("activation", ""), "relu");
  EXPECT_EQ(f.attr_i("trans_b", -1), 1);
  EXPECT_EQ(f.fused_from, (std::vector<std::string>{"/fc/Gemm", "/act/Relu"}));
  EXPECT_EQ(g.value(f.inputs[2]).name, "C");
  EXPECT_EQ(shape_to_string(g.value(f.outputs[0]).shape), "[batch,4]");
  bool logged = false;
  for (auto& l : log.lines) logged |= l == "fuse: FusedGemm /fc/Gemm ← [/fc/Gemm, /act/Relu]";
  EXPECT_TRUE(logged);
}

TEST(Fuse, MatMulBiasAndErfGeluBecomesFusedGemm) {
  B b;
  b.input("x", {"batch", "seq", 8});
  b.init_f32("W", {8, 16}, std::vector<float>(128, 0.1f));
  b.init_f32("bias", {16}, std::vector<float>(16, 0.f));
  b.node("MatMul", {"x", "W"}, {"mm"}, "/ff/MatMul");
  b.node("Add", {"bias", "mm"}, {"t"}, "/ff/Add");
  b.init_f32("sqrt2", {}, {1.4142135381698608f});
  b.init_f32("one", {}, {1.f});
  b.init_f32("half", {}, {0.5f});
  b.node("Div", {"t", "sqrt2"}, {"d"}, "/gelu/Div");
  b.node("Erf", {"d"}, {"e"}, "/gelu/Erf");
  b.node("Add", {"e", "one"}, {"a"}, "/gelu/Add");
  b.node("Mul", {"t", "a"}, {"m"}, "/gelu/Mul");
  b.node("Mul", {"m", "half"}, {"y"}, "/gelu/Mul_1");
  b.output("y", {"batch", "seq", 16});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op, "FusedGemm");
  EXPECT_EQ(f.attr_s("activation", ""), "gelu");
  EXPECT_EQ(f.attr_i("trans_b", -1), 0);
  EXPECT_EQ(f.fused_from.size(), 7u);
  EXPECT_EQ(shape_to_string(g.value(f.outputs[0]).shape), "[batch,seq,16]");
}

TEST(Fuse, MatMulWithoutEpilogueStaysMatMul) {
  B b;
  b.input("x", {"batch", 8});
  b.init_f32("W", {8, 4}, std::vector<float>(32, 0.1f));
  b.node("MatMul", {"x", "W"}, {"y"}, "mm");
  b.output("y", {"batch", 4});
  PassLog log;
  EXPECT_EQ(ops(passed(b, log)), (std::vector<std::string>{"MatMul"}));
}

TEST(Fuse, DecomposedLayerNormBecomesLayerNormalization) {
  B b;
  b.input("x", {"batch", "seq", 16});
  b.init_f32("two", {}, {2.f});
  b.init_f32("eps", {}, {1e-5f});
  b.init_f32("gamma", {16}, std::vector<float>(16, 1.5f));
  b.init_f32("beta", {16}, std::vector<float>(16, 0.25f));
  auto& r1 = b.node("ReduceMean", {"x"}, {"m"}, "/ln/ReduceMean");
  B::attr_ints(r1, "axes", {-1});
  b.node("Sub", {"x", "m"}, {"d"}, "/ln/Sub");
  b.node("Pow", {"d", "two"}, {"p"}, "/ln/Pow");
  auto& r2 = b.node("ReduceMean", {"p"}, {"v"}, "/ln/ReduceMean_1");
  B::attr_ints(r2, "axes", {-1});
  b.node("Add", {"v", "eps"}, {"ve"}, "/ln/Add");
  b.node("Sqrt", {"ve"}, {"sd"}, "/ln/Sqrt");
  b.node("Div", {"d", "sd"}, {"n"}, "/ln/Div");
  b.node("Mul", {"n", "gamma"}, {"ng"}, "/ln/Mul");
  b.node("Add", {"ng", "beta"}, {"y"}, "/ln/Add_1");
  b.output("y", {"batch", "seq", 16});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"LayerNormalization"}));
  const Node& f = g.nodes[0];
  EXPECT_FLOAT_EQ(f.attr_f("epsilon", 0), 1e-5f);
  EXPECT_EQ(f.attr_i("axis", 0), -1);
  EXPECT_EQ(f.fused_from.size(), 9u);
  EXPECT_EQ(g.value(f.inputs[1]).name, "gamma");
  EXPECT_EQ(g.value(f.inputs[2]).name, "beta");
  EXPECT_EQ(shape_to_string(g.value(f.outputs[0]).shape), "[batch,seq,16]");
}

TEST(Fuse, AttentionBlockBecomesFusedAttention) {
  B b;
  b.input("q", {"batch", 4, "seq", 16});
  b.input("k", {"batch", 4, "seq", 16});
  b.input("v", {"batch", 4, "seq", 16});
  auto& t = b.node("Transpose", {"k"}, {"kt"}, "/attn/Transpose");
  B::attr_ints(t, "perm", {0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"}, "/attn/MatMul");
  b.init_f32("scale", {}, {4.f});
  b.node("Div", {"s", "scale"}, {"ss"}, "/attn/Div");
  auto& sm = b.node("Softmax", {"ss"}, {"p"}, "/attn/Softmax");
  B::attr_i(sm, "axis", -1);
  b.node("MatMul", {"p", "v"}, {"y"}, "/attn/MatMul_1");
  b.output("y", {"batch", 4, "seq", 16});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"FusedAttention"}));
  const Node& f = g.nodes[0];
  EXPECT_FLOAT_EQ(f.attr_f("scale", 0), 0.25f);
  EXPECT_EQ(f.attr_i("k_transposed", -1), 0);
  EXPECT_EQ(g.value(f.inputs[1]).name, "k");
  EXPECT_EQ(f.fused_from.size(), 5u);
  EXPECT_EQ(shape_to_string(g.value(f.outputs[0]).shape), "[batch,4,seq,16]");
}

// PyTorch's MultiheadAttention scales q (q / √d) before q·kᵀ: the Div joins the fused node.
TEST(Fuse, AttentionAbsorbsScalingOfQ) {
  B b;
  b.input("q", {"batch", 4, "seq", 16});
  b.input("k", {"batch", 4, "seq", 16});
  b.input("v", {"batch", 4, "seq", 16});
  b.init_f32("c", {}, {8.f});
  b.node("Div", {"q", "c"}, {"qs"}, "/attn/Div_q");
  auto& t = b.node("Transpose", {"k"}, {"kt"}, "/attn/Transpose");
  B::attr_ints(t, "perm", {0, 1, 3, 2});
  b.node("MatMul", {"qs", "kt"}, {"s"}, "/attn/MatMul");
  b.init_f32("scale", {}, {2.f});
  b.node("Mul", {"s", "scale"}, {"ss"}, "/attn/Mul");
  auto& sm = b.node("Softmax", {"ss"}, {"p"}, "/attn/Softmax");
  B::attr_i(sm, "axis", -1);
  b.node("MatMul", {"p", "v"}, {"y"}, "/attn/MatMul_1");
  b.output("y", {"batch", 4, "seq", 16});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"FusedAttention"}));
  const Node& f = g.nodes[0];
  EXPECT_FLOAT_EQ(f.attr_f("scale", 0), 0.25f);
  EXPECT_EQ(g.value(f.inputs[0]).name, "q");
  EXPECT_EQ(f.fused_from.size(), 6u);
}

// PyTorch exports kᵀ as one Transpose of [seq, b·h, d] with perm [1,2,0]: it becomes perm
// [1,0,2] (k itself, [b·h, seq, d]) and the fused node reads k untransposed.
TEST(Fuse, AttentionRewritesSeqMajorKTransposeToK) {
  B b;
  b.input("q", {4, "seq", 16});
  b.input("k", {"seq", 4, 16});
  b.input("v", {4, "seq", 16});
  auto& t = b.node("Transpose", {"k"}, {"kt"}, "/attn/Transpose");
  B::attr_ints(t, "perm", {1, 2, 0});
  b.node("MatMul", {"q", "kt"}, {"s"}, "/attn/MatMul");
  auto& sm = b.node("Softmax", {"s"}, {"p"}, "/attn/Softmax");
  B::attr_i(sm, "axis", -1);
  b.node("MatMul", {"p", "v"}, {"y"}, "/attn/MatMul_1");
  b.output("y", {4, "seq", 16});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Transpose", "FusedAttention"}));
  EXPECT_EQ(g.nodes[0].attr_ints("perm"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(shape_to_string(g.value(g.nodes[0].outputs[0]).shape), "[4,seq,16]");
  EXPECT_EQ(g.nodes[1].attr_i("k_transposed", -1), 0);
  EXPECT_EQ(g.nodes[1].inputs[1], g.nodes[0].outputs[0]);
}

// A scaled q that something else also reads stays a separate Div.
TEST(Fuse, AttentionKeepsSharedScaledQ) {
  B b;
  b.input("q", {"batch", 4, "seq", 16});
  b.input("k", {"batch", 4, "seq", 16});
  b.input("v", {"batch", 4, "seq", 16});
  b.init_f32("c", {}, {8.f});
  b.node("Div", {"q", "c"}, {"qs"}, "/attn/Div_q");
  auto& t = b.node("Transpose", {"k"}, {"kt"}, "/attn/Transpose");
  B::attr_ints(t, "perm", {0, 1, 3, 2});
  b.node("MatMul", {"qs", "kt"}, {"s"}, "/attn/MatMul");
  auto& sm = b.node("Softmax", {"s"}, {"p"}, "/attn/Softmax");
  B::attr_i(sm, "axis", -1);
  b.node("MatMul", {"p", "v"}, {"y"}, "/attn/MatMul_1");
  b.output("y", {"batch", 4, "seq", 16});
  b.output("qs", {"batch", 4, "seq", 16});
  PassLog log;
  Graph g = passed(b, log);
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Div", "FusedAttention"}));
  EXPECT_FLOAT_EQ(g.nodes[1].attr_f("scale", 0), 1.0f);
  EXPECT_EQ(g.value(g.nodes[1].inputs[0]).name, "qs");
}

TEST(RunPasses, LogsLayout) {
  B b;
  b.input("x", {4});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {4});
  PassLog log;
  passed(b, log);
  ASSERT_FALSE(log.lines.empty());
  EXPECT_EQ(log.lines.back(), "layout: row-major (cpu)");
}

// run_passes' status on a model the passes must refuse.
Status pass_status(const OnnxModelBuilder& b) {
  auto r = import_onnx(b.bytes());
  if (!r.is_ok()) return r.status();
  PassLog log;
  return run_passes(r.value(), log);
}

// onnx_fuzz (bench/results/fuzz-h200-cpu16-20261202-1923-plan-onnx-config.json): a Transpose whose
// perm repeats an axis passed shape inference, and on a constant, folding read past it (ASan:
// heap-buffer-overflow in fold_constants). Now an error naming the node, constant or not.
TEST(FoldConstants, TransposeWhosePermRepeatsAnAxisIsAnError) {
  B c;
  c.input("x", {"batch", 3});
  c.init_f32("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  B::attr_ints(c.node("Transpose", {"w"}, {"wt"}, "/w/Transpose"), "perm", {0, 0});
  c.node("Add", {"x", "wt"}, {"y"});
  c.output("y", {});
  Status s = pass_status(c);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("node '/w/Transpose' (Transpose): perm repeats axis 0"), std::string::npos) << s.message();

  B x;
  x.input("x", {"batch", 3, 4});
  B::attr_ints(x.node("Transpose", {"x"}, {"y"}, "/x/Transpose"), "perm", {0, 1, 0});
  x.output("y", {});
  s = pass_status(x);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("node '/x/Transpose' (Transpose): perm repeats axis 0"), std::string::npos) << s.message();
}

// onnx_fuzz (same run): Reshape of an empty constant to [0, -1] folded into a constant of shape
// [0, ?] (the -1 left as it was), which the plan loader then refused: the builder's own plan did
// not load. Like the kernel, folding refuses a -1 it cannot infer.
TEST(FoldConstants, ReshapeToMinusOneBesideAZeroIsAnError) {
  B b;
  b.input("x", {"batch", 3});
  b.init_f32("e", {0, 3}, {});
  b.init_i64("shape", {2}, {0, -1});
  b.node("Reshape", {"e", "shape"}, {"r"}, "/e/Reshape");
  B::attr_i(b.node("Concat", {"x", "r"}, {"y"}), "axis", 0);
  b.output("y", {});
  Status s = pass_status(b);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("node '/e/Reshape' (Reshape): cannot infer -1 reshaping [0,3]"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace ts::engine
