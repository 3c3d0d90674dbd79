// TransformerEncoderLayer nodes (passes/fuse_encoder.cpp) on the CPU, FP32: one kernel per layer
// instead of PyTorch's exported GEMMs, attention and the Shape/Gather/Reshape/Transpose chains
// that split and merge the heads at every call. Inputs: X, W_in, b_in, W_out, b_out, ln1 s,
// ln1 b, W1, b1, W2, b2, ln2 s, ln2 b[, W_pre, b_pre (absent: no input projection)[, W_head,
// b_head]]. Two tactics, timed by the builder: "avx2" (the weights packed once into cpu_gemm.h
// panels, biases and the FF activation in the GEMM epilogue) and "onednn" (oneDNN matmuls with
// the activation as a post-op, cpu_const_gemm.h); the rest of the layer is the same code.
//
// A run takes the batch a few sequences at a time (kChunkRows rows of [T, D]) so that the
// chunk's activations stay in L2 between the steps: the input projection, LN₁ (pre-norm), the
// QKV GEMM, per sequence and head the AVX2 attention of cpu_attention.cpp (causal rows see keys
// up to their own position), out-projection + residual, LN, FF1 (+ReLU/GELU), FF2 + residual, LN.
// Where the model's head was folded (the last step → Linear [→ Sigmoid]), only the last query row
// of each sequence goes past the K/V projection: attention, out-projection, FF and the head run
// for one row per sequence. The same for the last `rows_needed` rows where fuse_encoder found
// that nothing reads the others (a last-step Gather without a head); those are not written.
#include <algorithm>
#include <cstring>
#include <optional>

#include "engine/backends/cpu/cpu_const_gemm.h"
#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"
#include "engine/backends/cpu/cpu_layers.h"
#include "engine/backends/cpu/cpu_math.h"
#include "engine/passes/encoder_region.h"

