#pragma once
// Small ONNX graphs of the supported ops generated from fuzzer bytes, for onnx_fuzz and its
// ctest smoke run: an input x [batch, a, b] (batch dynamic, a and b 1..6), then up to 8 nodes,
// each taking the last value (and sometimes an earlier one), with attributes chosen to be valid
// from the tracked shapes — and, one node in eight, an attribute or constant picked at random
// (an axis past the rank, an index out of range), which the importer, the builder or the
// kernel must refuse with an error.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/import/onnx_model_builder.h"

namespace ts::fuzz {

struct GenValue {
  std::string name;
  std::vector<int64_t> dims;  // dim 0 is the batch (-1 once a node mixes it into others)
};

class GraphGen {
 public:
  explicit GraphGen(FuzzedDataProvider& in) : in_(in), m_(int64_t(in.ConsumeIntegralInRange<int>(13, 17))) {}

  // The model's bytes (output: the last value).
  std::vector<uint8_t> generate() {
    const int64_t a = in_.ConsumeIntegralInRange<int64_t>(1, 6), b = in_.ConsumeIntegralInRange<int64_t>(1, 6);
    m_.input("x", {"batch", a, b});
    vals_.push_back({"x", {-1, a, b}});
    const int nodes = in_.ConsumeIntegralInRange<int>(1, 8);
    for (int i = 0; i < nodes && in_.remaining_bytes() > 0; ++i) add_node();
    m_.output(vals_.back().name, {});
    return m_.bytes();
  }

 private:
  std::string fresh() { return "v" + std::to_string(next_++); }
  int64_t rank() const { return int64_t(vals_.back().dims.size()); }
  bool wild() { return in_.ConsumeIntegralInRange<int>(0, 7) == 0; }
  int64_t axis(int64_t r) { return wild() ? in_.ConsumeIntegralInRange<int64_t>(-9, 9) : in_.ConsumeIntegralInRange<int64_t>(0, r - 1); }
  std::string const_f32(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> xs(static_cast<size_t>(n));
    for (auto& x : xs) x = float(in_.ConsumeIntegralInRange<int>(-8, 8)) / 4.f;
    const std::string name = "c" + std::to_string(next_++);
    m_.init_f32(name, dims, xs);
    return name;
  }
  std::string const_i64(const std::vector<int64_t>& xs) {
    const std::string name = "c" + std::to_string(next_++);
    m_.init_i64(name, {int64_t(xs.size())}, xs);
    return name;
  }

