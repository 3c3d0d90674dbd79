// ONNX backend node tests (generated offline by models/onnx_node_tests.py from Debian's
// python3-onnx) for every op the engine supports: build each single-op model for the CPU
// backend, run it on the case's inputs, compare with ONNX's expected outputs using the
// tolerance of ONNX's own runner (rtol 1e-4, atol 1e-5; integers exactly).
// Cases the engine cannot run yet are listed in kExpectedFailures with the reason; such a case
// that starts passing fails the test, so the list stays true.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fixture_util.h"

namespace ts::engine {
namespace {

using testing::node_tests_dir;

constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

// One test per op; must match SUPPORTED_OPS in models/onnx_node_tests.py (checked below).
const std::vector<std::string> kOps = {
    "GRU", "LSTM", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh",
    "Gelu", "Erf", "Softmax", "LayerNormalization", "ReduceMean", "Pow", "Sqrt", "Conv",
    "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Gather", "Concat",
    "Shape", "Constant", "ConstantOfShape", "Identity", "Cast", "Where", "Expand"};

// case name → why the engine does not pass it yet (the engine's own error, shortened).
// Empty: every selected case passes (186 with onnx 1.12). A case that truly cannot be
// supported goes here with the engine's error, which must name the node and op/attribute.
const std::map<std::string, std::string> kExpectedFailures = {
};

// Runs one case; returns "" on success, else what went wrong.
std::string run_case(const nlohmann::json& c) {
  const auto dir = node_tests_dir();
  BuildOptions opts;
  opts.backend = "cpu";
  opts.time_tactics = false;  // single-op models: timing would only slow the suite down
  auto plan = build_file((dir / c["name"].get<std::string>() / "model.onnx").string(), opts);
  if (!plan) return "build: " + plan.status().to_string();
  auto engine = Engine::load(plan.value());
  if (!engine) return "load: " + engine.status().to_string();
  auto ctx = engine.value()->create_context();
  if (!ctx) return "context: " + ctx.status().to_string();

  std::vector<HostTensor> inputs, wants, gots;
  for (auto& i : c["inputs"]) {
    auto t = npy_read((dir / i["file"].get<std::string>()).string());
    if (!t) return t.status().to_string();
    inputs.push_back(std::move(t.value()));
  }
  for (auto& o : c["outputs"]) {
    auto t = npy_read((dir / o["file"].get<std::string>()).string());
    if (!t) return t.status().to_string();
    gots.push_back(HostTensor::zeros(t.value().dtype, t.value().dims));
    wants.push_back(std::move(t.value()));
  }
  // Bind by name: the engine's binding order is its own.
  const auto& in_bind = engine.value()->inputs();
  const auto& out_bind = engine.value()->outputs();
  if (in_bind.size() != inputs.size() || out_bind.size() != wants.size()) {
    return "engine has " + std::to_string(in_bind.size()) + " inputs/" +
           std::to_string(out_bind.size()) + " outputs, the case " +
           std::to_string(inputs.size()) + "/" + std::to_string(wants.size());
  }
  std::vector<TensorView> in_views, out_views;
  std::vector<size_t> out_index;
  for (auto& b : in_bind) {
    size_t k = 0;
    while (k < inputs.size() && c["inputs"][k]["name"] != b.name) ++k;
    if (k == inputs.size()) return "engine input " + b.name + " not in the case";
    in_views.push_back(inputs[k].view());
  }
  for (auto& b : out_bind) {
    size_t k = 0;
    while (k < wants.size() && c["outputs"][k]["name"] != b.name) ++k;
    if (k == wants.size()) return "engine output " + b.name + " not in the case";
    out_views.push_back(gots[k].view());
    out_index.push_back(k);
  }
  const Status st = ctx.value()->execute(in_views, out_views);
  if (!st) return "execute: " + st.to_string();
  std::string problems;
  for (size_t j = 0; j < out_views.size(); ++j) {
    HostTensor& got = gots[out_index[j]];
    got.dims = out_views[j].dims;
    got.dtype = out_views[j].dtype;
    const auto cmp = testing::compare_tensors(got, wants[out_index[j]], kRtol, kAtol);
    if (!cmp.ok) problems += "output " + out_bind[j].name + ": " + cmp.message + "; ";
  }
  return problems;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& p) { return p.param; }

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, NodeTestsPass) {
  const auto manifest = testing::read_manifest(node_tests_dir());
  ASSERT_TRUE(manifest.contains("cases"))
      << "no " << (node_tests_dir() / "manifest.json")
      << ": the ctest fixture engine_node_tests runs models/onnx_node_tests.py";
  int total = 0, passed = 0, xfail = 0;
  for (auto& c : manifest["cases"]) {
    if (c["op"] != GetParam()) continue;
    const std::string name = c["name"];
    ++total;
    const std::string error = run_case(c);
    const auto xf = kExpectedFailures.find(name);
    if (xf != kExpectedFailures.end()) {
      ++xfail;
      EXPECT_FALSE(error.empty()) << name << " passes now: remove it from kExpectedFailures";
      if (!error.empty()) std::printf("  expected failure %s (%s): %s\n", name.c_str(),
                                      xf->second.c_str(), error.c_str());
    } else if (error.empty()) {
      ++passed;
    } else {
      ADD_FAILURE() << name << ": " << error;
    }
  }
  std::printf("conformance %-18s passed %d, expected-fail %d, failed %d, total %d\n",
              GetParam().c_str(), passed, xfail, total - passed - xfail, total);
  RecordProperty("passed", passed);
  RecordProperty("expected_fail", xfail);
  RecordProperty("total", total);
}

INSTANTIATE_TEST_SUITE_P(Ops, Conformance, ::testing::ValuesIn(kOps),
                         param_name);

// Every selected case belongs to an op tested above, and every expected failure names a real
// case, so nothing is dropped or excused silently.
TEST(ConformanceManifest, CoversEveryCaseAndExpectedFailure) {
  const auto manifest = testing::read_manifest(node_tests_dir());
  ASSERT_TRUE(manifest.contains("cases"));
  const std::set<std::string> ops(kOps.begin(), kOps.end());
  EXPECT_EQ(manifest["supported_ops"].get<std::set<std::string>>(), ops);
  std::set<std::string> names;
  std::map<std::string, int> per_op;
  for (auto& c : manifest["cases"]) {
    names.insert(c["name"].get<std::string>());
    EXPECT_TRUE(ops.count(c["op"].get<std::string>())) << c["name"] << " op " << c["op"];
    ++per_op[c["op"].get<std::string>()];
  }
  EXPECT_GE(names.size(), 150u) << "far fewer node tests than the 186 selected by onnx 1.12";
  for (auto& [name, reason] : kExpectedFailures) {
    EXPECT_TRUE(names.count(name)) << "expected failure " << name << " is not a selected case";
  }
  for (const char* op : {"GRU", "LSTM", "Gemm", "MatMul", "Softmax", "LayerNormalization", "Conv"}) {
    EXPECT_GT(per_op[op], 0) << "no node tests selected for " << op;
  }
  std::printf("conformance: %zu cases, %zu expected failures\n", names.size(),
              kExpectedFailures.size());
}

}  // namespace
}  // namespace ts::engine
