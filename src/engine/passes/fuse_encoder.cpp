// fuse_encoder: one PyTorch nn.TransformerEncoderLayer (post-norm or pre-norm, with or without
// a causal mask, batch_first, as torch.onnx exports it, after fuse()) → one
// TransformerEncoderLayer node, where `backend_runs` accepts it
// (the CUDA backend's fused layer, cuda_encoder.h). Run by the builder for FP16, strict FP32 and
// INT8 plans once the backend is known (builder.cpp says why INT8); other plans keep their layers.
//
// A layer is found from its compute nodes, working back from a LayerNormalization (LN₂):
//
//   LN₂(Add₂(LN₁, FusedGemm ff2(FusedGemm ff1 [relu | gelu](LN₁))))
//   LN₁ = LN₁(Add₁(X, …out_proj(…FusedAttention(…in_proj(…X)…)…)))
//
// or, pre-norm (norm_first), from the FF residual Add:
//
//   Add₂(H, FusedGemm ff2(FusedGemm ff1(LN₂(H)))),  H = Add₁(X, …out_proj(…attention(…in_proj(LN₁(X))))).
//
// The attention is a FusedAttention, or — where a mask keeps fuse_attention from matching — two
// MatMuls and a Softmax with f32 Mul/Div (scale) and Add (mask). A mask is a value the layer
// reads from outside (its data do not depend on X: PyTorch's causal buffer sliced to the input's
// length through Shape/Gather/Slice); it is accepted only where running its nodes on the CPU
// backend gives 0 on and below the diagonal and -inf above it at T 1, 5, 7 and max_seq (attribute
// causal = 1), and its nodes go once no layer reads them.
// X is the input of Add₁ whose other side leads back to X through the attention. The region
// is every node on a path from X to the layer's output Y. Besides its compute nodes (4 FusedGemm
// with constant weights, the attention, 2 Adds, 2 LayerNormalizations) it may hold only
// data movement (Transpose, Reshape, Slice, Squeeze, Unsqueeze, Flatten, Identity) and int64
// shape arithmetic (Shape, Gather, Concat, Cast, Add/Sub/Mul/Div of int64, Constant); no value
// inside may be read outside it. What the glue does (which columns are q, k and v, how heads are
// split and merged) is then proved by running it: the region on the CPU backend against the
// layer's definition computed here, at two shapes, for each head count that divides d_model; a
// region that matches none is kept as it is. A FusedGemm without activation producing X and
// read only by the layer (the model's input projection) is folded in as well (inputs 13, 14).
//
// TransformerEncoderLayer inputs: X [B, T, K], W_in, b_in, W_out, b_out, ln1 scale, ln1 bias,
// W1, b1, W2, b2, ln2 scale, ln2 bias[, W_pre, b_pre] (weights as their FusedGemm had them;
// trans_b_* attributes say which are [N, K]; ln1 is the attention side's, ln2 the FF side's);
// attrs heads, scale, epsilon1, epsilon2, activation, norm_first, causal,
// trans_b_{in,out,ff1,ff2,pre}, max_seq (the builder's largest profile seq, for the backend's check),
// rows_needed (1: only a last-step Gather reads Y, mark_rows_needed below). Output: Y [B, T, D] —
// or, where the model's head follows the last layer (fold_head below), the head's [B, N].
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>

