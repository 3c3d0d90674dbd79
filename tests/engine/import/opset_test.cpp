// Models of opsets 7–21: ops that changed between versions are run in their old and new forms
// on the cpu backend and compared with values computed here from the op's definition.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"
#include "engine/npy.h"
#include "onnx_model_builder.h"

namespace ts::engine {
namespace {

using testing::OnnxModelBuilder;

// Builds and runs a one-input model on x [2, 3, 4] (0.1 · i); returns output 0 or fails.
std::vector<float> run(const OnnxModelBuilder& b, std::vector<int64_t>* dims = nullptr) {
  BuildOptions opts;
  opts.time_tactics = false;
  auto plan = build(b.bytes(), opts);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  if (!plan) return {};
  auto engine = Engine::load(plan.value());
  EXPECT_TRUE(engine.is_ok()) << engine.status().message();
  auto ctx = engine.value()->create_context();
  HostTensor x = HostTensor::zeros(DType::kF32, {2, 3, 4});
  for (int i = 0; i < 24; ++i) x.as<float>()[i] = 0.1f * float(i) - 1.0f;
  HostTensor y = HostTensor::zeros(DType::kF32, {24});
  std::vector<TensorView> in = {x.view()}, out = {y.view()};
  Status st = ctx.value()->execute(in, out);
  EXPECT_TRUE(st.is_ok()) << st.message();
  if (dims) *dims = out[0].dims;
  y.data.resize(out[0].bytes());
  return std::vector<float>(y.as<float>(), y.as<float>() + out[0].bytes() / 4);
}

float xv(int i) { return 0.1f * float(i) - 1.0f; }

// Softmax before opset 13 normalizes jointly over every axis from `axis` (default 1).
TEST(Opsets, SoftmaxBeforeThirteenCoercesToTwoD) {
  for (int64_t opset : {7, 11, 13}) {
    OnnxModelBuilder b(opset);
    b.input("x", {2, 3, 4});
    b.output("y", {2, 3, 4});
    b.node("Softmax", {"x"}, {"y"}, "sm");
    auto y = run(b);
    ASSERT_EQ(y.size(), 24u) << opset;
    for (int r = 0; r < 2; ++r) {
      // < 13: over the 12 elements of row r; 13: over the last axis of 4 (default -1).
      const int group = opset < 13 ? 12 : 4;
      for (int g0 = r * 12; g0 < r * 12 + 12; g0 += group) {
        double sum = 0;
        for (int k = 0; k < group; ++k) sum += std::exp(double(xv(g0 + k)));
        for (int k = 0; k < group; ++k) {
          EXPECT_NEAR(y[size_t(g0 + k)], std::exp(double(xv(g0 + k))) / sum, 1e-6) << "opset " << opset;
        }
      }
    }
  }
}

// Slice-1 (opsets 7–9) takes starts/ends/axes as attributes.
TEST(Opsets, SliceAttributesBeforeTen) {
  OnnxModelBuilder b(9);
  b.input("x", {2, 3, 4});
  b.output("y", {2, 2, 4});
  auto& n = b.node("Slice", {"x"}, {"y"}, "sl");
  OnnxModelBuilder::attr_ints(n, "starts", {1});
  OnnxModelBuilder::attr_ints(n, "ends", {3});
  OnnxModelBuilder::attr_ints(n, "axes", {1});
  std::vector<int64_t> dims;
  auto y = run(b, &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 2, 4}));
  ASSERT_EQ(y.size(), 16u);
  EXPECT_FLOAT_EQ(y[0], xv(4));
  EXPECT_FLOAT_EQ(y[8], xv(16));
}

// Opset 18+ moved ReduceMean's axes to an input; opset 21 keeps Squeeze's axes input.
TEST(Opsets, ReduceMeanAxesInputAtEighteenAndSqueezeAtTwentyOne) {
  OnnxModelBuilder b(21);
  b.input("x", {2, 3, 4});
  b.output("y", {2, 3});
  b.constant_i64("axes", {1}, {2});
  OnnxModelBuilder::attr_i(b.node("ReduceMean", {"x", "axes"}, {"m"}, "mean"), "keepdims", 1);
  b.node("Squeeze", {"m", "axes"}, {"y"}, "sq");
  std::vector<int64_t> dims;
  auto y = run(b, &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(y.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(y[size_t(i)], (xv(4 * i) + xv(4 * i + 1) + xv(4 * i + 2) + xv(4 * i + 3)) / 4, 1e-6);
  }
}

// Max of three inputs (variadic at every opset).
TEST(Opsets, MaxOfThreeInputs) {
  OnnxModelBuilder b(8);
  b.input("x", {2, 3, 4});
  b.output("y", {2, 3, 4});
  b.init_f32("a", {}, {0.5f});
  b.init_f32("c", {1}, {-0.5f});
  b.node("Max", {"x", "a", "c"}, {"y"}, "mx");
  auto y = run(b);
  ASSERT_EQ(y.size(), 24u);
  for (int i = 0; i < 24; ++i) EXPECT_FLOAT_EQ(y[size_t(i)], std::max(xv(i), 0.5f));
}

// An op used before the opset that introduced it is refused, naming the node.
TEST(Opsets, OpBeforeItsFirstVersionIsRefused) {
  OnnxModelBuilder b(19);
  b.input("x", {2, 3, 4});
  b.output("y", {2, 3, 4});
  b.node("Gelu", {"x"}, {"y"}, "gelu");
  BuildOptions opts;
  auto plan = build(b.bytes(), opts);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("node 'gelu' (Gelu): Gelu exists from opset 20, this model imports opset 19"),
            std::string::npos)
      << plan.status().message();
}

}  // namespace
}  // namespace ts::engine
