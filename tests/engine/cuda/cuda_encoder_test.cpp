// The fused Transformer encoder layer: the pass that makes TransformerEncoderLayer nodes
// (passes/fuse_encoder.cpp) on the exported fixtures of models/fixtures.py, and the CUDA kernel
// (cuda_encoder.cu) in FP16 plans and the strict-FP32 one (cuda_encoder_f32.cu) in FP32 plans
// against the CPU backend.
//
// The pass tests run everywhere (no device); the kernel tests are labelled `gpu` with the rest
// of the CUDA tests and skip with the reason where no CUDA device is present.
#include "cuda_test_util.h"
#include "engine/backends/cuda/cuda_encoder.h"
#include "engine/backends/cuda/cuda_encoder_f32.h"
#include "engine/onnx_import.h"
#include "engine/passes/passes.h"

namespace ts::engine::testing {
namespace {

int count_op(const Graph& g, const std::string& op) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.op == op;
  return c;
}

// An ONNX file imported and through run_passes(), as the builder hands it on; empty when missing.
std::optional<Graph> passed_file(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  auto g = import_onnx_file(p.string());
  EXPECT_TRUE(g) << g.status().to_string();
  if (!g) return std::nullopt;
  PassLog log;
  Status s = run_passes(g.value(), log);
  EXPECT_TRUE(s) << s.to_string();
  return std::move(g).value();
}
std::optional<Graph> passed(const std::string& name) { return passed_file(model_fixtures() / name / "model.onnx"); }

#define FIXTURE_OR_SKIP(var, name)                                                                        \
  auto var = passed(name);                                                                                \
  if (!var) GTEST_SKIP() << name << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)"

const auto kRunsIt = [](const Node&) { return true; };

