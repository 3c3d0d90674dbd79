// Output shapes the bindings cannot tell (a Reshape to [-1], a Concat along a dynamic axis, a
// ConstantOfShape of input data) come from the engine for the actual inputs, and a caller's
// buffer that is too small is an error naming the output and both shapes, with nothing written
// past the buffer (it once was: `Reshape(x, [-1])` on x 5x45x20 crashed `ticksentry infer`).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/engine.h"
#include "engine/npy.h"
#include "onnx_model_builder.h"

namespace ts::engine {
namespace {

using testing::OnnxModelBuilder;

std::shared_ptr<Engine> load(const OnnxModelBuilder& m, const std::string& input, std::vector<int64_t> min,
                             std::vector<int64_t> max) {
  BuildOptions o;
  o.time_tactics = false;
  OptimizationProfile p;
  p.inputs[input] = ShapeRange{min, max, max};
  o.profiles.push_back(p);
  auto plan = build(m.bytes(), o);
  EXPECT_TRUE(plan) << plan.status().to_string();
  if (!plan) return nullptr;
  auto e = Engine::load(plan.value());
  EXPECT_TRUE(e) << e.status().to_string();
  return e ? e.value() : nullptr;
}

HostTensor ramp(std::vector<int64_t> dims) {
  HostTensor t = HostTensor::zeros(DType::kF32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = float(i % 97) * 0.25f;
  return t;
}

// The flattening Reshape of the probe: one node, passes onnx.checker.
OnnxModelBuilder reshape_flat() {
  OnnxModelBuilder m(14);
  m.input("x", {"batch", "seq", 20});
  m.output("y", {""});
  m.init_i64("shape", {1}, {-1});
  m.node("Reshape", {"x", "shape"}, {"y"});
  return m;
}

TEST(EngineOutputShape, ReshapeToMinusOneReportsTheRealShape) {
  auto e = load(reshape_flat(), "x", {1, 1, 20}, {64, 64, 20});
  ASSERT_TRUE(e);
  auto ctx = e->create_context();
  ASSERT_TRUE(ctx);
  HostTensor x = ramp({5, 45, 20});
  const TensorView in[] = {x.view()};
  auto dims = ctx.value()->output_dims(in);
  ASSERT_TRUE(dims) << dims.status().to_string();
  ASSERT_EQ(dims.value().size(), 1u);
  EXPECT_EQ(dims.value()[0], (std::vector<int64_t>{4500}));

  HostTensor y = HostTensor::zeros(DType::kF32, dims.value()[0]);
  TensorView out[] = {y.view()};
  ASSERT_TRUE(ctx.value()->execute(in, out));
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{4500}));
  EXPECT_EQ(std::memcmp(y.data.data(), x.data.data(), x.data.size()), 0);
}

TEST(EngineOutputShape, TooSmallBufferIsAnErrorAndNothingIsWrittenPastIt) {
  auto e = load(reshape_flat(), "x", {1, 1, 20}, {64, 64, 20});
  ASSERT_TRUE(e);
  auto ctx = e->create_context();
  ASSERT_TRUE(ctx);
  HostTensor x = ramp({5, 45, 20});
  const TensorView in[] = {x.view()};
  // The buffer a caller guessing "the largest input dim" made: [45] — with a guard behind it.
  std::vector<float> mem(45 + 4500, NAN);
  TensorView out[] = {TensorView{DType::kF32, {45}, mem.data()}};
  Status s = ctx.value()->execute(in, out);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("output y"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[4500]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[45]"), std::string::npos) << s.message();
  for (size_t i = 0; i < mem.size(); ++i) ASSERT_TRUE(std::isnan(mem[i])) << "written at " << i;

  // capacity_bytes states the room as well; the context still works afterwards.
  TensorView out2[] = {TensorView{DType::kF32, {}, mem.data(), 100 * sizeof(float)}};
  EXPECT_FALSE(ctx.value()->execute(in, out2));
  TensorView out3[] = {TensorView{DType::kF32, {}, mem.data(), mem.size() * sizeof(float)}};
  EXPECT_TRUE(ctx.value()->execute(in, out3));
  EXPECT_EQ(out3[0].dims, (std::vector<int64_t>{4500}));
}

TEST(EngineOutputShape, ConcatAlongADynamicAxis) {
  OnnxModelBuilder m(14);
  m.input("x", {"batch", "seq", 4});
  m.output("y", {"batch", "", 4});
  auto& c = m.node("Concat", {"x", "x", "x"}, {"y"});
  OnnxModelBuilder::attr_i(c, "axis", 1);
  auto e = load(m, "x", {1, 1, 4}, {8, 64, 4});
  ASSERT_TRUE(e);
  auto ctx = e->create_context();
  ASSERT_TRUE(ctx);
  HostTensor x = ramp({3, 10, 4});
  const TensorView in[] = {x.view()};
  auto dims = ctx.value()->output_dims(in);
  ASSERT_TRUE(dims) << dims.status().to_string();
  EXPECT_EQ(dims.value()[0], (std::vector<int64_t>{3, 30, 4}));
}

// The probe's PyTorch export of sigmoid(x.flatten(1)): the output's second dim has a name of its
// own ("Sigmoid_dim_1"), which no input names. The CLI once guessed it as the largest input dim
// (45) and `infer` crashed; the engine gives [5, 900] for x 5x45x20 and fills it.
TEST(EngineOutputShape, SigmoidOfAFlattenedWindowLikeAPyTorchExport) {
  OnnxModelBuilder m(14);
  m.input("x", {"batch", "seq", 20});
  m.output("y", {"batch", "Sigmoid_dim_1"});
  OnnxModelBuilder::attr_i(m.node("Flatten", {"x"}, {"f"}, "/Flatten"), "axis", 1);
  m.node("Sigmoid", {"f"}, {"y"}, "/Sigmoid");
  HostTensor x = ramp({5, 45, 20});  // the probe's window
  const TensorView in[] = {x.view()};
  auto e = load(m, "x", {1, 1, 20}, {64, 64, 20});
  ASSERT_TRUE(e);
  auto ctx = e->create_context();
  ASSERT_TRUE(ctx);
  auto dims = ctx.value()->output_dims(in);
  ASSERT_TRUE(dims) << dims.status().to_string();
  ASSERT_EQ(dims.value()[0], (std::vector<int64_t>{5, 900}));
  HostTensor y = HostTensor::zeros(DType::kF32, dims.value()[0]);
  TensorView out[] = {y.view()};
  ASSERT_TRUE(ctx.value()->execute(in, out));
  for (int64_t i = 0; i < y.numel(); i += 449) {
    EXPECT_NEAR(y.as<float>()[i], 1.f / (1.f + std::exp(-x.as<float>()[i])), 1e-5f) << "at " << i;
  }
}

TEST(EngineOutputShape, ConstantOfShapeTakesItsShapeFromTheInputData) {
  OnnxModelBuilder m(14);
  m.input("shape", {3}, onnx::TensorProto::INT64);
  m.output("y", {"", "", ""});
  m.node("ConstantOfShape", {"shape"}, {"y"});
  BuildOptions o;
  o.time_tactics = false;
  auto plan = build(m.bytes(), o);
  ASSERT_TRUE(plan) << plan.status().to_string();
  auto e = Engine::load(plan.value());
  ASSERT_TRUE(e) << e.status().to_string();
  auto ctx = e.value()->create_context();
  ASSERT_TRUE(ctx);
  HostTensor shape = HostTensor::zeros(DType::kI64, {3});
  shape.as<int64_t>()[0] = 4;
  shape.as<int64_t>()[1] = 3;
  shape.as<int64_t>()[2] = 2;
  const TensorView in[] = {shape.view()};
  auto dims = ctx.value()->output_dims(in);
  ASSERT_TRUE(dims) << dims.status().to_string();
  EXPECT_EQ(dims.value()[0], (std::vector<int64_t>{4, 3, 2}));
  // A buffer of the input's largest dim in every axis ([4,4,4] = 64 values) fits; [3,3,3] does not.
  std::vector<float> small(27, NAN);
  TensorView out[] = {TensorView{DType::kF32, {3, 3, 3}, small.data()}};
  EXPECT_TRUE(ctx.value()->execute(in, out));  // 24 values fit in 27
  std::vector<float> tiny(8, NAN);
  TensorView out2[] = {TensorView{DType::kF32, {2, 2, 2}, tiny.data()}};
  Status s = ctx.value()->execute(in, out2);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("the result is [4,3,2]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ts::engine