#include "engine/builder.h"
#include "engine/engine.h"
#include "engine/passes/encoder_region.h"
#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine {
namespace {

using namespace encoder_region;  // NOLINT: this pass's own helpers

// W of a FusedGemm as [N][K] row-major, and N, K; false unless W is a constant f32 matrix.
bool gemm_weights(const Graph& g, const Node& n, std::vector<float>* w_nk, int64_t* nn, int64_t* kk) {
  if (n.inputs.size() < 2 || !is_const(g, n.inputs[1]) || g.value(n.inputs[1]).dtype != DType::kF32) return false;
  auto d = g.value(n.inputs[1]).const_dims();
  if (d.size() != 2) return false;
  const bool tb = n.attr_i("trans_b", 0) != 0;
  *nn = tb ? d[0] : d[1];
  *kk = tb ? d[1] : d[0];
  const float* w = g.value(n.inputs[1]).as<float>();
  w_nk->assign(size_t(*nn * *kk), 0.f);
  for (int64_t r = 0; r < *nn; ++r)
    for (int64_t c = 0; c < *kk; ++c) (*w_nk)[size_t(r * *kk + c)] = tb ? w[r * *kk + c] : w[c * *nn + r];
  return true;
}

// The layer's parameters, as the host reference and the fused node see them.
struct Layer {
  int64_t d = 0, ff = 0, pre_k = 0;  // pre_k 0: no input projection
  std::vector<float> w_pre, b_pre, w_in, b_in, w_out, b_out, s1, c1, w1, b1, w2, b2, s2, c2;
  float scale = 0.f, eps1 = 1e-5f, eps2 = 1e-5f;  // scale 0: 1/sqrt(head dim), PyTorch's (unfused attention)
  bool gelu = false;
  bool norm_first = false;  // pre-norm: x + attn(LN₁(x)), then h + ff(LN₂(h)), no LayerNorm after
  bool causal = false;      // key j > query i masked out (PyTorch's triu(-inf, 1) mask)
};

// y[r][n] = Σ_k x[r][k] · w[n][k] + b[n]
void linear(const std::vector<double>& x, int64_t rows, int64_t k, const std::vector<float>& w, const std::vector<float>& b,
            int64_t n, std::vector<double>* y) {
  y->assign(size_t(rows * n), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = b[size_t(j)];
      for (int64_t i = 0; i < k; ++i) s += x[size_t(r * k + i)] * w[size_t(j * k + i)];
      (*y)[size_t(r * n + j)] = s;
    }
}

void layer_norm(std::vector<double>* x, int64_t rows, int64_t d, const std::vector<float>& s, const std::vector<float>& b,
                float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double* p = x->data() + r * d;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += p[i];
    mean /= double(d);
    for (int64_t i = 0; i < d; ++i) var += (p[i] - mean) * (p[i] - mean);
    const double inv = 1.0 / std::sqrt(var / double(d) + eps);
    for (int64_t i = 0; i < d; ++i) p[i] = (p[i] - mean) * inv * s[size_t(i)] + b[size_t(i)];
  }
}

// The layer's definition on one sequence x [t][k_in].
std::vector<double> reference(const Layer& L, int64_t heads, const float* xin, int64_t t) {
  const int64_t d = L.d, dh = d / heads;
  const double scale = L.scale != 0.f ? double(L.scale) : 1.0 / std::sqrt(double(dh));
  std::vector<double> x(xin, xin + t * (L.pre_k ? L.pre_k : d)), tmp;
  if (L.pre_k) {
    linear(x, t, L.pre_k, L.w_pre, L.b_pre, d, &tmp);
    x = tmp;
  }
  std::vector<double> xa = x;  // attention's input: x, or LN₁(x) in a pre-norm layer
  if (L.norm_first) layer_norm(&xa, t, d, L.s1, L.c1, L.eps1);
  std::vector<double> qkv, o(size_t(t * d), 0.0), a, f1, f2;
  linear(xa, t, d, L.w_in, L.b_in, 3 * d, &qkv);
  std::vector<double> p(static_cast<size_t>(t));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < t; ++i) {
      const int64_t keys = L.causal ? i + 1 : t;
      double m = -1e300, sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (int64_t e = 0; e < dh; ++e) s += qkv[size_t(i * 3 * d + h * dh + e)] * qkv[size_t(j * 3 * d + d + h * dh + e)];
        p[size_t(j)] = s * scale;
        m = std::max(m, p[size_t(j)]);
      }
      for (int64_t j = 0; j < keys; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - m));
      for (int64_t e = 0; e < dh; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < keys; ++j) acc += p[size_t(j)] * qkv[size_t(j * 3 * d + 2 * d + h * dh + e)];
        o[size_t(i * d + h * dh + e)] = acc / sum;
      }
    }
  linear(o, t, d, L.w_out, L.b_out, d, &a);
  for (size_t i = 0; i < a.size(); ++i) a[i] += x[i];
  std::vector<double> fa = a;  // FF's input: LN₁(x + attn) post-norm, LN₂(h) pre-norm
  if (L.norm_first) {
    layer_norm(&fa, t, d, L.s2, L.c2, L.eps2);
  } else {
    layer_norm(&a, t, d, L.s1, L.c1, L.eps1);
    fa = a;
  }
  linear(fa, t, d, L.w1, L.b1, L.ff, &f1);
  for (double& v : f1) v = L.gelu ? 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) : std::max(v, 0.0);
  linear(f1, t, L.ff, L.w2, L.b2, d, &f2);
  for (size_t i = 0; i < f2.size(); ++i) f2[i] += a[i];
  if (!L.norm_first) layer_norm(&f2, t, d, L.s2, L.c2, L.eps2);
  return f2;
}