Node* first_op(Graph& g, const std::string& op) {
  for (Node& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}
const Node* first_op(const Graph& g, const std::string& op) { return first_op(const_cast<Graph&>(g), op); }

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

// The pre-norm causal fixture as torch 1.13 exports it (opset 14: LayerNorm written out, the
// attention unfused because of the mask, the mask a buffer sliced by Shape → Gather → Slice once
// for both layers): two nodes, projection and head folded in, the mask's nodes gone with them.
TEST(FuseEncoderFixture, PreNormCausalLayersBecomeOneNodeEach) {
  FIXTURE_OR_SKIP(g, "transformer_prenorm_causal");
  EXPECT_EQ(count_op(*g, "FusedAttention"), 0) << "the mask keeps fuse_attention from matching";
  PassLog log;
  EXPECT_EQ(fuse_encoder(*g, log, kRunsIt, 120), 2);
  EXPECT_EQ(g->nodes.size(), 2u) << "projection, head and the mask's Shape/Gather/Slice nodes folded away";
  for (const Node& n : g->nodes) {
    ASSERT_EQ(n.op, "TransformerEncoderLayer");
    EXPECT_EQ(n.attr_i("norm_first", 0), 1);
    EXPECT_EQ(n.attr_i("causal", 0), 1);
    EXPECT_EQ(n.attr_i("heads", 0), 4);
    EXPECT_EQ(n.attr_s("activation", ""), "gelu");
    EXPECT_NEAR(n.attr_f("scale", 0.f), 0.25f, 1e-6f);
  }
  EXPECT_EQ(g->nodes[0].inputs.size(), 15u) << "layer 0 has the input projection";
  EXPECT_EQ(g->nodes[1].inputs.size(), 17u) << "layer 1 has the head";
}

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

// --- shapes beyond the fixtures: one post-norm layer written in ONNX ops, as PyTorch exports it ---

// x [batch, seq, k] → [MatMul Wpre + b] → in_proj → q, k, v Slices → heads (Reshape, Transpose)
// → MatMul, Mul(scale), Softmax, MatMul → merge → out_proj → Add, LayerNormalization → FF
// (MatMul, Add, Relu, MatMul, Add) → Add, LayerNormalization [→ Gather(axis 1, -1) → MatMul, Add,
// Sigmoid]. k == d and !pre: no input projection. norm_first: PyTorch's pre-norm layer (LN₁ before
// in_proj, LN₂ before FF, no LayerNorm after the FF residual). causal: the scores get PyTorch's
// causal buffer (triu(-inf, 1) of kMaskBuf rows, a constant) sliced to the input's length by
// Shape → Gather → Slice (as the sweep's models export it; mask_diag shifts its diagonal: 1 is
// causal, 2 lets each query see one key ahead, which the pass must refuse).
struct LayerSpec {
  int64_t d, heads, ff, k;
  bool pre, head;
  bool norm_first = false, causal = false;
  int mask_diag = 1;
  float mask_fill = -INFINITY;  // what the mask holds above its diagonal
};
constexpr int64_t kMaskBuf = 160;
std::string spec_name(const LayerSpec& s) {
  return "d" + std::to_string(s.d) + "_h" + std::to_string(s.heads) + "_ff" + std::to_string(s.ff) + "_k" +
         std::to_string(s.k) + (s.pre ? "_pre" : "") + (s.head ? "_head" : "") + (s.norm_first ? "_normfirst" : "") +
         (s.causal ? "_causal" : "");
}

Graph encoder_graph(const LayerSpec& s, uint32_t seed) {
  GraphBuilder b;
  const int64_t d = s.d, hd = d / s.heads;
  auto mat = [&](const std::string& n, int64_t k, int64_t m) {
    return b.constant(n, {k, m}, random_vec(size_t(k * m), seed++, 1.0f / std::sqrt(float(k))));
  };
  auto vec = [&](const std::string& n, int64_t m, float base, float sc) {
    std::vector<float> v = random_vec(size_t(m), seed++, sc);
    for (float& e : v) e += base;
    return b.constant(n, {m}, v);
  };
  auto linear = [&](ValueId x, const std::string& n, int64_t k, int64_t m) {
    ValueId mm = b.value(n + "_mm"), y = b.value(n);
    b.node("MatMul", {x, mat(n + ".w", k, m)}, {mm});
    b.node("Add", {mm, vec(n + ".b", m, 0.f, 0.2f)}, {y});
    return y;
  };
  auto layer_norm = [&](ValueId x, const std::string& n) {
    ValueId y = b.value(n);
    Node& ln = b.node("LayerNormalization", {x, vec(n + ".s", d, 1.f, 0.2f), vec(n + ".c", d, 0.f, 0.2f)}, {y});
    ln.attrs["axis"] = int64_t(-1);
    ln.attrs["epsilon"] = 1e-5f;
    return y;
  };
  auto transpose = [&](ValueId x, const std::string& n, std::vector<int64_t> perm) {
    ValueId y = b.value(n);
    b.node("Transpose", {x}, {y}).attrs["perm"] = perm;
    return y;
  };
  auto reshape = [&](ValueId x, const std::string& n, std::vector<int64_t> shape) {
    ValueId y = b.value(n);
    b.node("Reshape", {x, b.constant_i64(n + ".shape", shape)}, {y});
    return y;
  };
  ValueId x = b.input("x", sym({"batch", "seq", ""}, {0, 0, s.k}));
  ValueId h = s.pre ? linear(x, "proj", s.k, d) : x;
  ValueId qkv = linear(s.norm_first ? layer_norm(h, "norm1") : h, "in_proj", d, 3 * d);
  auto slice = [&](const std::string& n, int64_t from) {
    ValueId y = b.value(n);
    b.node("Slice", {qkv, b.constant_i64(n + ".st", {from}), b.constant_i64(n + ".en", {from + d}), b.constant_i64(n + ".ax", {2})}, {y});
    return reshape(y, n + "4", {0, 0, s.heads, hd});
  };
  ValueId q = transpose(slice("q", 0), "qt", {0, 2, 1, 3});
  ValueId kt = transpose(slice("k", d), "kt", {0, 2, 3, 1});
  ValueId v = transpose(slice("v", 2 * d), "vt", {0, 2, 1, 3});
  ValueId sc = b.value("scores"), scs = b.value("scaled"), pr = b.value("probs"), o = b.value("attn");
  b.node("MatMul", {q, kt}, {sc});
  b.node("Mul", {sc, b.constant("scale", {}, {1.0f / std::sqrt(float(hd))})}, {scs});
  if (s.causal) {
    std::vector<float> buf(size_t(kMaskBuf * kMaskBuf), 0.f);
    for (int64_t i = 0; i < kMaskBuf; ++i)
      for (int64_t j = i + s.mask_diag; j < kMaskBuf; ++j) buf[size_t(i * kMaskBuf + j)] = s.mask_fill;
    ValueId shp = b.value("x_shape", DType::kI64), t = b.value("x_seq", DType::kI64), rows = b.value("mask_rows"),
            mask = b.value("mask"), masked = b.value("masked");
    b.node("Shape", {x}, {shp});
    b.node("Gather", {shp, b.constant_i64("seq_axis", {1})}, {t}).attrs["axis"] = int64_t(0);
    b.node("Slice", {b.constant("mask_buf", {kMaskBuf, kMaskBuf}, buf), b.constant_i64("m0", {0}), t, b.constant_i64("ma0", {0})},
           {rows});
    b.node("Slice", {rows, b.constant_i64("m1", {0}), t, b.constant_i64("ma1", {1})}, {mask});
    b.node("Add", {scs, mask}, {masked});
    scs = masked;
  }
  b.node("Softmax", {scs}, {pr}).attrs["axis"] = int64_t(-1);
  b.node("MatMul", {pr, v}, {o});
  ValueId merged = reshape(transpose(o, "ot", {0, 2, 1, 3}), "merged", {0, 0, d});
  ValueId a = linear(merged, "out_proj", d, d);
  ValueId r1 = b.value("res1");
  b.node("Add", {h, a}, {r1});
  ValueId l1 = s.norm_first ? r1 : layer_norm(r1, "norm1");  // the FF residual's other side
  ValueId f1 = b.value("ff1_act");
  b.node("Relu", {linear(s.norm_first ? layer_norm(r1, "norm2") : l1, "ff1", d, s.ff)}, {f1});
  ValueId f2 = linear(f1, "ff2", s.ff, d);
  ValueId r2 = b.value("res2");
  b.node("Add", {l1, f2}, {r2});
  ValueId y = s.norm_first ? r2 : layer_norm(r2, "norm2");
  if (s.head) {
    ValueId gi = last_step_index(b), gy = b.value("last_step"), prob = b.value("prob");
    b.node("Gather", {y, gi}, {gy}).attrs["axis"] = int64_t(1);
    b.node("Sigmoid", {linear(gy, "head", d, 1)}, {prob});
    y = prob;
  }
  b.output(y);
  return std::move(b.g);
}

// The spec's graph after run_passes(), as the builder hands it on.
Graph passed_spec(const LayerSpec& s) {
  Graph g = encoder_graph(s, 900);
  PassLog log;
  Status st = run_passes(g, log);
  EXPECT_TRUE(st) << st.to_string();
  return g;
}

// Shapes of the CUDA kernel: d_model 32 (the shipped default model's: 4 heads of 8, input K 20),
// 64 and 128, head dims 8, 16, 32 and 64, FF up to 256, with and without the projection and head.
// Pre-norm and causal layers (the sweep's 10, 18 and 26 are of these kinds) with each of the
// three d_model.
const LayerSpec kSpecs[] = {
    {32, 4, 64, 20, true, true},   {32, 1, 128, 32, false, false}, {64, 8, 128, 32, true, true},
    {64, 2, 256, 64, false, false}, {128, 4, 256, 48, true, true},  {128, 2, 128, 128, false, true},
    {64, 4, 128, 64, false, false, true, false},  {128, 8, 256, 48, true, true, true, false},
    {64, 2, 128, 32, true, false, false, true},   {128, 2, 256, 44, true, true, false, true},
    {32, 4, 64, 20, true, true, true, true},      {128, 2, 256, 54, true, false, true, true},
};

class FuseEncoderShapes : public ::testing::TestWithParam<LayerSpec> {};

TEST_P(FuseEncoderShapes, FindsTheLayerAndItsHeadCount) {
  const LayerSpec s = GetParam();
  Graph g = passed_spec(s);
  PassLog log;
  ASSERT_EQ(fuse_encoder(g, log, kRunsIt, 120), 1) << spec_name(s);
  const Node* l = first_op(g, "TransformerEncoderLayer");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->attr_i("heads", 0), s.heads);
  EXPECT_NEAR(l->attr_f("scale", 0.f), 1.0 / std::sqrt(double(s.d / s.heads)), 1e-6);
  EXPECT_EQ(l->inputs.size(), s.head ? 17u : s.pre ? 15u : 13u) << "projection and head folded in";
  EXPECT_EQ(l->attr_i("norm_first", -1), s.norm_first ? 1 : 0);
  EXPECT_EQ(l->attr_i("causal", -1), s.causal ? 1 : 0);
  EXPECT_EQ(g.nodes.size(), 1u) << "the mask's Shape/Gather/Slice nodes go with the layer";
}

