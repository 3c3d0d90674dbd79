// The CUDA backend's Transformer and TCN layers against the CPU backend (the reference):
// LayerNormalization, FusedAttention, Conv (1-D), the host shape arithmetic PyTorch exports
// around dynamic reshapes (Shape → Gather → Mul → Concat → Reshape, Slice with computed ends,
// Cast), each on random inputs at several shapes; and the whole Transformer/TCN fixture models
// and the shipped models/default.onnx at FP32, TF32, FP16 and BF16. Labelled `gpu`: skipped with
// the reason without a CUDA device. Tolerances: cuda_test_util.h.
#include "cuda_test_util.h"
#include "engine/onnx_import.h"

namespace ts::engine::testing {
namespace {

OpCase layer_norm_case(int64_t len, bool scalar_scale, bool with_bias) {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"n", "", ""}, {0, 3, len}));
  ValueId s = scalar_scale ? b.constant("s", {1}, {0.7f}) : b.constant("s", {len}, random_vec(size_t(len), 1));
  std::vector<ValueId> ins{x, s};
  if (with_bias) ins.push_back(b.constant("b", {len}, random_vec(size_t(len), 2)));
  ValueId y = b.value("y");
  Node& n = b.node("LayerNormalization", ins, {y});
  n.attrs["axis"] = int64_t(-1);
  n.attrs["epsilon"] = 1e-5f;
  b.output(y);
  return {"LayerNormalization len " + std::to_string(len) + (scalar_scale ? " scalar scale" : "") + (with_bias ? " bias" : ""),
          b.g, {{{1, 3, len}}, {{17, 3, len}}, {{500, 3, len}}}};
}

TEST(CudaLayers, LayerNormalizationMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (int64_t len : {64, 37, 1024}) {
    check_case(layer_norm_case(len, false, true), kFp32);
    check_case(layer_norm_case(len, false, true), kFp16, Precision::kFP16);
  }
  check_case(layer_norm_case(64, true, false), kFp32);
}

// MatMul of two graph inputs (both computed at run time), a [n, h, m, k] · b with b's batch dims
// `b_batch` (broadcast against a's): what a Transformer's attention runs unfused, as with a
// causal mask between the scores and the Softmax.
OpCase runtime_matmul_case(std::vector<int64_t> b_batch, std::vector<std::array<int64_t, 4>> shapes, int64_t k, int64_t nn) {
  GraphBuilder b;
  ValueId x = b.input("a", sym({"n", "", "m", ""}, {0, 4, 0, k}));
  std::vector<std::string> names;
  std::vector<int64_t> fixed;
  for (int64_t d : b_batch) {
    names.push_back(d == 0 ? "n" : "");
    fixed.push_back(d);
  }
  names.insert(names.end(), {"", ""});
  fixed.insert(fixed.end(), {k, nn});
  ValueId w = b.input("b", sym(names, fixed));
  ValueId y = b.value("y");
  b.node("MatMul", {x, w}, {y});
  b.output(y);
  OpCase c{"MatMul run-time B, b batch rank " + std::to_string(b_batch.size()) + " k " + std::to_string(k), b.g, {}};
  for (auto [n, h, m, unused] : shapes) {
    (void)unused;
    std::vector<int64_t> bd;
    for (int64_t d : b_batch) bd.push_back(d == 0 ? n : d);
    bd.insert(bd.end(), {k, nn});
    c.runs.push_back({{n, h, m, k}, bd});
  }
  return c;
}

TEST(CudaLayers, MatMulOfTwoRunTimeTensorsMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::array<int64_t, 4>> shapes{{1, 4, 60, 0}, {3, 4, 17, 0}, {64, 4, 60, 0}};
  for (int64_t k : {16, 60, 5}) {
    check_case(runtime_matmul_case({0, 4}, shapes, k, 60), kFp32);  // scores·V: the same batch dims
    check_case(runtime_matmul_case({4}, shapes, k, 33), kFp32);     // broadcast over n
    check_case(runtime_matmul_case({}, shapes, k, 7), kFp32);       // a 2-D B computed at run time
  }
  check_case(runtime_matmul_case({0, 4}, shapes, 16, 60), kFp16, Precision::kFP16);
}