// Runs `region` on the CPU backend, x → y, at [b, t, k] (with the layer's mask where it has one).
Result<std::vector<float>> run_region(const Graph& g, const std::vector<int>& region, ValueId x, ValueId y,
                                      const std::vector<float>& xin, int64_t b, int64_t t, int64_t k, const MaskSource* ms) {
  std::vector<RegionInput> ins{{x, {b, t, k}, xin}};
  if (ms) {
    RegionInput m{ms->m, {}, {}};
    auto mv = mask_at(g, *ms, t, &m.dims);
    if (!mv) return mv.status();
    m.data = std::move(mv).value();
    ins.push_back(std::move(m));
  }
  std::vector<int64_t> dims;
  auto out = run_nodes(g, region, ins, y, {b, t, 1024}, &dims);  // room: [batch, seq, d ≤ 1024]
  if (!out) return out.status();
  if (dims.size() != 3 || dims[0] != b || dims[1] != t) {
    return Status(StatusCode::kInvalidArgument, "the region's output is not [batch, seq, d]");
  }
  return out;
}

// The head count for which the region computes the layer (at two shapes), or 0.
int64_t prove(const Graph& g, const std::vector<int>& region, ValueId x, ValueId y, const Layer& L, const MaskSource* ms) {
  const int64_t k = L.pre_k ? L.pre_k : L.d;
  std::vector<int64_t> ok_heads;
  for (int64_t h = 1; h <= L.d; ++h)
    if (L.d % h == 0) ok_heads.push_back(h);
  const std::pair<int64_t, int64_t> shapes[2] = {{2, 5}, {3, 7}};
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto [b, t] : shapes) {
    std::vector<float> xin(size_t(b * t * k));
    for (float& v : xin) v = nd(rng);
    auto got = run_region(g, region, x, y, xin, b, t, k, ms);
    if (!got || got.value().size() != size_t(b * t * L.d)) return 0;
    std::vector<int64_t> still;
    for (int64_t h : ok_heads) {
      double num = 0, den = 0;
      for (int64_t s = 0; s < b; ++s) {
        auto want = reference(L, h, xin.data() + s * t * k, t);
        for (int64_t i = 0; i < t * L.d; ++i) {
          const double d = double(got.value()[size_t(s * t * L.d + i)]) - want[size_t(i)];
          num += d * d;
          den += want[size_t(i)] * want[size_t(i)];
        }
      }
      if (std::sqrt(num) <= 1e-4 * std::sqrt(den)) still.push_back(h);
    }
    ok_heads = still;
    if (ok_heads.empty()) return 0;
  }
  return ok_heads.size() == 1 ? ok_heads[0] : 0;
}

bool glue_op(const Graph& g, const Node& n) {
  static const std::set<std::string> moves{"Transpose", "Reshape", "Slice", "Squeeze", "Unsqueeze", "Flatten", "Identity",
                                           "Shape", "Gather", "Concat", "Cast", "Constant"};
  if (moves.count(n.op)) return true;
  if (n.op == "Add" || n.op == "Sub" || n.op == "Mul" || n.op == "Div") {
    for (ValueId o : n.outputs)
      if (g.value(o).dtype != DType::kI64) return false;
    return true;
  }
  return false;
}

