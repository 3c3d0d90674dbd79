// The fused Transformer encoder layer: the pass that makes TransformerEncoderLayer nodes
// (passes/fuse_encoder.cpp) on the exported fixtures of models/fixtures.py, and the CUDA kernel
// (cuda_encoder.cu) in FP16 plans against the CPU backend.
//
// The pass tests run everywhere (no device); the kernel tests are labelled `gpu` with the rest
// of the CUDA tests and skip with the reason where no CUDA device is present.
#include "cuda_test_util.h"
#include "engine/onnx_import.h"
#include "engine/passes/passes.h"

namespace ts::engine::testing {
namespace {

int count_op(const Graph& g, const std::string& op) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.op == op;
  return c;
}

// A fixture imported and through run_passes(), as the builder hands it on; empty when missing.
std::optional<Graph> passed(const std::string& name) {
  const fs::path p = model_fixtures() / name / "model.onnx";
  if (!fs::exists(p)) return std::nullopt;
  auto g = import_onnx_file(p.string());
  EXPECT_TRUE(g) << g.status().to_string();
  if (!g) return std::nullopt;
  PassLog log;
  Status s = run_passes(g.value(), log);
  EXPECT_TRUE(s) << s.to_string();
  return std::move(g).value();
}

#define FIXTURE_OR_SKIP(var, name)                                                                        \
  auto var = passed(name);                                                                                \
  if (!var) GTEST_SKIP() << name << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)"

const auto kRunsIt = [](const Node&) { return true; };

