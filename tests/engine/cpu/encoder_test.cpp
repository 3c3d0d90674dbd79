// TransformerEncoderLayer on the CPU backend (cpu_encoder.cpp) against the same exported model
// run unfused (PyTorch's GEMMs, attention, LayerNorms and Shape/Reshape/Transpose glue node by
// node): the fixtures of models/fixtures.py (post-norm ReLU and GELU, pre-norm causal with the
// input projection and the head folded), both tactics, batches that span several row chunks and
// sequence lengths other than the export's, and without the head (the last layer computes the last
// row only). FP32 within 1e-5. Also: a bad X is refused naming
// the width the layer needs.
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "engine/onnx_import.h"
#include "engine/passes/passes.h"
#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

namespace fs = std::filesystem;

fs::path fixtures() {
  if (const char* d = std::getenv("TS_ENGINE_FIXTURES")) return d;
  return fs::path(TICKSENTRY_BINARY_DIR) / "engine-fixtures";
}

// The fixture imported and through run_passes(), as the builder gets it; nothing when missing.
std::optional<Graph> passed(const std::string& name) {
  const fs::path p = fixtures() / name / "model.onnx";
  if (!fs::exists(p)) return std::nullopt;
  auto g = import_onnx_file(p.string());
  EXPECT_TRUE(g) << g.status().to_string();
  if (!g) return std::nullopt;
  PassLog log;
  EXPECT_TRUE(run_passes(g.value(), log));
  return std::move(g).value();
}

int count_op(const Graph& g, const std::string& op) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.op == op;
  return c;
}

// x [b, t, F] of the graph's one input.
std::vector<HostTensor> input_for(const Graph& g, int64_t b, int64_t t, uint32_t seed) {
  const Value& x = g.value(g.inputs[0]);
  return {random_tensor({b, t, x.shape[2].value}, seed, 1.5f)};
}

// The fused graph with each tactic against the unfused one at [b, t, F].
void expect_fused_matches(const Graph& g, const Graph& fused, int64_t b, int64_t t, uint32_t seed) {
  SCOPED_TRACE("batch " + std::to_string(b) + " seq " + std::to_string(t));
  auto in = input_for(g, b, t, seed);
  auto want = run_graph(g, in);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (const char* tactic : {"avx2", "onednn"}) {
    auto got = run_graph(fused, in, tactic);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got.value()[0].dims, want.value()[0].dims) << tactic;
    expect_close(got.value()[0].f(), want.value()[0].f(), want.value()[0].numel(), 1e-5f, 1e-6f, tactic);
  }
}

class CpuEncoder : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuEncoder, FusedLayersMatchTheUnfusedGraphWithEitherTactic) {
  auto g = passed(GetParam());
  if (!g) GTEST_SKIP() << GetParam() << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)";
  Graph fused = *g;
  PassLog log;
  const Backend& be = cpu_backend();
  const int layers = fuse_encoder(
      fused, log, [&](const Node& n) { return be.check_supported(fused, n).is_ok(); }, 120);
  ASSERT_GE(layers, 1) << "the cpu backend runs the fused layer";
  EXPECT_EQ(count_op(fused, "TransformerEncoderLayer"), layers);
  EXPECT_EQ(count_op(fused, "Shape"), 0) << "no Shape chain left to run per call";
  for (auto [b, t] : {std::pair<int64_t, int64_t>{1, 30}, {3, 7}, {40, 30}, {2, 1}})
    expect_fused_matches(*g, fused, b, t, uint32_t(b * 100 + t));
}

// The model without its head (its output the last step's features): the last layer computes its
// last row only (rows_needed), the Gather after it picks that row.
TEST_P(CpuEncoder, WithoutAHeadTheLastLayerComputesOnlyTheRowTheGatherReads) {
  auto g = passed(GetParam());
  if (!g) GTEST_SKIP() << GetParam() << " is missing";
  ValueId last = kNoValue;
  for (const Node& n : g->nodes)
    if (n.op == "Gather" && (n.attr_i("axis", 0) == 1) && g->value(n.inputs[1]).is_constant) last = n.outputs[0];
  ASSERT_NE(last, kNoValue) << "the fixture's head reads the last step through a Gather";
  g->outputs = {last};
  PassLog log;
  ASSERT_TRUE(remove_dead(*g, log));
  Graph fused = *g;
  const Backend& be = cpu_backend();
  ASSERT_GE(fuse_encoder(
                fused, log, [&](const Node& n) { return be.check_supported(fused, n).is_ok(); }, 120),
            1);
  std::vector<int64_t> rows;
  for (const Node& n : fused.nodes)
    if (n.op == "TransformerEncoderLayer") rows.push_back(n.attr_i("rows_needed", 0));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.back(), 1) << "the last layer";
  for (size_t i = 0; i + 1 < rows.size(); ++i) EXPECT_EQ(rows[i], 0) << "layer " << i << " feeds the next one whole";
  for (auto [b, t] : {std::pair<int64_t, int64_t>{1, 30}, {40, 9}}) expect_fused_matches(*g, fused, b, t, uint32_t(b + t));
}

TEST_P(CpuEncoder, AnInputOfTheWrongWidthIsRefusedWithTheWidth) {
  auto g = passed(GetParam());
  if (!g) GTEST_SKIP() << GetParam() << " is missing";
  PassLog log;
  const Backend& be = cpu_backend();
  ASSERT_GE(fuse_encoder(
                *g, log, [&](const Node& n) { return be.check_supported(*g, n).is_ok(); }, 120),
            1);
  const int64_t f = g->value(g->inputs[0]).shape[2].value;
  std::vector<HostTensor> in{random_tensor({2, 5, f + 3}, 1)};
  auto got = run_graph(*g, in);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find(std::to_string(f)), std::string::npos) << got.status().message();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CpuEncoder,
                         ::testing::Values("transformer_relu", "transformer_gelu", "transformer_prenorm_causal"));

}  // namespace
}  // namespace ts::engine::testing