  void add_node() {
    const GenValue x = vals_.back();
    const int64_t r = rank();
    const std::string y = fresh();
    std::vector<int64_t> dims = x.dims;
    switch (in_.ConsumeIntegralInRange<int>(0, 12)) {
      case 0: {
        static const char* kUnary[] = {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Erf"};
        m_.node(kUnary[in_.ConsumeIntegralInRange<int>(0, 6)], {x.name}, {y});
        break;
      }
      case 1: {
        static const char* kBinary[] = {"Add", "Mul", "Sub", "Div"};
        const std::string c = const_f32({dims.back() < 0 ? 1 : dims.back()});
        m_.node(kBinary[in_.ConsumeIntegralInRange<int>(0, 3)], {x.name, c}, {y});
        break;
      }
      case 2: {  // MatMul by a constant [last, k]
        if (dims.back() < 0) return;
        const int64_t k = in_.ConsumeIntegralInRange<int64_t>(1, 8);
        m_.node("MatMul", {x.name, const_f32({wild() ? k : dims.back(), k})}, {y});
        dims.back() = k;
        break;
      }
      case 3: {  // Transpose: a rotation of the axes
        std::vector<int64_t> perm;
        const int64_t s = in_.ConsumeIntegralInRange<int64_t>(0, r - 1);
        for (int64_t i = 0; i < r; ++i) perm.push_back((i + s) % r);
        if (wild()) perm.back() = perm.front();
        auto& n = m_.node("Transpose", {x.name}, {y});
        engine::testing::OnnxModelBuilder::attr_ints(n, "perm", perm);
        for (int64_t i = 0; i < r; ++i) dims[size_t(i)] = x.dims[size_t(perm[size_t(i)] % r)];
        break;
      }
      case 4: {  // Reshape to [-1] or [d0, -1]
        const bool flat = in_.ConsumeBool();
        m_.node("Reshape", {x.name, const_i64(flat ? std::vector<int64_t>{-1} : std::vector<int64_t>{0, -1})}, {y});
        dims = flat ? std::vector<int64_t>{-1} : std::vector<int64_t>{dims[0], -1};
        break;
      }
      case 5: {
        auto& n = m_.node("Softmax", {x.name}, {y});
        engine::testing::OnnxModelBuilder::attr_i(n, "axis", axis(r));
        break;
      }
      case 6: {  // ReduceMean over one axis, keepdims
        const int64_t ax = axis(r);
        auto& n = m_.node("ReduceMean", {x.name}, {y});
        engine::testing::OnnxModelBuilder::attr_ints(n, "axes", {ax});
        if (ax >= 0 && ax < r) dims[size_t(ax)] = 1;
        break;
      }
      case 7: {  // Concat with an earlier value of the same rank (or itself)
        const GenValue& z = vals_[in_.ConsumeIntegralInRange<size_t>(0, vals_.size() - 1)];
        const int64_t ax = axis(r);
        auto& n = m_.node("Concat", {x.name, z.dims.size() == x.dims.size() ? z.name : x.name}, {y});
        engine::testing::OnnxModelBuilder::attr_i(n, "axis", ax);
        if (ax >= 0 && ax < r) dims[size_t(ax)] = -1;
        break;
      }
      case 8: {  // Gather along an axis with constant indices
        const int64_t ax = axis(r);
        const int64_t size = ax >= 0 && ax < r ? dims[size_t(ax)] : 1;
        const int64_t idx = wild() ? in_.ConsumeIntegralInRange<int64_t>(-9, 9) : (size > 0 ? size - 1 : 0);
        auto& n = m_.node("Gather", {x.name, const_i64({idx, 0})}, {y});
        engine::testing::OnnxModelBuilder::attr_i(n, "axis", ax);
        if (ax >= 0 && ax < r) dims[size_t(ax)] = 2;
        break;
      }
      case 9: {  // Slice of the last axis
        const int64_t start = in_.ConsumeIntegralInRange<int64_t>(-3, 3), end = in_.ConsumeIntegralInRange<int64_t>(-3, 8);
        m_.node("Slice", {x.name, const_i64({start}), const_i64({end}), const_i64({wild() ? 7 : -1})}, {y});
        dims.back() = -1;
        break;
      }
      case 10: {  // Unsqueeze at the end (opset 13+: axes as an input)
        if (r >= 6) return;
        m_.node("Unsqueeze", {x.name, const_i64({wild() ? 9 : r})}, {y});
        dims.push_back(1);
        break;
      }
      case 11: {
        auto& n = m_.node("Flatten", {x.name}, {y});
        const int64_t ax = wild() ? 9 : in_.ConsumeIntegralInRange<int64_t>(0, r);
        engine::testing::OnnxModelBuilder::attr_i(n, "axis", ax);
        dims = {-1, -1};
        break;
      }
      case 12: {  // Shape → ConstantOfShape: a value whose dims come from data
        const std::string s = fresh();
        m_.node("Shape", {x.name}, {s});
        m_.node("ConstantOfShape", {s}, {y});
        break;
      }
    }
    vals_.push_back({y, dims});
  }

  FuzzedDataProvider& in_;
  engine::testing::OnnxModelBuilder m_;
  std::vector<GenValue> vals_;
  int next_ = 0;
};

}  // namespace ts::fuzz