Node* first_op(Graph& g, const std::string& op) {
  for (Node& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

bool has_line(const PassLog& log, const std::string& part) {
  for (const auto& l : log.lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

// --- the pass (no device) ---------------------------------------------------------------------

class FuseEncoder : public ::testing::TestWithParam<const char*> {};

TEST_P(FuseEncoder, EachExportedLayerBecomesOneNodeWithTheInputProjectionAndHeadFolded) {
  FIXTURE_OR_SKIP(g, GetParam());
  const size_t before = g->nodes.size();
  PassLog log;
  EXPECT_EQ(fuse_encoder(*g, log, kRunsIt, 120), 2);
  EXPECT_EQ(count_op(*g, "TransformerEncoderLayer"), 2);
  EXPECT_EQ(count_op(*g, "FusedAttention"), 0);
  EXPECT_EQ(count_op(*g, "LayerNormalization"), 0);
  EXPECT_LT(g->nodes.size(), before - 100) << "the glue between the compute nodes goes with the layer";
  std::vector<const Node*> layers;
  for (const Node& n : g->nodes)
    if (n.op == "TransformerEncoderLayer") layers.push_back(&n);
  ASSERT_EQ(layers.size(), 2u);
  // Layer 0 reads the model input x through its folded input projection; layer 1 reads layer 0.
  ASSERT_EQ(layers[0]->inputs.size(), 15u);
  EXPECT_EQ(g->value(layers[0]->inputs[0]).name, "x");
  // Layer 1 ends the model: the head (last step → Linear → Sigmoid) is its inputs 15, 16 and
  // its output is the model's.
  ASSERT_EQ(layers[1]->inputs.size(), 17u);
  EXPECT_EQ(layers[1]->inputs[0], layers[0]->outputs[0]);
  EXPECT_EQ(layers[1]->inputs[13], kNoValue);
  EXPECT_EQ(layers[1]->attr_s("head_activation", ""), "sigmoid");
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(layers[1]->outputs[0], g->outputs[0]);
  EXPECT_EQ(count_op(*g, "FusedGemm"), 0);
  EXPECT_EQ(count_op(*g, "Gather"), 0);
  EXPECT_EQ(g->nodes.size(), 2u);
  const std::string act = std::string(GetParam()).find("gelu") != std::string::npos ? "gelu" : "relu";
  for (const Node* l : layers) {
    EXPECT_EQ(l->attr_i("heads", 0), 4);
    EXPECT_EQ(l->attr_s("activation", ""), act);
    EXPECT_NEAR(l->attr_f("scale", 0.f), 0.25f, 1e-6f);  // 1/√16
    EXPECT_EQ(l->attr_i("max_seq", 0), 120);
    EXPECT_GT(l->fused_from.size(), 20u);
  }
  EXPECT_TRUE(has_line(log, "TransformerEncoderLayer"));
}

TEST_P(FuseEncoder, KeepsTheLayersWhereTheBackendDoesNotRunTheFusedNode) {
  FIXTURE_OR_SKIP(g, GetParam());
  const size_t before = g->nodes.size();
  PassLog log;
  EXPECT_EQ(fuse_encoder(*g, log, [](const Node&) { return false; }, 512), 0);
  EXPECT_EQ(g->nodes.size(), before);
  EXPECT_EQ(count_op(*g, "FusedAttention"), 2);
  EXPECT_TRUE(has_line(log, "the backend does not run the fused layer")) << "the plan's log says why";
}

TEST_P(FuseEncoder, KeepsOnlyTheInputProjectionWhereTheBackendRefusesIt) {
  FIXTURE_OR_SKIP(g, GetParam());
  PassLog log;
  // A backend that runs the layer but not a folded input projection (input 13).
  auto no_pre = [](const Node& n) { return n.inputs.size() <= 13 || n.inputs[13] == kNoValue; };
  EXPECT_EQ(fuse_encoder(*g, log, no_pre, 120), 2);
  EXPECT_EQ(count_op(*g, "TransformerEncoderLayer"), 2);
  EXPECT_EQ(count_op(*g, "FusedGemm"), 1) << "the projection stays a FusedGemm";
  const Node* l0 = first_op(*g, "TransformerEncoderLayer");
  ASSERT_NE(l0, nullptr);
  ASSERT_EQ(l0->inputs.size(), 13u);
  const Node* proj = first_op(*g, "FusedGemm");
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(l0->inputs[0], proj->outputs[0]);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FuseEncoder, ::testing::Values("transformer_relu", "transformer_gelu"));

TEST(FuseEncoderReads, TheAttentionScaleOffTheGraph) {
  FIXTURE_OR_SKIP(g, "transformer_relu");
  Node* attn = first_op(*g, "FusedAttention");
  ASSERT_NE(attn, nullptr);
  attn->attrs["scale"] = 0.5f;  // still one FusedAttention per layer, but not softmax(q·kᵀ/√d)
  const size_t before = g->nodes.size();
  PassLog log;
  // The pass reads the scale off the node, so the region still matches its own definition:
  // both layers fuse and the fused layer carries the modified scale (the CPU-proved meaning).
  EXPECT_EQ(fuse_encoder(*g, log, kRunsIt, 120), 2);
  EXPECT_LT(g->nodes.size(), before);
  Node* l0 = first_op(*g, "TransformerEncoderLayer");
  ASSERT_NE(l0, nullptr);
  EXPECT_FLOAT_EQ(l0->attr_f("scale", 0.f), 0.5f);
}

TEST(FuseEncoderRefuses, GlueThatMovesTheWrongColumns) {
  FIXTURE_OR_SKIP(g, "transformer_relu");
  // Swap the first layer's q and k Slices' starts/ends: the nodes are all still there, but the
  // attention now computes softmax(k·qᵀ): the CPU proof fails and the layer is kept.
  std::vector<Node*> slices;
  for (Node& n : g->nodes)
    if (n.op == "Slice" && n.name.find("layers.0") != std::string::npos) slices.push_back(&n);
  ASSERT_GE(slices.size(), 2u);
  std::swap(slices[0]->inputs, slices[1]->inputs);
  const int attn_before = count_op(*g, "FusedAttention");
  PassLog log;
  EXPECT_EQ(fuse_encoder(*g, log, kRunsIt, 120), 1);
  EXPECT_EQ(count_op(*g, "FusedAttention"), attn_before - 1) << "layer 0 keeps its attention";
  EXPECT_TRUE(has_line(log, "does not compute the encoder layer"));
}

TEST(FuseEncoderRefuses, AnActivationTheKernelDoesNotHave) {
  FIXTURE_OR_SKIP(g, "transformer_relu");
  for (Node& n : g->nodes)
    if (n.op == "FusedGemm" && n.attr_s("activation", "none") == "relu") n.attrs["activation"] = std::string("tanh");
  PassLog log;
  EXPECT_EQ(fuse_encoder(*g, log, kRunsIt, 120), 0);
  EXPECT_EQ(count_op(*g, "FusedAttention"), 2);
}

TEST(FuseEncoderRefuses, AnIntermediateValueReadOutsideTheLayer) {
  FIXTURE_OR_SKIP(g, "transformer_relu");
  Node* attn = first_op(*g, "FusedAttention");
  ASSERT_NE(attn, nullptr);
  g->outputs.push_back(attn->outputs[0]);  // the attention output is now also a model output
  PassLog log;
  EXPECT_EQ(fuse_encoder(*g, log, kRunsIt, 120), 1);
  EXPECT_NE(first_op(*g, "FusedAttention"), nullptr);
}

// --- the kernel (gpu) -------------------------------------------------------------------------

// The fixture built for CPU (FP32, the reference) and CUDA FP16 with profile batch 1..1024, seq
// 30..120; the CUDA plan must hold the fused layers.
struct Pair {
  std::shared_ptr<Engine> cpu, gpu;
};
std::optional<Pair> build_pair(const std::string& name, int64_t max_seq = 120) {
  const fs::path p = model_fixtures() / name / "model.onnx";
  auto bytes = read_bytes(p);
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 30, 32}, {64, 60, 32}, {1024, max_seq, 32}};
  BuildOptions co = options("cpu");
  co.profiles = {prof};
  BuildOptions go = options("cuda", Precision::kFP16);
  go.profiles = {prof};
  auto cp = build(bytes, co);
  auto gp = build(bytes, go);
  EXPECT_TRUE(cp && gp) << (gp ? cp.status().to_string() : gp.status().to_string());
  if (!cp || !gp) return std::nullopt;
  auto plan = deserialize_plan(gp.value());
  EXPECT_TRUE(plan);
  if (!plan) return std::nullopt;
  EXPECT_EQ(count_op(plan.value().graph, "TransformerEncoderLayer"), max_seq <= 128 ? 2 : 0);
  auto ce = Engine::load(cp.value());
  auto ge = Engine::load(gp.value());
  EXPECT_TRUE(ce && ge);
  if (!ce || !ge) return std::nullopt;
  return Pair{ce.value(), ge.value()};
}

class CudaEncoder : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaEncoder, Fp16FusedLayersMatchCpuAtEveryBatchAndSeq) {
  SKIP_WITHOUT_GPU();
  if (!fs::exists(model_fixtures() / GetParam() / "model.onnx")) GTEST_SKIP() << GetParam() << " is missing";
  auto e = build_pair(GetParam());
  ASSERT_TRUE(e);
  uint32_t seed = 500;
  for (int64_t b : {1, 7, 64, 1024}) {
    for (int64_t t : {30, 60, 120}) {
      std::vector<HostTensor> in{random_tensor({b, t, 32}, seed++, 2.0f)};
      expect_gpu_matches_cpu(*e->cpu, *e->gpu, in, kFp16.rel, "batch " + std::to_string(b) + " seq " + std::to_string(t));
    }
  }
}

TEST_P(CudaEncoder, AProfileLongerThanTheKernelKeepsTheLayers) {
  SKIP_WITHOUT_GPU();
  if (!fs::exists(model_fixtures() / GetParam() / "model.onnx")) GTEST_SKIP() << GetParam() << " is missing";
  auto e = build_pair(GetParam(), 200);  // T up to 200 > 128: no fused layer, same answers
  ASSERT_TRUE(e);
  std::vector<HostTensor> in{random_tensor({3, 200, 32}, 77, 2.0f)};
  expect_gpu_matches_cpu(*e->cpu, *e->gpu, in, kFp16.rel, "batch 3 seq 200");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaEncoder, ::testing::Values("transformer_relu", "transformer_gelu"));

}  // namespace
}  // namespace ts::engine::testing