namespace ts::engine::cpu {
namespace {

enum EncIn : size_t {
  kX = 0,
  kWIn,
  kBIn,
  kWOut,
  kBOut,
  kS1,
  kC1,
  kW1,
  kB1,
  kW2,
  kB2,
  kS2,
  kC2,
  kWPre,
  kBPre,
  kWHead,
  kBHead,
  kInCount
};

// Rows of [T, D] activations per chunk (whole sequences, at least one).
constexpr int64_t kChunkRows = 128;

// A constant f32 matrix input (with its bias) as a GEMM of the chosen tactic ([K, N], transposed
// when the FusedGemm had trans_b); nothing when it is not one.
std::optional<ConstGemm> const_gemm(const Graph& g, const Node& n, size_t wi, size_t bi, const char* trans_attr, Act act,
                                    bool onednn) {
  if (wi >= n.inputs.size() || !is_const(g, n.inputs[wi]) || g.value(n.inputs[wi]).dtype != DType::kF32) return std::nullopt;
  const auto d = g.value(n.inputs[wi]).const_dims();
  if (d.size() != 2) return std::nullopt;
  const bool tb = n.attr_i(trans_attr, 0) != 0;
  const int64_t nn = tb ? d[0] : d[1], kk = tb ? d[1] : d[0];
  const float* bias = nullptr;
  if (bi < n.inputs.size() && n.inputs[bi] != kNoValue) {
    const Value& b = g.value(n.inputs[bi]);
    if (!b.is_constant || b.dtype != DType::kF32 || b.numel() != nn) return std::nullopt;
    bias = b.as<float>();
  }
  return ConstGemm(g.value(n.inputs[wi]).as<float>(), kk, nn, tb, bias, act, onednn);
}

enum Gemm : size_t { kGPre = 0, kGIn, kGOut, kGFf1, kGFf2, kGHead, kGemmCount };

struct EncoderLayer {
  std::optional<ConstGemm> gemm[kGemmCount];  // pre and head absent when the node has none
  std::vector<float> s1, c1, s2, c2;
  int64_t d = 0, ff = 0, heads = 1, pre_k = 0, head_n = 0, rows_needed = 0;
  float scale = 1.f, eps1 = 1e-5f, eps2 = 1e-5f;
  bool norm_first = false, causal = false;
};

// The node's layer; onednn: the GEMMs' tactic (weights reordered for oneDNN, else packed into
// AVX2 panels).
Status read_layer(const Graph& g, const Node& n, bool onednn, EncoderLayer* L) {
  if (n.inputs.size() != kWPre && n.inputs.size() != kWHead && n.inputs.size() != kInCount) {
    return unsupported(n, "needs 13, 15 or 17 inputs");
  }
  if (!cpu_has_avx2_fma()) return unsupported(n, "needs AVX2 and FMA on the cpu backend (this CPU keeps the layers)");
  const std::string act = n.attr_s("activation", "");
  if (act != "relu" && act != "gelu") return unsupported(n, "activation '" + act + "' is not relu or gelu");
  auto& G = L->gemm;
  G[kGIn] = const_gemm(g, n, kWIn, kBIn, "trans_b_in", Act::kNone, onednn);
  G[kGOut] = const_gemm(g, n, kWOut, kBOut, "trans_b_out", Act::kNone, onednn);
  G[kGFf1] = const_gemm(g, n, kW1, kB1, "trans_b_ff1", act == "gelu" ? Act::kGelu : Act::kRelu, onednn);
  G[kGFf2] = const_gemm(g, n, kW2, kB2, "trans_b_ff2", Act::kNone, onednn);
  if (!G[kGIn] || !G[kGOut] || !G[kGFf1] || !G[kGFf2]) {
    return unsupported(n, "needs constant f32 2-D weights and biases of their widths");
  }
  const int64_t d = G[kGIn]->k();
  L->d = d;
  L->ff = G[kGFf1]->n();
  if (G[kGIn]->n() != 3 * d || G[kGOut]->n() != d || G[kGOut]->k() != d || G[kGFf1]->k() != d || G[kGFf2]->n() != d ||
      G[kGFf2]->k() != L->ff) {
    return unsupported(n, "has weights that are not one encoder layer's ([3D, D], [D, D], [FF, D], [D, FF])");
  }
  using encoder_region::vec_or;
  if (!vec_or(g, n, kS1, d, 1.f, &L->s1) || !vec_or(g, n, kC1, d, 0.f, &L->c1) || !vec_or(g, n, kS2, d, 1.f, &L->s2) ||
      !vec_or(g, n, kC2, d, 0.f, &L->c2)) {
    return unsupported(n, "needs constant f32 LayerNorm parameters of d_model values");
  }
  L->heads = n.attr_i("heads", 0);
  if (L->heads < 1 || d % L->heads != 0)
    return unsupported(n, "heads=" + std::to_string(L->heads) + " does not divide d_model " + std::to_string(d));
  if (n.inputs.size() > kWPre && n.inputs[kWPre] != kNoValue) {
    G[kGPre] = const_gemm(g, n, kWPre, kBPre, "trans_b_pre", Act::kNone, onednn);
    if (!G[kGPre] || G[kGPre]->n() != d)
      return unsupported(n, "has an input projection that is not [" + std::to_string(d) + ", K]");
    L->pre_k = G[kGPre]->k();
  }
  if (n.inputs.size() == kInCount) {
    const std::string ha = n.attr_s("head_activation", "none");
    if (ha != "none" && ha != "sigmoid") return unsupported(n, "has head activation '" + ha + "' (none or sigmoid)");
    G[kGHead] = const_gemm(g, n, kWHead, kBHead, "head_trans_b", ha == "sigmoid" ? Act::kSigmoid : Act::kNone, onednn);
    if (!G[kGHead] || G[kGHead]->k() != d) return unsupported(n, "has a head that is not [N, " + std::to_string(d) + "]");
    L->head_n = G[kGHead]->n();
  }
  L->scale = n.attr_f("scale", 1.f);
  L->eps1 = n.attr_f("epsilon1", 1e-5f);
  L->eps2 = n.attr_f("epsilon2", 1e-5f);
  L->norm_first = n.attr_i("norm_first", 0) != 0;
  L->causal = n.attr_i("causal", 0) != 0;
  L->rows_needed = n.attr_i("rows_needed", 0);
  if (L->rows_needed < 0) return unsupported(n, "rows_needed must not be negative");
  return Status::ok();
}

// Per context: the oneDNN GEMMs' primitives (unused by the avx2 tactic).
struct EncoderState final : KernelState {
  DnnlGemmState gemm[kGemmCount];
};

void add_rows(float* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

class EncoderKernel final : public Kernel {
 public:
  explicit EncoderKernel(EncoderLayer L) : L_(std::move(L)) {}

  std::unique_ptr<KernelState> make_state() const override {
    try {
      return std::make_unique<EncoderState>();
    } catch (const dnnl::error&) {
      return nullptr;  // run() reports it
    }
  }

  Status run(const KernelArgs& a) const override {
    const RtTensor* x = a.input(kX);
    const int64_t k_in = L_.pre_k ? L_.pre_k : L_.d;
    if (!x || x->dtype != DType::kF32 || x->dims.size() != 3 || x->dims[2] != k_in) {
      return bad_input("X must be f32 [batch, seq, " + std::to_string(k_in) + "], got " +
                       (x ? dims_str(x->dims) : std::string("nothing")));
    }
    const int64_t nb = x->dims[0], t = x->dims[1], d = L_.d, ff = L_.ff, dh = d / L_.heads;
    RtTensor& y = *a.out[0];
    if (L_.head_n) {
      const int64_t od[2] = {nb, L_.head_n};
      y.ensure(DType::kF32, od);
    } else {
      const int64_t od[3] = {nb, t, d};
      y.ensure(DType::kF32, od);
    }
    if (nb == 0 || t == 0) return Status::ok();
    // Query rows per sequence past the K/V projection: the last one with the head folded, the
    // last rows_needed where only those are read (the rows before are not written), else all.
    const int64_t tq = L_.head_n ? 1 : L_.rows_needed > 0 ? std::min(t, L_.rows_needed) : t;
    const bool direct = !L_.head_n && tq == t;  // FF2 writes Y's rows in place
    const int64_t seqs = std::max<int64_t>(1, kChunkRows / t), rows = seqs * t, qrows = seqs * tq;
    const int64_t t8 = round_up8(t);
    // Scratch: h (projected input) [rows, D], xa (LN₁ pre-norm) [rows, D], qkv [rows, 3D], one
    // head's q, k, v, o [t, dh] and the attention's own, o [qrows, D], a, fa [qrows, D], f1 [qrows, FF],
    // f2 [qrows, D], the residual rows [qrows, D].
    const int64_t per_head = 4 * t * dh + (dh + 4) * t8;
    const size_t total = size_t(rows * (5 * d) + per_head + qrows * (5 * d + ff) + 64);
    float* base = static_cast<float*>(a.scratch->get(total * sizeof(float)));
    float* hbuf = base;
    float* xa = hbuf + rows * d;
    float* qkv = xa + rows * d;
    float* qh = qkv + rows * 3 * d;
    float* kh = qh + t * dh;
    float* vh = kh + t * dh;
    float* oh = vh + t * dh;
    float* att_scratch = oh + t * dh;
    float* o = att_scratch + (dh + 4) * t8;
    float* res = o + qrows * d;
    float* abuf = res + qrows * d;
    float* fa = abuf + qrows * d;
    float* f1 = fa + qrows * d;
    float* f2 = f1 + qrows * ff;
    const float* xp = x->as<float>();
    float* yp = y.as<float>();
    const float scale = L_.scale;
    auto* st = static_cast<EncoderState*>(a.state);
    if (!st) return Status(StatusCode::kInternal, "the encoder layer's oneDNN state could not be made");

    for (int64_t s0 = 0; s0 < nb; s0 += seqs) {
      const int64_t ns = std::min(seqs, nb - s0), r = ns * t, qr = ns * tq;
      const float* xin = xp + s0 * t * k_in;
      // h: the layer's input rows.
      const float* h = xin;
      if (L_.pre_k) {
        TS_RETURN_IF_ERROR(gemm(kGPre, xin, r, hbuf, st));
        h = hbuf;
      }
      const float* ain = h;
      if (L_.norm_first) {
        layer_norm_rows(h, xa, r, d, L_.s1.data(), L_.c1.data(), L_.eps1);
        ain = xa;
      }
      TS_RETURN_IF_ERROR(gemm(kGIn, ain, r, qkv, st));
      // Attention per sequence and head; the query rows past the K/V projection only.
      for (int64_t si = 0; si < ns; ++si) {
        const float* q0 = qkv + si * t * 3 * d;
        for (int64_t hd = 0; hd < L_.heads; ++hd) {
          for (int64_t i = 0; i < t; ++i) {
            std::memcpy(kh + i * dh, q0 + i * 3 * d + d + hd * dh, size_t(dh) * sizeof(float));
            std::memcpy(vh + i * dh, q0 + i * 3 * d + 2 * d + hd * dh, size_t(dh) * sizeof(float));
          }
          for (int64_t i = 0; i < tq; ++i) {
            std::memcpy(qh + i * dh, q0 + (t - tq + i) * 3 * d + hd * dh, size_t(dh) * sizeof(float));
          }
          attention_head_avx2(qh, kh, vh, oh, tq, t, dh, scale, L_.causal ? t - tq : -1, att_scratch);
          for (int64_t i = 0; i < tq; ++i) {
            std::memcpy(o + (si * tq + i) * d + hd * dh, oh + i * dh, size_t(dh) * sizeof(float));
          }
        }
        // The residual's rows: h at the query positions.
        std::memcpy(res + si * tq * d, h + (si * t + t - tq) * d, size_t(tq * d) * sizeof(float));
      }
      // a = x + out_proj(o); post-norm: a = LN₁(a).
      TS_RETURN_IF_ERROR(gemm(kGOut, o, qr, abuf, st));
      add_rows(abuf, res, qr * d);
      const float* ffin = abuf;
      if (L_.norm_first) {
        layer_norm_rows(abuf, fa, qr, d, L_.s2.data(), L_.c2.data(), L_.eps2);
        ffin = fa;
      } else {
        layer_norm_rows(abuf, abuf, qr, d, L_.s1.data(), L_.c1.data(), L_.eps1);
      }
      TS_RETURN_IF_ERROR(gemm(kGFf1, ffin, qr, f1, st));
      float* out_rows = direct ? yp + s0 * t * d : f2;
      TS_RETURN_IF_ERROR(gemm(kGFf2, f1, qr, out_rows, st));
      add_rows(out_rows, abuf, qr * d);
      if (!L_.norm_first) layer_norm_rows(out_rows, out_rows, qr, d, L_.s2.data(), L_.c2.data(), L_.eps2);
      if (L_.head_n) {
        TS_RETURN_IF_ERROR(gemm(kGHead, f2, qr, yp + s0 * L_.head_n, st));
      } else if (!direct) {
        for (int64_t si = 0; si < ns; ++si) {
          std::memcpy(yp + ((s0 + si) * t + t - tq) * d, f2 + si * tq * d, size_t(tq * d) * sizeof(float));
        }
      }
    }
    return Status::ok();
  }

 private:
  Status gemm(Gemm which, const float* a, int64_t m, float* c, EncoderState* st) const {
    return L_.gemm[which]->run(a, m, c, &st->gemm[which]);
  }

  EncoderLayer L_;
};

Status check_encoder(const Graph& g, const Node& n) {
  EncoderLayer L;
  return read_layer(g, n, false, &L);
}

Result<KernelPtr> make_encoder(const Graph& g, const Node& n, const std::string& tactic) {
  EncoderLayer L;
  TS_RETURN_IF_ERROR(read_layer(g, n, tactic == "onednn", &L));
  return KernelPtr(new EncoderKernel(std::move(L)));
}

}  // namespace

void add_encoder_ops(std::vector<OpInfo>& ops) {
  ops.push_back({"TransformerEncoderLayer", check_encoder, {"avx2", "onednn"}, make_encoder});
}

}  // namespace ts::engine::cpu