// A causal mask written with -1e9 instead of -inf (a common way to write one) is the same mask.
TEST(FuseEncoderFinds, ACausalMaskWrittenWithALargeNegativeNumber) {
  LayerSpec s{64, 2, 128, 32, true, false, true, true};
  s.mask_fill = -1e9f;
  Graph g = passed_spec(s);
  PassLog log;
  ASSERT_EQ(fuse_encoder(g, log, kRunsIt, 120), 1);
  EXPECT_EQ(first_op(g, "TransformerEncoderLayer")->attr_i("causal", 0), 1);
}

// A mask that lets each query see the next key too is not the causal mask the kernel applies:
// the pass proves the mask by running it and keeps the layers.
TEST(FuseEncoderRefuses, AMaskThatIsNotCausal) {
  LayerSpec s{64, 2, 128, 32, true, false, true, true};
  s.mask_diag = 2;
  Graph g = passed_spec(s);
  PassLog log;
  EXPECT_EQ(fuse_encoder(g, log, kRunsIt, 120), 0);
  EXPECT_EQ(count_op(g, "TransformerEncoderLayer"), 0);
  EXPECT_TRUE(has_line(log, "not a causal mask")) << "the log says why";
}

INSTANTIATE_TEST_SUITE_P(Specs, FuseEncoderShapes, ::testing::ValuesIn(kSpecs),
                         [](const auto& i) { return spec_name(i.param); });