const Node* only_op(const Graph& g, const std::vector<int>& region, const std::string& op, int* idx = nullptr) {
  const Node* f = nullptr;
  for (int i : region)
    if (g.nodes[size_t(i)].op == op) {
      if (f) return nullptr;
      f = &g.nodes[size_t(i)];
      if (idx) *idx = i;
    }
  return f;
}

// The classifier head after the last layer: Y → Gather(axis 1, index −1) → FusedGemm (N ≤ 16,
// activation none or sigmoid), each value read only by the next. Folded into `f` (inputs 15, 16:
// W_head, b_head; 13, 14 absent when there is no input projection; attrs head_trans_b,
// head_activation; the FusedGemm's output becomes the node's [B, N]) so that the kernel runs the
// rest of the layer for the last row only. `absorbed` gets the two nodes' indices.
bool fold_head(const Graph& g, const std::vector<std::vector<int>>& users, Node* f, std::vector<int>* absorbed) {
  const ValueId y = f->outputs[0];
  if (passes::is_graph_output(g, y) || users[size_t(y)].size() != 1) return false;
  const int iga = users[size_t(y)][0];
  const Node& ga = g.nodes[size_t(iga)];
  if (ga.op != "Gather" || ga.inputs.size() != 2 || ga.inputs[0] != y || ga.attr_i("axis", 0) != 1) return false;
  const Value& idx = g.value(ga.inputs[1]);
  if (!idx.is_constant || idx.const_dims().size() != 0 || idx.dtype != DType::kI64 || constant_as_i64(idx)[0] != -1) return false;
  const ValueId h = ga.outputs[0];
  if (passes::is_graph_output(g, h) || users[size_t(h)].size() != 1) return false;
  const int igm = users[size_t(h)][0];
  const Node& gm = g.nodes[size_t(igm)];
  if (gm.op != "FusedGemm" || gm.inputs[0] != h) return false;
  const std::string act = gm.attr_s("activation", "none");
  if (act != "none" && act != "sigmoid") return false;
  std::vector<float> w, b;
  int64_t n = 0, k = 0;
  // K must be the layer's d_model (its output's last dim): the backend checks it with the rest.
  if (!gemm_weights(g, gm, &w, &n, &k) || n < 1 || n > 16 || !vec_or(g, gm, 2, n, 0.f, &b)) return false;
  while (f->inputs.size() < 15) f->inputs.push_back(kNoValue);
  f->inputs.push_back(gm.inputs[1]);
  f->inputs.push_back(gm.inputs.size() > 2 ? gm.inputs[2] : kNoValue);
  f->attrs["head_trans_b"] = gm.attr_i("trans_b", 0);
  f->attrs["head_activation"] = act;
  f->outputs = gm.outputs;
  f->fused_from.push_back(ga.name);
  f->fused_from.push_back(gm.name);
  *absorbed = {iga, igm};
  return true;
}

// The layer's region: every node on a path from x to y, stopping at constants and at f32 values
// whose data do not depend on x (`sides`: the mask a causal layer reads, computed outside it);
// false if it reaches a graph input other than x.
bool layer_region(const Graph& g, ValueId y, ValueId x, const std::vector<bool>& dep, std::vector<int>* nodes,
                  std::set<ValueId>* sides) {
  const auto outside = [&](ValueId v) { return !dep[size_t(v)] && g.value(v).dtype == DType::kF32; };
  return closure(g, y, std::set<ValueId>{x}, nodes, outside, sides);
}

bool is_f32_op(const Graph& g, int i, const char* op) {
  return i >= 0 && g.nodes[size_t(i)].op == op && !g.nodes[size_t(i)].outputs.empty() &&
         g.value(g.nodes[size_t(i)].outputs[0]).dtype == DType::kF32;
}

// x for the residual Add `ia1` (x + attention branch): the input whose other side leads back to
// it through an attention (FusedAttention, or the Softmax of an unfused one).
ValueId residual_input(const Graph& g, int ia1) {
  for (int side = 0; side < 2; ++side) {
    const ValueId cand = g.nodes[size_t(ia1)].inputs[size_t(side)];
    const ValueId other = g.nodes[size_t(ia1)].inputs[size_t(1 - side)];
    if (is_const(g, cand)) continue;
    const std::vector<bool> dep = depends_on(g, cand);
    if (!dep[size_t(other)]) continue;
    std::vector<int> branch;
    std::set<ValueId> sides;
    if (!layer_region(g, other, cand, dep, &branch, &sides)) continue;
    for (int b : branch)
      if (g.nodes[size_t(b)].op == "FusedAttention" || g.nodes[size_t(b)].op == "Softmax") return cand;
  }
  return kNoValue;
}

