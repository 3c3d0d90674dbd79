#pragma once
// Helpers for the serving tests: small real engines built from ONNX models made in the test,
// and an engine decorator that fails on command (failure injection).
#include <atomic>
#include <cmath>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/import/onnx_model_builder.h"

namespace ts::serve::testing {

// prob[b, 0] = sigmoid(x[b, T-1, 0] + bias): each version of the test model adds its own bias,
// so a result tells which version produced it. Input x [batch, seq, features].
inline std::vector<uint8_t> last_value_model(float bias, int features = 20) {
  engine::testing::OnnxModelBuilder m;
  m.input("x", {"batch", "seq", int64_t(features)});
  m.output("prob", {"batch", 1});
  m.init_i64("starts", {1}, {-1});
  m.init_i64("ends", {1}, {int64_t(1) << 62});
  m.init_i64("axes", {1}, {1});
  m.init_i64("col", {1}, {0});
  m.init_f32("bias", {}, {bias});
  m.init_i64("flat", {2}, {-1, 1});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"last"});
  auto& g = m.node("Gather", {"last", "col"}, {"v"});
  engine::testing::OnnxModelBuilder::attr_i(g, "axis", 2);
  m.node("Add", {"v", "bias"}, {"logit"});
  m.node("Sigmoid", {"logit"}, {"p3"});
  m.node("Reshape", {"p3", "flat"}, {"prob"});
  return m.bytes();
}

// `per_row` values per row: out[b, k] = x[b, T-1, k] for k < per_row, declared [batch, per_row]
// (a model that is not a classifier of one probability per row; per_row <= features).
inline std::vector<uint8_t> many_outputs_model(int per_row, int features = 20) {
  engine::testing::OnnxModelBuilder m;
  m.input("x", {"batch", "seq", int64_t(features)});
  m.output("scores", {"batch", int64_t(per_row)});
  m.init_i64("starts", {2}, {-1, 0});
  m.init_i64("ends", {2}, {int64_t(1) << 62, per_row});
  m.init_i64("axes", {2}, {1, 2});
  m.init_i64("flat", {2}, {-1, per_row});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"last"});
  m.node("Reshape", {"last", "flat"}, {"scores"});
  return m.bytes();
}

// A two-class head as a softmax gives it: prob[b] = [1 - p, p] with p = sigmoid(x[b, T-1, 0] +
// bias), the probability in column 1 of 2. `logits_in_1`: column 1 holds the logit x + bias
// instead (not a probability), column 0 still 1 - p.
inline std::vector<uint8_t> two_class_model(float bias, bool logits_in_1 = false) {
  engine::testing::OnnxModelBuilder m;
  m.input("x", {"batch", "seq", int64_t(20)});
  m.output("prob", {"batch", 2});
  m.init_i64("starts", {1}, {-1});
  m.init_i64("ends", {1}, {int64_t(1) << 62});
  m.init_i64("axes", {1}, {1});
  m.init_i64("col", {1}, {0});
  m.init_f32("bias", {}, {bias});
  m.init_f32("one", {}, {1.f});
  m.init_i64("flat", {2}, {-1, 1});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"last"});
  auto& g = m.node("Gather", {"last", "col"}, {"v"});
  engine::testing::OnnxModelBuilder::attr_i(g, "axis", 2);
  m.node("Add", {"v", "bias"}, {"logit3"});
  m.node("Sigmoid", {"logit3"}, {"p3"});
  m.node("Reshape", {"p3", "flat"}, {"p"});
  m.node("Reshape", {"logit3", "flat"}, {"logit"});
  m.node("Sub", {"one", "p"}, {"q"});
  auto& c = m.node("Concat", {"q", logits_in_1 ? "logit" : "p"}, {"prob"});
  engine::testing::OnnxModelBuilder::attr_i(c, "axis", 1);
  return m.bytes();
}