TEST(CudaEncoderCheck, RefusesShapesTheKernelDoesNotRunWithTheReason) {
  if (!cuda()) GTEST_SKIP() << "this build has no cuda backend";
  auto msg = [](int64_t d, int64_t heads, int64_t t, int64_t ff, int64_t k) {
    Status s = cuda::encoder_check(d, heads, t, ff, k);
    return s ? std::string() : s.message();
  };
  EXPECT_EQ(msg(32, 4, 120, 64, 20), "");
  EXPECT_EQ(msg(128, 4, 128, 256, 64), "");
  EXPECT_NE(msg(48, 4, 60, 128, 0).find("d_model 48"), std::string::npos);
  EXPECT_NE(msg(32, 8, 60, 64, 0).find("multiple of 8"), std::string::npos) << "head dim 4";
  EXPECT_NE(msg(64, 3, 60, 128, 0).find("multiple of 8"), std::string::npos);
  EXPECT_NE(msg(64, 4, 129, 128, 0).find("sequence length 129"), std::string::npos);
  EXPECT_NE(msg(64, 4, 60, 100, 0).find("feed-forward size 100"), std::string::npos);
  EXPECT_NE(msg(64, 4, 60, 128, 65).find("input projection K 65"), std::string::npos);
  EXPECT_NE(msg(128, 4, 120, 512, 0).find("shared memory"), std::string::npos) << "d 128, FF 512 at T 120";
  EXPECT_EQ(cuda::encoder_warps(16, 64, 60, 8), 8);
  EXPECT_EQ(cuda::encoder_warps(4096, 64, 60, 16), 16);
  EXPECT_EQ(cuda::encoder_max_warps(64, 60), 32);
  EXPECT_EQ(cuda::encoder_max_warps(64, 120), 16) << "TP 128 holds 128 registers per thread";
  EXPECT_EQ(cuda::encoder_max_warps(32, 60), 16);
}

// The shipped default model (Normalize → Linear(20→32) → 1 encoder layer of d 32, 4 heads, FF 64
// → last step → Linear(1) → Sigmoid) kept its layers before: the backend ran d_model 64 only and
// an input projection with K a multiple of 16. The cuda backend's check now takes it whole.
TEST(FuseEncoder, TheDefaultModelsLayerIsOneNodeWithItsProjectionAndHead) {
  if (!cuda()) GTEST_SKIP() << "this build has no cuda backend";
  const fs::path onnx = default_model();
  if (!fs::exists(onnx)) GTEST_SKIP() << onnx << " is missing";
  auto g = import_onnx_file(onnx.string());
  ASSERT_TRUE(g) << g.status().to_string();
  PassLog log;
  ASSERT_TRUE(run_passes(g.value(), log));
  Graph& gr = g.value();
  EXPECT_EQ(fuse_encoder(gr, log, [&](const Node& n) { return cuda()->check_supported(gr, n).is_ok(); }, 120), 1);
  const Node* l = first_op(gr, "TransformerEncoderLayer");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->attr_i("heads", 0), 4);
  EXPECT_EQ(l->inputs.size(), 17u) << "input projection (K 20) and head folded in";
  EXPECT_EQ(l->attr_s("head_activation", ""), "sigmoid");
  EXPECT_EQ(count_op(gr, "FusedAttention"), 0);
  EXPECT_EQ(count_op(gr, "FusedGemm"), 0);
}