// Tries the layer ending at node `i2`: LayerNormalization₂ of a post-norm layer, or the FF
// residual Add of a pre-norm one (norm_first); on success rewrites g and returns true.
//   post-norm: LN₂(Add₂(LN₁(Add₁(X, attn(X))), ff(LN₁…)))
//   pre-norm:  Add₂(H, ff(LN₂(H))), H = Add₁(X, attn(LN₁(X)))
bool try_layer(Graph& g, size_t i2, PassLog& log, const std::function<bool(const Node&)>& backend_runs, int64_t max_seq) {
  const Node& ln2_or_add = g.nodes[i2];
  if (ln2_or_add.outputs.empty()) return false;
  const ValueId y = ln2_or_add.outputs[0];
  Layer L;
  L.norm_first = ln2_or_add.op == "Add";
  int ia1 = -1;
  if (L.norm_first) {
    if (!is_f32_op(g, int(i2), "Add")) return false;
    for (ValueId h : ln2_or_add.inputs)
      if (is_f32_op(g, producer(g, h), "Add")) {
        const int cand = producer(g, h);
        if (residual_input(g, cand) != kNoValue) ia1 = cand;
      }
  } else {
    const int ia2 = producer(g, ln2_or_add.inputs[0]);
    if (!is_f32_op(g, ia2, "Add")) return false;
    // Add₂'s inputs: LN₁'s output and ff2's.
    for (ValueId v : g.nodes[size_t(ia2)].inputs) {
      const int p = producer(g, v);
      if (p >= 0 && g.nodes[size_t(p)].op == "LayerNormalization" && is_f32_op(g, producer(g, g.nodes[size_t(p)].inputs[0]), "Add"))
        ia1 = producer(g, g.nodes[size_t(p)].inputs[0]);
    }
  }
  if (ia1 < 0) return false;
  const ValueId x = residual_input(g, ia1);
  if (x == kNoValue) return false;
  const Value& xv = g.value(x);
  if (!xv.rank_known || xv.shape.size() != 3 || xv.dtype != DType::kF32) return false;
  const std::vector<bool> dep = depends_on(g, x);
  if (!dep[size_t(y)]) return false;
  std::vector<int> region;
  std::set<ValueId> sides;
  if (!layer_region(g, y, x, dep, &region, &sides)) return false;
  // A value from outside (not a constant): only a causal mask.
  MaskSource mask;
  if (sides.size() > 1) return false;
  if (sides.size() == 1) {
    if (!mask_is_causal(g, *sides.begin(), max_seq, &mask)) {
      log.lines.push_back("fuse_encoder: kept the layers ending at " + ln2_or_add.name +
                          ": its attention reads a value from outside the layer that is not a causal mask");
      return false;
    }
    L.causal = true;
  }

  // The compute nodes: 4 FusedGemm, 2 LayerNormalization, the attention (one FusedAttention, or
  // 2 MatMul and a Softmax with f32 Add/Mul/Div for scale and mask), the 2 residual Adds;
  // everything else glue.
  int n_gemm = 0, n_ln = 0, n_attn = 0, n_mm = 0, n_softmax = 0;
  for (int i : region) {
    const Node& n = g.nodes[size_t(i)];
    const bool f32 = !n.outputs.empty() && g.value(n.outputs[0]).dtype == DType::kF32;
    if (n.op == "FusedGemm") ++n_gemm;
    else if (n.op == "LayerNormalization") ++n_ln;
    else if (n.op == "FusedAttention") ++n_attn;
    else if (n.op == "MatMul") ++n_mm;
    else if (n.op == "Softmax") ++n_softmax;
    else if (f32 && (n.op == "Add" || n.op == "Mul" || n.op == "Div")) continue;  // residuals, scale, mask: proved below
    else if (!glue_op(g, n)) return false;
  }
  const bool fused_attn = n_attn == 1 && n_mm == 0 && n_softmax == 0;
  if (n_gemm != 4 || n_ln != 2 || !(fused_attn || (n_attn == 0 && n_mm == 2 && n_softmax == 1))) return false;
  // Nothing inside is read outside (or is a graph output), but Y.
  const auto users = passes::consumers(g);
  std::set<int> in_region(region.begin(), region.end());
  for (int i : region)
    for (ValueId o : g.nodes[size_t(i)].outputs) {
      if (o == kNoValue || o == y) continue;
      if (passes::is_graph_output(g, o)) return false;
      for (int u : users[size_t(o)])
        if (!in_region.count(u)) return false;
    }
  // LN₁ (the attention side) and LN₂ (the FF side).
  const ValueId h = g.nodes[size_t(ia1)].outputs[0];
  int iln1 = -1, iln2 = -1;
  for (int i : region) {
    const Node& n = g.nodes[size_t(i)];
    if (n.op != "LayerNormalization") continue;
    if (L.norm_first) {
      if (n.inputs[0] == x) iln1 = i;
      if (n.inputs[0] == h) iln2 = i;
    } else {
      if (n.inputs[0] == h) iln1 = i;
      if (size_t(i) == i2) iln2 = i;
    }
  }
  if (iln1 < 0 || iln2 < 0) return false;

  // Roles of the GEMMs: ff1 has the activation, ff2 reads ff1, in_proj has N = 3·out_proj's N.
  const Node *g_in = nullptr, *g_out = nullptr, *g_ff1 = nullptr, *g_ff2 = nullptr;
  for (int i : region) {
    const Node& n = g.nodes[size_t(i)];
    if (n.op != "FusedGemm") continue;
    const std::string act = n.attr_s("activation", "none");
    if (act != "none") {
      if (g_ff1 || (act != "relu" && act != "gelu")) return false;
      g_ff1 = &n;
      L.gelu = act == "gelu";
    }
  }
  if (!g_ff1) return false;
  for (int i : region) {
    const Node& n = g.nodes[size_t(i)];
    if (n.op != "FusedGemm" || &n == g_ff1) continue;
    if (n.inputs[0] == g_ff1->outputs[0]) g_ff2 = &n;
  }
  if (!g_ff2) return false;
  int64_t nn = 0, kk = 0, n2 = 0, k2 = 0;
  for (int i : region) {
    const Node& n = g.nodes[size_t(i)];
    if (n.op != "FusedGemm" || &n == g_ff1 || &n == g_ff2) continue;
    std::vector<float> w;
    if (!gemm_weights(g, n, &w, &nn, &kk)) return false;
    if (nn == 3 * kk) {
      if (g_in) return false;
      g_in = &n;
      L.w_in = std::move(w);
      L.d = kk;
    } else {
      if (g_out) return false;
      g_out = &n;
      L.w_out = std::move(w);
    }
  }
  if (!g_in || !g_out || L.d <= 0) return false;
  if (!gemm_weights(g, *g_out, &L.w_out, &nn, &kk) || nn != L.d || kk != L.d) return false;
  if (!gemm_weights(g, *g_ff1, &L.w1, &nn, &kk) || kk != L.d) return false;
  L.ff = nn;
  if (!gemm_weights(g, *g_ff2, &L.w2, &n2, &k2) || n2 != L.d || k2 != L.ff) return false;
  if (!vec_or(g, *g_in, 2, 3 * L.d, 0.f, &L.b_in) || !vec_or(g, *g_out, 2, L.d, 0.f, &L.b_out) ||
      !vec_or(g, *g_ff1, 2, L.ff, 0.f, &L.b1) || !vec_or(g, *g_ff2, 2, L.d, 0.f, &L.b2))
    return false;
  const Node& ln1 = g.nodes[size_t(iln1)];
  const Node& ln2 = g.nodes[size_t(iln2)];
  for (const Node* ln : {&ln1, &ln2}) {
    const int64_t ax = ln->attr_i("axis", -1);
    if (ax != -1 && ax != 2) return false;
    for (size_t o = 1; o < ln->outputs.size(); ++o)
      if (ln->outputs[o] != kNoValue && (!users[size_t(ln->outputs[o])].empty() || passes::is_graph_output(g, ln->outputs[o])))
        return false;
  }
  if (!vec_or(g, ln1, 1, L.d, 1.f, &L.s1) || !vec_or(g, ln1, 2, L.d, 0.f, &L.c1) || !vec_or(g, ln2, 1, L.d, 1.f, &L.s2) ||
      !vec_or(g, ln2, 2, L.d, 0.f, &L.c2))
    return false;
  L.eps1 = ln1.attr_f("epsilon", 1e-5f);
  L.eps2 = ln2.attr_f("epsilon", 1e-5f);
  if (fused_attn) L.scale = only_op(g, region, "FusedAttention")->attr_f("scale", 1.f);

  // The input projection: a FusedGemm without activation making X, read only by the layer.
  int ipre = producer(g, x);
  ValueId xin = x;
  if (ipre >= 0) {
    const Node& pre = g.nodes[size_t(ipre)];
    std::vector<float> w;
    int64_t pn = 0, pk = 0;
    bool only_layer = !passes::is_graph_output(g, x);
    for (int u : users[size_t(x)]) only_layer = only_layer && in_region.count(u);
    if (pre.op == "FusedGemm" && pre.attr_s("activation", "none") == "none" && only_layer && gemm_weights(g, pre, &w, &pn, &pk) &&
        pn == L.d && !is_const(g, pre.inputs[0]) && vec_or(g, pre, 2, L.d, 0.f, &L.b_pre)) {
      const Value& pin = g.value(pre.inputs[0]);
      if (pin.rank_known && pin.shape.size() == 3 && pin.dtype == DType::kF32) {
        L.w_pre = std::move(w);
        L.pre_k = pk;
      }
    }
  }
  std::vector<int> probe_region = region;
  if (L.pre_k) {
    probe_region.push_back(ipre);
    std::sort(probe_region.begin(), probe_region.end());
    xin = g.nodes[size_t(ipre)].inputs[0];
  }
  int64_t heads = prove(g, probe_region, xin, y, L, L.causal ? &mask : nullptr);
  if (heads == 0 && L.pre_k) {  // try without the projection
    L.pre_k = 0;
    xin = x;
    probe_region = region;
    heads = prove(g, region, x, y, L, L.causal ? &mask : nullptr);
  }
  if (heads == 0) {
    log.lines.push_back("fuse_encoder: kept the layers ending at " + ln2.name + ": the region does not compute the encoder layer");
    return false;
  }
  auto make_node = [&](int64_t nh) {
    Node f;
    f.name = ln2.name + "/encoder";
    f.op = "TransformerEncoderLayer";
    auto in2 = [](const Node& n) { return n.inputs.size() > 2 ? n.inputs[2] : kNoValue; };
    auto ln_in = [](const Node& n, size_t i) { return n.inputs.size() > i ? n.inputs[i] : kNoValue; };
    f.inputs = {xin,           g_in->inputs[1],  in2(*g_in),  g_out->inputs[1], in2(*g_out), ln_in(ln1, 1), ln_in(ln1, 2),
                g_ff1->inputs[1], in2(*g_ff1), g_ff2->inputs[1], in2(*g_ff2), ln_in(ln2, 1), ln_in(ln2, 2)};
    f.attrs["trans_b_in"] = g_in->attr_i("trans_b", 0);
    f.attrs["trans_b_out"] = g_out->attr_i("trans_b", 0);
    f.attrs["trans_b_ff1"] = g_ff1->attr_i("trans_b", 0);
    f.attrs["trans_b_ff2"] = g_ff2->attr_i("trans_b", 0);
    if (L.pre_k) {
      const Node& pre = g.nodes[size_t(ipre)];
      f.inputs.push_back(pre.inputs[1]);
      f.inputs.push_back(in2(pre));
      f.attrs["trans_b_pre"] = pre.attr_i("trans_b", 0);
    }
    f.outputs = {y};
    f.attrs["heads"] = nh;
    f.attrs["scale"] = L.scale != 0.f ? L.scale : float(1.0 / std::sqrt(double(L.d / nh)));
    f.attrs["norm_first"] = int64_t(L.norm_first);
    f.attrs["causal"] = int64_t(L.causal);
    f.attrs["epsilon1"] = L.eps1;
    f.attrs["epsilon2"] = L.eps2;
    f.attrs["activation"] = std::string(L.gelu ? "gelu" : "relu");
    f.attrs["max_seq"] = max_seq;
    for (int i : probe_region) f.fused_from.push_back(g.nodes[size_t(i)].name);
    return f;
  };
  Node f = make_node(heads);
  if (!backend_runs(f) && L.pre_k) {
    // The backend may refuse the input projection alone (its K): the layer without it, proved
    // again on its own.
    L.pre_k = 0;
    xin = x;
    probe_region = region;
    if (prove(g, region, x, y, L, L.causal ? &mask : nullptr) == heads) f = make_node(heads);
  }
  if (!backend_runs(f)) {
    log.lines.push_back("fuse_encoder: kept the layers ending at " + ln2.name + ": the backend does not run the fused layer (" +
                        std::to_string(heads) + " heads, d " + std::to_string(L.d) + ", FF " + std::to_string(L.ff) +
                        ", seq up to " + std::to_string(max_seq) + ")");
    return false;
  }
  const std::set<std::string> names = L.causal ? mask_names(g, mask) : std::set<std::string>{};
  for (int i : probe_region)
    if (size_t(i) != i2) g.nodes[size_t(i)].op.clear();
  Node tail = f;
  std::vector<int> head_nodes;
  if (fold_head(g, users, &tail, &head_nodes) && backend_runs(tail)) {
    f = std::move(tail);
    for (int i : head_nodes) g.nodes[size_t(i)].op.clear();
  }
  log.lines.push_back(passes::fusion_line(f));
  g.nodes[i2] = std::move(f);
  passes::erase_absorbed(g);
  if (L.causal) drop_unread(g, names);
  return true;
}