// out[b, k] = sigmoid(x[b, T-1, k]) for k < per_row, declared [batch, per_row]: probabilities
// in every column (column 0 reads feature 0, as last_value_model(0) does).
inline std::vector<uint8_t> wide_probability_model(int per_row) {
  engine::testing::OnnxModelBuilder m;
  m.input("x", {"batch", "seq", int64_t(20)});
  m.output("probs", {"batch", int64_t(per_row)});
  m.init_i64("starts", {2}, {-1, 0});
  m.init_i64("ends", {2}, {int64_t(1) << 62, per_row});
  m.init_i64("axes", {2}, {1, 2});
  m.init_i64("flat", {2}, {-1, per_row});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"last"});
  m.node("Sigmoid", {"last"}, {"s"});
  m.node("Reshape", {"s", "flat"}, {"probs"});
  return m.bytes();
}

// out[b, 0] = x[b, T-1, 0] * scale, with no sigmoid: a model that outputs logits (scale 0 makes
// it output zeros, a valid probability; divisor 0 makes it output ±inf and NaN).
inline std::vector<uint8_t> logit_model(float scale, float divisor = 1.f) {
  engine::testing::OnnxModelBuilder m;
  m.input("x", {"batch", "seq", int64_t(20)});
  m.output("prob", {"batch", 1});
  m.init_i64("starts", {2}, {-1, 0});
  m.init_i64("ends", {2}, {int64_t(1) << 62, 1});
  m.init_i64("axes", {2}, {1, 2});
  m.init_f32("scale", {}, {scale});
  m.init_f32("divisor", {}, {divisor});
  m.init_i64("flat", {2}, {-1, 1});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"last"});
  m.node("Mul", {"last", "scale"}, {"scaled"});
  m.node("Div", {"scaled", "divisor"}, {"logit"});
  m.node("Reshape", {"logit", "flat"}, {"prob"});
  return m.bytes();
}

inline float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

inline std::shared_ptr<engine::Engine> cpu_engine(const std::vector<uint8_t>& onnx) {
  engine::BuildOptions o;
  o.backend = "cpu";
  o.time_tactics = false;
  auto plan = engine::build(onnx, o);
  if (!plan) throw std::runtime_error(plan.status().to_string());
  auto e = engine::Engine::load(plan.value());
  if (!e) throw std::runtime_error(e.status().to_string());
  return e.value();
}

// Wraps a real engine; while `fail` is set every run fails with a device-like error.
class FaultyEngine : public engine::Engine {
 public:
  explicit FaultyEngine(std::shared_ptr<engine::Engine> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> fail{false};

  const std::vector<engine::BindingInfo>& inputs() const override { return inner_->inputs(); }
  const std::vector<engine::BindingInfo>& outputs() const override { return inner_->outputs(); }
  const std::vector<engine::OptimizationProfile>& profiles() const override { return inner_->profiles(); }
  std::string backend() const override { return "faulty-" + inner_->backend(); }
  int64_t device_memory_bytes() const override { return inner_->device_memory_bytes(); }
  std::string describe() const override { return inner_->describe(); }
  Result<std::unique_ptr<engine::ExecutionContext>> create_context() const override {
    auto c = inner_->create_context();
    if (!c) return c.status();
    return std::unique_ptr<engine::ExecutionContext>(new Context(std::move(c).value(), fail));
  }

 private:
  class Context : public engine::ExecutionContext {
   public:
    Context(std::unique_ptr<engine::ExecutionContext> inner, const std::atomic<bool>& fail)
        : inner_(std::move(inner)), fail_(fail) {}
    Status enqueue(std::span<const engine::TensorView> in, std::span<engine::TensorView> out,
                   std::function<void(Status)> done) override {
      if (fail_.load()) return Status(StatusCode::kInternal, "injected failure: cudaErrorLaunchFailure (test)");
      return inner_->enqueue(in, out, std::move(done));
    }
    Status enqueue_on_stream(std::span<const engine::TensorView> in, std::span<engine::TensorView> out,
                             engine::DeviceStream stream) override {
      if (fail_.load()) return Status(StatusCode::kInternal, "injected failure: cudaErrorLaunchFailure (test)");
      return inner_->enqueue_on_stream(in, out, stream);
    }

   private:
    std::unique_ptr<engine::ExecutionContext> inner_;
    const std::atomic<bool>& fail_;
  };
  std::shared_ptr<engine::Engine> inner_;
};

}  // namespace ts::serve::testing