// q [n, tq, d], k [n, tk, d] (or kᵀ [n, d, tk]), v [n, tk, dv] as graph inputs.
OpCase attention_case(bool k_transposed, int64_t d, int64_t dv, std::vector<std::array<int64_t, 3>> shapes) {
  GraphBuilder b;
  ValueId q = b.input("q", sym({"n", "tq", ""}, {0, 0, d}));
  ValueId k = b.input("k", k_transposed ? sym({"n", "", "tk"}, {0, d, 0}) : sym({"n", "tk", ""}, {0, 0, d}));
  ValueId v = b.input("v", sym({"n", "tk", ""}, {0, 0, dv}));
  ValueId y = b.value("y");
  Node& n = b.node("FusedAttention", {q, k, v}, {y});
  n.attrs["scale"] = 1.0f / std::sqrt(float(d));
  n.attrs["k_transposed"] = int64_t(k_transposed);
  b.output(y);
  OpCase c{"FusedAttention d " + std::to_string(d) + " dv " + std::to_string(dv) + (k_transposed ? " kT" : ""), b.g, {}};
  for (auto [bh, tq, tk] : shapes) {
    c.runs.push_back({{bh, tq, d}, k_transposed ? std::vector<int64_t>{bh, d, tk} : std::vector<int64_t>{bh, tk, d}, {bh, tk, dv}});
  }
  return c;
}

TEST(CudaLayers, FusedAttentionMatchesCpu) {
  SKIP_WITHOUT_GPU();
  // [batch·heads, Tq, Tk]: one query tile, several tiles of queries and keys, T = 512, Tq ≠ Tk.
  const std::vector<std::array<int64_t, 3>> shapes{{4, 60, 60}, {256, 30, 30}, {3, 130, 77}, {2, 512, 512}, {5, 1, 200}};
  for (bool kt : {false, true}) {
    for (auto [d, dv] : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {24, 24}, {64, 64}, {100, 128}, {8, 20}}) {
      check_case(attention_case(kt, d, dv, shapes), kFp32);
    }
  }
  check_case(attention_case(false, 16, 16, shapes), kFp16, Precision::kFP16);
}

TEST(CudaLayers, AttentionHeadDimAboveTheLimitIsRefused) {
  SKIP_WITHOUT_GPU();
  auto e = build_graph(attention_case(false, 160, 160, {}).g, options("cuda"));  // fails at the builder's opt-shape run
  ASSERT_FALSE(e);
  EXPECT_NE(e.status().message().find("head dim 160 is over the cuda backend's 128"), std::string::npos) << e.status().message();
}

OpCase conv_case(int64_t c_in, int64_t c_out, int64_t kw, int64_t dil, int64_t stride, int64_t group,
                 std::vector<int64_t> pads, bool bias, const std::string& auto_pad = "NOTSET") {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"n", "", "t"}, {0, c_in, 0}));
  std::vector<ValueId> ins{x, b.constant("w", {c_out, c_in / group, kw}, random_vec(size_t(c_out * c_in / group * kw), 3, 0.3f))};
  if (bias) ins.push_back(b.constant("b", {c_out}, random_vec(size_t(c_out), 4)));
  ValueId y = b.value("y");
  Node& n = b.node("Conv", ins, {y});
  n.attrs["kernel_shape"] = std::vector<int64_t>{kw};
  n.attrs["dilations"] = std::vector<int64_t>{dil};
  n.attrs["strides"] = std::vector<int64_t>{stride};
  n.attrs["group"] = group;
  if (!pads.empty()) n.attrs["pads"] = pads;
  if (auto_pad != "NOTSET") n.attrs["auto_pad"] = auto_pad;
  b.output(y);
  std::string name = "Conv1d " + std::to_string(c_in) + "→" + std::to_string(c_out) + " k" + std::to_string(kw) + " d" +
                     std::to_string(dil) + " s" + std::to_string(stride) + " g" + std::to_string(group) + " " + auto_pad;
  return {name, b.g, {{{1, c_in, 60}}, {{7, c_in, 30}}, {{300, c_in, 120}}}};
}

TEST(CudaLayers, Conv1dMatchesCpu) {
  SKIP_WITHOUT_GPU();
  for (int64_t dil : {1, 2, 4}) {
    OpCase c = conv_case(32, 32, 3, dil, 1, 1, {dil, dil}, true);  // the TCN's 'same' convs
    check_case(c, kFp32);
    check_case(c, kFp16, Precision::kFP16);
  }
  check_case(conv_case(8, 12, 5, 1, 2, 1, {1, 3}, false), kFp32);
  check_case(conv_case(8, 12, 3, 2, 1, 4, {}, true), kFp32);
  check_case(conv_case(6, 4, 4, 1, 3, 2, {}, true, "SAME_UPPER"), kFp32);
}