// rows_needed = 1 on each fused layer whose output only a last-step Gather (axis 1, index −1)
// reads, where no head was folded after it: the backend may compute that row only (the CPU
// kernel does; the CUDA kernels ignore the hint and compute every row). The output keeps its
// shape [B, T, D].
void mark_rows_needed(Graph& g, PassLog& log) {
  const auto users = passes::consumers(g);
  for (Node& n : g.nodes) {
    if (n.op != "TransformerEncoderLayer" || n.has_attr("head_activation") || n.outputs.size() != 1) continue;
    const ValueId y = n.outputs[0];
    if (passes::is_graph_output(g, y) || users[size_t(y)].empty()) continue;
    bool last_only = true;
    for (int u : users[size_t(y)]) {
      const Node& ga = g.nodes[size_t(u)];
      const bool gather = ga.op == "Gather" && ga.inputs.size() == 2 && ga.inputs[0] == y &&
                          (ga.attr_i("axis", 0) == 1 || ga.attr_i("axis", 0) == -2) && is_const(g, ga.inputs[1]) &&
                          g.value(ga.inputs[1]).numel() == 1 && constant_as_i64(g.value(ga.inputs[1])) == std::vector<int64_t>{-1};
      last_only = last_only && gather;
    }
    if (!last_only) continue;
    n.attrs["rows_needed"] = int64_t(1);
    log.lines.push_back("fuse_encoder: " + n.name + " computes its last row only (a last-step Gather reads it)");
  }
}

}  // namespace

int fuse_encoder(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs, int64_t max_seq) {
  int count = 0;
  std::set<std::string> tried;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
      // Post-norm layers end at a LayerNormalization, pre-norm ones at an f32 Add.
      const bool anchor = g.nodes[i].op == "LayerNormalization" || is_f32_op(g, int(i), "Add");
      if (!anchor || !tried.insert(g.nodes[i].name).second) continue;
      if (try_layer(g, i, log, backend_runs, max_seq)) {
        ++count;
        again = true;
      }
    }
  }
  if (count) mark_rows_needed(g, log);
  return count;
}

}  // namespace ts::engine