TEST(FuseEncoderRefuses, AHeadDimTheKernelDoesNotRunAndSaysWhy) {
  if (!cuda()) GTEST_SKIP() << "this build has no cuda backend";
  Graph g = passed_spec({32, 8, 64, 32, false, false});  // 8 heads of 4
  PassLog log;
  const Graph before = g;
  EXPECT_EQ(fuse_encoder(g, log, [&](const Node& n) { return cuda()->check_supported(g, n).is_ok(); }, 120), 0);
  EXPECT_EQ(g.nodes.size(), before.nodes.size());
  EXPECT_TRUE(has_line(log, "8 heads, d 32")) << "the plan's log says which layer was kept and why";
}

// --- the kernel (gpu) -------------------------------------------------------------------------

// The fixture built for CPU (FP32, the reference) and CUDA at `precision` (FP16 or FP32) with
// profile batch 1..1024, seq 30..120; the CUDA plan must hold the fused layers.
struct Pair {
  std::shared_ptr<Engine> cpu, gpu;
};
std::optional<Pair> build_pair(const std::string& name, int64_t max_seq = 120, Precision precision = Precision::kFP16) {
  const fs::path p = model_fixtures() / name / "model.onnx";
  auto bytes = read_bytes(p);
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 30, 32}, {64, 60, 32}, {1024, max_seq, 32}};
  BuildOptions co = options("cpu");
  co.profiles = {prof};
  BuildOptions go = options("cuda", precision);
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
  for (int64_t b : {1, 7, 16, 64, 1024}) {
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

// The FP32 plan: one fused node per layer (the strict-FP32 kernel), within FP32's 1e-5 of the CPU.
TEST_P(CudaEncoder, Fp32PlanIsOneNodePerLayerAndMatchesCpuWithinFp32) {
  SKIP_WITHOUT_GPU();
  if (!fs::exists(model_fixtures() / GetParam() / "model.onnx")) GTEST_SKIP() << GetParam() << " is missing";
  auto e = build_pair(GetParam(), 120, Precision::kFP32);
  ASSERT_TRUE(e);
  uint32_t seed = 600;
  for (int64_t b : {1, 7, 16, 300}) {
    for (int64_t t : {30, 60, 120}) {
      std::vector<HostTensor> in{random_tensor({b, t, 32}, seed++, 2.0f)};
      expect_gpu_matches_cpu(*e->cpu, *e->gpu, in, kFp32.rel, "batch " + std::to_string(b) + " seq " + std::to_string(t));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaEncoder, ::testing::Values("transformer_relu", "transformer_gelu"));

// The shape sweep's exported Transformers (bench/shape_sweep/export.py --out DIR; TS_SWEEP_MODELS=DIR,
// skipped without it): every pre-norm and causal layer of d_model 32–128 becomes one node with
// the cuda backend's own check, as PyTorch 1.13 exports them (opset 14 LayerNorm written out,
// opset 17 LayerNormalization; the causal buffer sliced by Shape). d_model 16 is kept, with the
// reason in the log.
TEST(FuseEncoderSweep, ExportedPreNormAndCausalLayersBecomeOneNodeEach) {
  const char* dir = std::getenv("TS_SWEEP_MODELS");
  if (!dir) GTEST_SKIP() << "TS_SWEEP_MODELS is not set (bench/shape_sweep/export.py --out DIR --only 06,10,18,26)";
  if (!cuda()) GTEST_SKIP() << "this build has no cuda backend";
  const struct {
    const char* name;
    int layers;
    bool fused;
  } cases[] = {{"06-xfmr-2xd16h4-ff64-gelu-pre-causal-f58-logits", 2, false},
               {"10-xfmr-3xd128h2-ff256-gelu-causal-f44", 3, true},
               {"18-xfmr-1xd128h2-ff256-relu-pre-causal-f54", 1, true},
               {"26-xfmr-4xd128h8-ff512-gelu-pre-f10", 4, true}};
  for (const auto& c : cases) {
    auto g = passed_file(fs::path(dir) / c.name / "model.onnx");
    if (!g) GTEST_SKIP() << c.name << " is missing in " << dir;
    Graph& gr = *g;
    PassLog log;
    const int n = fuse_encoder(gr, log, [&](const Node& node) { return cuda()->check_supported(gr, node).is_ok(); }, 60);
    EXPECT_EQ(n, c.fused ? c.layers : 0) << c.name;
    if (c.fused) {
      EXPECT_EQ(count_op(gr, "MatMul") + count_op(gr, "Softmax") + count_op(gr, "LayerNormalization"), 0) << c.name;
      EXPECT_EQ(count_op(gr, "Shape"), 0) << c.name << ": the mask's slicing goes with the layers";
      EXPECT_EQ(gr.nodes.size(), size_t(c.layers)) << c.name << ": projection and head folded in";
    } else {
      EXPECT_TRUE(has_line(log, "d 16")) << c.name;
    }
  }
}

// The spec's graph on the CPU (FP32, unfused) against the CUDA plan at precision p, whose graph
// must be the one fused node (projection and head folded in), at every batch × T, within rel.
void check_fused_spec(const LayerSpec& s, Precision p, const ShapeRange& range, std::initializer_list<int64_t> batches,
                      std::initializer_list<int64_t> seqs, double rel, uint32_t seed) {
  Graph g = passed_spec(s);
  OptimizationProfile prof;
  prof.inputs["x"] = range;
  BuildOptions co = options("cpu");
  co.profiles = {prof};
  BuildOptions go = options("cuda", p);
  go.profiles = {prof};
  auto cp = build_from_graph(g, PassLog{}, co);
  auto gp = build_from_graph(g, PassLog{}, go);
  ASSERT_TRUE(cp && gp) << (gp ? cp.status().to_string() : gp.status().to_string());
  auto plan = deserialize_plan(gp.value());
  ASSERT_TRUE(plan);
  EXPECT_EQ(count_op(plan.value().graph, "TransformerEncoderLayer"), 1);
  EXPECT_EQ(plan.value().graph.nodes.size(), 1u) << "projection and head folded into the layer";
  auto ce = Engine::load(cp.value());
  auto ge = Engine::load(gp.value());
  ASSERT_TRUE(ce && ge);
  for (int64_t b : batches) {
    for (int64_t t : seqs) {
      std::vector<HostTensor> in{random_tensor({b, t, s.k}, seed++, 2.0f)};
      expect_gpu_matches_cpu(*ce.value(), *ge.value(), in, rel,
                             spec_name(s) + " batch " + std::to_string(b) + " seq " + std::to_string(t),
                             size_t(b * t * s.d));  // Y [b, t, d] without a head
    }
  }
}

// Every spec: CPU (FP32, unfused) against the CUDA FP16 plan, whose graph is the one fused node,
// at batch 1, 7, 16, 64 (16 warps per CTA) and 1024 (8 warps) × T 30, 60, 120.
class CudaEncoderShapes : public ::testing::TestWithParam<LayerSpec> {};

TEST_P(CudaEncoderShapes, Fp16FusedLayerMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const LayerSpec s = GetParam();
  check_fused_spec(s, Precision::kFP16, ShapeRange{{1, 30, s.k}, {16, 60, s.k}, {1024, 120, s.k}}, {1, 7, 16, 64, 1024},
                   {30, 60, 120}, kFp16.rel, 700);
}

INSTANTIATE_TEST_SUITE_P(Specs, CudaEncoderShapes, ::testing::ValuesIn(kSpecs),
                         [](const auto& i) { return spec_name(i.param); });

// The FP32 plan of every spec (and d 128 with 16 heads of 8, FF 256: at T 120 its fp32 working
// set, like d 128's with FF 256, is over the shared memory and runs in global scratch) is the
// one fused node, within FP32's 1e-5 of the CPU at batch 1, 7, 16 (16 warps per CTA) and 300 (8)
// × T 1, 30, 60, 120.
const LayerSpec kF32Specs[] = {
    {32, 4, 64, 20, true, true},   {32, 1, 128, 32, false, false}, {64, 8, 128, 32, true, true},
    {64, 2, 256, 64, false, false}, {64, 4, 128, 32, true, false},  {128, 4, 256, 48, true, true},
    {128, 2, 128, 128, false, true}, {128, 16, 256, 128, false, false},
    {64, 4, 128, 64, false, false, true, false},  {128, 8, 256, 48, true, true, true, false},
    {64, 2, 128, 32, true, false, false, true},   {128, 2, 256, 44, true, true, false, true},
    {32, 4, 64, 20, true, true, true, true},      {128, 2, 256, 54, true, false, true, true},
};

class CudaEncoderF32Shapes : public ::testing::TestWithParam<LayerSpec> {};

TEST_P(CudaEncoderF32Shapes, Fp32FusedLayerMatchesCpuWithinFp32) {
  SKIP_WITHOUT_GPU();
  const LayerSpec s = GetParam();
  check_fused_spec(s, Precision::kFP32, ShapeRange{{1, 1, s.k}, {16, 60, s.k}, {300, 120, s.k}}, {1, 7, 16, 300},
                   {1, 30, 60, 120}, kFp32.rel, 900);
}

INSTANTIATE_TEST_SUITE_P(Specs, CudaEncoderF32Shapes, ::testing::ValuesIn(kF32Specs),
                         [](const auto& i) { return spec_name(i.param); });

TEST(CudaEncoderF32, TF32AndBF16PlansKeepTheLayers) {
  SKIP_WITHOUT_GPU();
  Graph g = passed_spec({64, 4, 128, 32, true, true});
  for (bool bf16 : {false, true}) {
    BuildOptions go = options("cuda", bf16 ? Precision::kBF16 : Precision::kFP32, !bf16);
    OptimizationProfile prof;
    prof.inputs["x"] = ShapeRange{{1, 30, 32}, {16, 60, 32}, {64, 60, 32}};
    go.profiles = {prof};
    auto gp = build_from_graph(g, PassLog{}, go);
    ASSERT_TRUE(gp) << gp.status().to_string();
    auto plan = deserialize_plan(gp.value());
    ASSERT_TRUE(plan);
    EXPECT_EQ(count_op(plan.value().graph, "TransformerEncoderLayer"), 0) << (bf16 ? "bf16" : "tf32");
  }
}

// Not a test: the FP32 kernel alone (transformer-2x64's layer: d 64, 4 heads, FF 128, input K 32,
// T 60; with and without the head) by CUDA events at 8 and 16 warps per CTA, batch 1 .. 4096.
// Run with --gtest_also_run_disabled_tests on a device.
TEST(CudaEncoderF32, DISABLED_TimesTheKernelByWarps) {
  SKIP_WITHOUT_GPU();
  const int d = 64, ff = 128, k = 32, t = 60, maxb = 4096;
  std::vector<float> host;
  auto put = [&host](size_t n, float sc, float base) {
    const size_t at = host.size();
    std::vector<float> v = random_vec(n, uint32_t(at + 1), sc);
    for (float& e : v) host.push_back(e + base);
    while (host.size() % 4) host.push_back(0.f);
    return at;
  };
  const size_t o_pre = put(size_t(k * d), 0.15f, 0.f), o_bpre = put(d, 0.1f, 0.f), o_in = put(size_t(d * 3 * d), 0.12f, 0.f),
               o_bin = put(3 * d, 0.1f, 0.f), o_out = put(size_t(d * d), 0.12f, 0.f), o_bout = put(d, 0.1f, 0.f),
               o_s1 = put(d, 0.1f, 1.f), o_c1 = put(d, 0.1f, 0.f), o_w1 = put(size_t(d * ff), 0.12f, 0.f),
               o_b1 = put(ff, 0.1f, 0.f), o_w2 = put(size_t(ff * d), 0.09f, 0.f), o_b2 = put(d, 0.1f, 0.f),
               o_s2 = put(d, 0.1f, 1.f), o_c2 = put(d, 0.1f, 0.f), o_hw = put(d, 0.1f, 0.f), o_hb = put(4, 0.1f, 0.f);
  const size_t o_x = put(size_t(maxb) * t * k, 1.f, 0.f);
  float* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, (host.size() + size_t(maxb) * t * d + size_t(maxb)) * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  cuda::EncoderF32Params p;
  p.t_len = t;
  p.ff = ff;
  p.pre_k = k;
  p.d_model = d;
  p.head_dim = 16;
  p.x = dev + o_x;
  p.w_pre = dev + o_pre;
  p.b_pre = dev + o_bpre;
  p.w_in = dev + o_in;
  p.b_in = dev + o_bin;
  p.w_out = dev + o_out;
  p.b_out = dev + o_bout;
  p.ln1_s = dev + o_s1;
  p.ln1_b = dev + o_c1;
  p.w_ff1 = dev + o_w1;
  p.b_ff1 = dev + o_b1;
  p.w_ff2 = dev + o_w2;
  p.b_ff2 = dev + o_b2;
  p.ln2_s = dev + o_s2;
  p.ln2_b = dev + o_c2;
  float* y = dev + host.size();
  cudaEvent_t e0, e1;
  ASSERT_EQ(cudaEventCreate(&e0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e1), cudaSuccess);
  for (bool head : {false, true}) {
    p.head_w = head ? dev + o_hw : nullptr;
    p.head_b = head ? dev + o_hb : nullptr;
    p.head_n = head ? 1 : 0;
    p.head_sigmoid = head;
    p.head_out = head ? y + size_t(maxb) * t * d : nullptr;
    p.y = head ? nullptr : y;
    for (int b : {1, 16, 132, 256, 1024, 4096}) {
      for (int w : {8, 16}) {
        p.batch = b;
        p.warps = w;
        for (int i = 0; i < 5; ++i) ASSERT_TRUE(cuda::launch_encoder_layer_f32(p, nullptr));
        const int reps = b >= 1024 ? 20 : 200;
        ASSERT_EQ(cudaEventRecord(e0), cudaSuccess);
        for (int i = 0; i < reps; ++i) ASSERT_TRUE(cuda::launch_encoder_layer_f32(p, nullptr));
        ASSERT_EQ(cudaEventRecord(e1), cudaSuccess);
        ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
        float ms = 0.f;
        ASSERT_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
        std::printf("xf32-timing head %d batch %5d warps %2d: %9.2f us per layer\n", int(head), b, w, 1000.0 * ms / reps);
      }
    }
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(dev);
}

// Per feature (mean, 2σ) of the default model's training inputs, from its Normalize constants
// (σ 0 where the feature had no variance); empty when they are not found.
std::vector<std::pair<float, float>> default_model_input_range(const fs::path& onnx) {
  std::vector<std::pair<float, float>> range;
  auto g = import_onnx_file(onnx.string());
  if (!g) return range;
  ValueId mean = g.value().find_value("norm.mean"), inv = g.value().find_value("norm.inv_std");
  if (mean == kNoValue || inv == kNoValue) return range;
  const Value& m = g.value().value(mean);
  const Value& is = g.value().value(inv);
  for (int64_t f = 0; f < m.numel() && f < is.numel(); ++f) {
    const float i = is.as<float>()[f];
    range.emplace_back(m.as<float>()[f], i > 0 && i < 1e5f ? 2.0f / i : 0.0f);
  }
  return range;
}

// The shipped default model (models/default.onnx: Normalize → Linear(20→32) → 1 encoder layer
// of d 32, 4 heads, FF 64 → last step → Linear(1) → Sigmoid): its FP16 plan runs the layer as
// the fused node, the input projection (K 20) and head folded in.
TEST(CudaEncoderDefaultModel, IsFusedAndMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const fs::path onnx = default_model();
  if (!fs::exists(onnx)) GTEST_SKIP() << onnx << " is missing";
  auto bytes = read_bytes(onnx);
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, 30, 20}, {16, 60, 20}, {1024, 120, 20}};
  BuildOptions co = options("cpu");
  co.profiles = {prof};
  BuildOptions go = options("cuda", Precision::kFP16);
  go.profiles = {prof};
  auto cp = build(bytes, co);
  auto gp = build(bytes, go);
  ASSERT_TRUE(cp && gp) << (gp ? cp.status().to_string() : gp.status().to_string());
  auto plan = deserialize_plan(gp.value());
  ASSERT_TRUE(plan);
  const Node* l = first_op(plan.value().graph, "TransformerEncoderLayer");
  ASSERT_NE(l, nullptr) << "the default model's layer is fused";
  EXPECT_EQ(l->attr_i("heads", 0), 4);
  EXPECT_EQ(l->inputs.size(), 17u) << "input projection (K 20) and head folded in";
  auto ce = Engine::load(cp.value());
  auto ge = Engine::load(gp.value());
  ASSERT_TRUE(ce && ge);
  // Inputs in the range the model was trained on (its Normalize inverted, as CudaDefaultModel
  // does): features with zero training variance stay at their mean, since random values there
  // become ±1e6 after normalization, past FP16's range (in any FP16 engine).
  const std::vector<std::pair<float, float>> range = default_model_input_range(onnx);
  ASSERT_EQ(range.size(), 20u) << "norm.mean / norm.inv_std not found";
  uint32_t seed = 800;
  for (int64_t b : {1, 7, 16, 64, 1024}) {
    for (int64_t t : {30, 60, 120}) {
      std::vector<HostTensor> in{random_tensor({b, t, 20}, seed++, 1.0f)};
      float* v = in[0].f();
      for (int64_t i = 0; i < b * t * 20; ++i) v[i] = range[size_t(i % 20)].first + range[size_t(i % 20)].second * v[i];
      expect_gpu_matches_cpu(*ce.value(), *ge.value(), in, kFp16.rel, "batch " + std::to_string(b) + " seq " + std::to_string(t));
    }
  }
}

}  // namespace
}  // namespace ts::engine::testing