TEST(CudaLayers, TwoDimensionalConvIsRefusedNamingTheNode) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  ValueId x = b.input("x", known({1, 2, 5, 5}));
  ValueId y = b.value("y");
  b.node("Conv", {x, b.constant("w", {3, 2, 3, 3}, random_vec(54, 5))}, {y});
  b.output(y);
  auto r = build_from_graph(b.g, PassLog{}, options("cuda"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("with 2 spatial dims is not supported by the cuda backend (1-D only)"), std::string::npos)
      << r.status().message();
}

// x [n, t, 8] → Reshape to [n·t, 8] with the shape computed from Shape(x); the first n·t/2 rows
// (Slice whose end is computed); every second column backwards (negative step); both
// concatenated on the device along axis 1 → [n·t/2, 12].
TEST(CudaLayers, HostShapeArithmeticSliceConcatMatchCpu) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  const DType i64 = DType::kI64;
  ValueId x = b.input("x", sym({"n", "t", ""}, {0, 0, 8}));
  ValueId s = b.value("s", i64), g0 = b.value("g0", i64), g1 = b.value("g1", i64), m = b.value("m", i64),
          c = b.value("c", i64), cc = b.value("cc", i64), r = b.value("r"), h = b.value("h", i64),
          top = b.value("top"), back = b.value("back"), y = b.value("y");
  b.node("Shape", {x}, {s});
  b.node("Gather", {s, b.constant_i64("i0", {0})}, {g0}).attrs["axis"] = int64_t(0);
  b.node("Gather", {s, b.constant_i64("i1", {1})}, {g1}).attrs["axis"] = int64_t(0);
  b.node("Mul", {g0, g1}, {m});
  b.node("Concat", {m, b.constant_i64("eight", {8})}, {c}).attrs["axis"] = int64_t(0);
  b.node("Cast", {c}, {cc}).attrs["to"] = int64_t(7);
  b.node("Reshape", {x, cc}, {r});
  b.node("Div", {m, b.constant_i64("two", {2})}, {h});
  b.node("Slice", {r, b.constant_i64("s0", {0}), h, b.constant_i64("a0", {0})}, {top});
  b.node("Slice", {top, b.constant_i64("s1", {-1}), b.constant_i64("e1", {-1000}), b.constant_i64("a1", {1}),
                   b.constant_i64("st1", {-2})},
         {back});
  b.node("Concat", {top, back}, {y}).attrs["axis"] = int64_t(1);
  b.output(y);
  check_case({"shape arithmetic", b.g, {{{1, 6, 8}}, {{7, 30, 8}}, {{64, 60, 8}}}}, kFp32);
}

// --- whole models ---

class CudaLayerModels : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaLayerModels, Fp32MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kFP32, false, kFp32);
}
TEST_P(CudaLayerModels, Tf32MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kFP32, true, kTf32);
}
TEST_P(CudaLayerModels, Fp16MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kFP16, false, kFp16);
}
TEST_P(CudaLayerModels, Bf16MatchesCpu) {
  SKIP_WITHOUT_GPU();
  check_model(GetParam(), Precision::kBF16, false, kBf16);
}
INSTANTIATE_TEST_SUITE_P(Fixtures, CudaLayerModels, ::testing::Values("transformer_gelu", "transformer_relu", "tcn_3x32"));

TEST(CudaDefaultModel, Fp32Tf32Fp16Bf16MatchCpu) {
  SKIP_WITHOUT_GPU();
  const fs::path onnx = default_model();
  check_model_file(onnx, 20, Precision::kFP32, false, kFp32);
  auto range = default_model_input_range(onnx);
  ASSERT_EQ(range.size(), 20u) << "models/default.onnx no longer has norm.mean / norm.inv_std";
  check_model_file(onnx, 20, Precision::kFP32, false, kFp32, range);
  check_model_file(onnx, 20, Precision::kFP32, true, kTf32, range);
  check_model_file(onnx, 20, Precision::kFP16, false, kFp16, range);
  check_model_file(onnx, 20, Precision::kBF16, false, kBf16, range);
}

}  // namespace
}  // namespace ts::engine::testing
