// TransformerEncoderLayer nodes (passes/fuse_encoder.cpp) on the device: the weights packed
// once when the kernel is made, one launch of a fused layer per node. FP16 plans: fp16 [N][K]
// in mma fragment order, cuda_encoder.cu. FP32 plans (and TF32 ones, a hand-made plan: the
// builder fuses FP32 plans without TF32 only): fp32 [K][N], cuda_encoder_f32.cu, strict FP32.
// Both kernels run every shape encoder_check() accepts, so one check serves both precisions.
// BF16 plans keep the layers (the builder does not fuse them; a hand-made one is refused).
#include <cuda_fp16.h>

#include "engine/backends/cuda/cuda_encoder.h"
#include "engine/backends/cuda/cuda_encoder_f32.h"
#include "engine/backends/cuda/cuda_ops.h"

namespace ts::engine::cuda {
namespace {

// Inputs: X, W_in, b_in, W_out, b_out, ln1 s, ln1 b, W1, b1, W2, b2, ln2 s, ln2 b[, W_pre, b_pre
// (absent: no input projection)[, W_head, b_head]].
enum EncIn : size_t { kX = 0, kWIn, kBIn, kWOut, kBOut, kS1, kC1, kW1, kB1, kW2, kB2, kS2, kC2, kWPre, kBPre, kWHead, kBHead, kInCount };

struct Weight {
  std::vector<float> nk;  // [n][k]
  int64_t n = 0, k = 0;
};

bool const_matrix(const Graph& g, const Node& node, size_t i, const char* trans_attr, Weight* w) {
  if (i >= node.inputs.size() || !is_const(g, node.inputs[i]) || !const_f32(g, node.inputs[i])) return false;
  auto d = g.value(node.inputs[i]).const_dims();
  if (d.size() != 2) return false;
  const bool tb = node.attr_i(trans_attr, 0) != 0;
  w->n = tb ? d[0] : d[1];
  w->k = tb ? d[1] : d[0];
  const float* p = const_f32(g, node.inputs[i]);
  w->nk.assign(size_t(w->n * w->k), 0.f);
  for (int64_t r = 0; r < w->n; ++r)
    for (int64_t c = 0; c < w->k; ++c) w->nk[size_t(r * w->k + c)] = tb ? p[r * w->k + c] : p[c * w->n + r];
  return true;
}

// A constant f32 vector of `len` (absent → `fill`); false when present and not that.
bool const_vec(const Graph& g, const Node& node, size_t i, int64_t len, float fill, std::vector<float>* out) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) {
    out->assign(size_t(len), fill);
    return true;
  }
  const float* p = const_f32(g, node.inputs[i]);
  if (!p || g.value(node.inputs[i]).numel() != len) return false;
  out->assign(p, p + len);
  return true;
}

struct EncoderWeights {
  Weight in, out, ff1, ff2, pre, head;
  std::vector<float> b_in, b_out, s1, c1, b1, b2, s2, c2, b_pre, b_head;
  bool has_pre = false, has_head = false;
};

Status read_weights(const Graph& g, const Node& n, EncoderWeights* w) {
  const int64_t heads = n.attr_i("heads", 0);
  if (n.inputs.size() != kWPre && n.inputs.size() != kWHead && n.inputs.size() != kInCount) {
    return unsupported(n, "needs 13, 15 or 17 inputs");
  }
  if (!const_matrix(g, n, kWIn, "trans_b_in", &w->in) || !const_matrix(g, n, kWOut, "trans_b_out", &w->out) ||
      !const_matrix(g, n, kW1, "trans_b_ff1", &w->ff1) || !const_matrix(g, n, kW2, "trans_b_ff2", &w->ff2)) {
    return unsupported(n, "needs constant f32 2-D weights");
  }
  const int64_t d = w->in.k;
  if (w->in.n != 3 * d || w->out.n != d || w->out.k != d || w->ff1.k != d || w->ff2.n != d || w->ff2.k != w->ff1.n) {
    return unsupported(n, "has weights that are not one encoder layer's ([3D, D], [D, D], [FF, D], [D, FF])");
  }
  const int64_t ff = w->ff1.n;
  if (!const_vec(g, n, kBIn, 3 * d, 0.f, &w->b_in) || !const_vec(g, n, kBOut, d, 0.f, &w->b_out) ||
      !const_vec(g, n, kS1, d, 1.f, &w->s1) || !const_vec(g, n, kC1, d, 0.f, &w->c1) || !const_vec(g, n, kB1, ff, 0.f, &w->b1) ||
      !const_vec(g, n, kB2, d, 0.f, &w->b2) || !const_vec(g, n, kS2, d, 1.f, &w->s2) || !const_vec(g, n, kC2, d, 0.f, &w->c2)) {
    return unsupported(n, "needs constant f32 biases and LayerNorm parameters of d_model (or FF) values");
  }
  w->has_pre = n.inputs.size() > kWPre && n.inputs[kWPre] != kNoValue;
  w->has_head = n.inputs.size() == kInCount;
  if (w->has_head) {
    if (!const_matrix(g, n, kWHead, "head_trans_b", &w->head) || w->head.k != d || w->head.n < 1 || w->head.n > kEncoderMaxHead) {
      return unsupported(n, "has a head that is not [N <= " + std::to_string(kEncoderMaxHead) + ", " + std::to_string(d) + "]");
    }
    if (!const_vec(g, n, kBHead, w->head.n, 0.f, &w->b_head)) return unsupported(n, "has a head bias that is not N values");
    const std::string act = n.attr_s("head_activation", "none");
    if (act != "none" && act != "sigmoid") return unsupported(n, "has head activation '" + act + "' (none or sigmoid)");
  }
  if (w->has_pre) {
    if (!const_matrix(g, n, kWPre, "trans_b_pre", &w->pre) || w->pre.n != d) {
      return unsupported(n, "has an input projection that is not [" + std::to_string(d) + ", K]");
    }
    if (!const_vec(g, n, kBPre, d, 0.f, &w->b_pre)) return unsupported(n, "has an input projection bias that is not D values");
  }
  Status s = encoder_check(d, heads, n.attr_i("max_seq", 1), ff, w->has_pre ? w->pre.k : 0);
  if (!s) return unsupported(n, s.message());
  return Status::ok();
}

Status check_encoder(const Graph& g, const Node& n) {
  const std::string act = n.attr_s("activation", "");
  if (act != "relu" && act != "gelu") return unsupported(n, "activation '" + act + "' is not relu or gelu");
  const int64_t max_seq = n.attr_i("max_seq", -1);
  if (max_seq < 1 || max_seq > kEncoderMaxSeq) {
    return unsupported(n, "allows sequences up to " + std::to_string(max_seq) + " (the cuda fused encoder layer runs 1.." +
                              std::to_string(kEncoderMaxSeq) + ")");
  }
  EncoderWeights w;
  return read_weights(g, n, &w);
}

// What the FP16 and the FP32 layer share: the node's attributes, the fp32 parameters (biases,
// LayerNorms, the head) at offsets into one fp32 buffer, X's checks and the output's binding.
class EncoderKernelBase : public CudaKernel {
 public:
  bool reads_input(size_t i) const override { return i == kX; }

 protected:
  Status init_layer(const Graph& g, const Node& n, EncoderWeights* w) {
    TS_RETURN_IF_ERROR(read_weights(g, n, w));
    ff_ = int(w->ff1.n);
    d_ = int(w->in.k);
    head_dim_ = d_ / int(n.attr_i("heads", 1));
    pre_k_ = w->has_pre ? int(w->pre.k) : 0;
    scale_ = n.attr_f("scale", 1.f);
    eps1_ = n.attr_f("epsilon1", 1e-5f);
    eps2_ = n.attr_f("epsilon2", 1e-5f);
    gelu_ = n.attr_s("activation", "relu") == "gelu";
    norm_first_ = n.attr_i("norm_first", 0) != 0;
    causal_ = n.attr_i("causal", 0) != 0;
    head_n_ = w->has_head ? int(w->head.n) : 0;
    head_sigmoid_ = n.attr_s("head_activation", "none") == "sigmoid";
    return Status::ok();
  }

  // Appends v to f, 16-byte aligned (the kernels read float2 / float4), and returns its offset.
  static size_t put(std::vector<float>& f, const std::vector<float>& v) {
    const size_t at = f.size();
    f.insert(f.end(), v.begin(), v.end());
    while (f.size() % 4) f.push_back(0.f);
    return at;
  }

  // The fp32 parameters into f.
  void put_params(std::vector<float>& f, const EncoderWeights& w) {
    o_bin_ = put(f, w.b_in);
    o_bout_ = put(f, w.b_out);
    o_s1_ = put(f, w.s1);
    o_c1_ = put(f, w.c1);
    o_b1_ = put(f, w.b1);
    o_b2_ = put(f, w.b2);
    o_s2_ = put(f, w.s2);
    o_c2_ = put(f, w.c2);
    o_bpre_ = w.has_pre ? put(f, w.b_pre) : 0;
    o_whead_ = w.has_head ? put(f, w.head.nk) : 0;
    o_bhead_ = w.has_head ? put(f, w.b_head) : 0;
  }

  // X checked; p's shapes, fp32 parameters (from f, put_params' buffer) and output bound (Y, or
  // the head's [batch, N]). The weights are the caller's.
  template <class P>
  Status bind(const CudaArgs& a, const float* f, P& p) const {
    const DevTensor* x = a.input(kX);
    TS_RETURN_IF_ERROR(need_device(x, "X"));
    if (x->dtype != DType::kF32) return bad_input("X must be f32, got " + std::string(dtype_name(x->dtype)));
    const int64_t k = pre_k_ ? pre_k_ : d_;
    if (x->dims.size() != 3 || x->dims[2] != k) {
      return bad_input("X " + dims_str(x->dims) + " must be [batch, seq, " + std::to_string(k) + "]");
    }
    p.batch = int(x->dims[0]);
    p.t_len = int(x->dims[1]);
    p.ff = ff_;
    p.pre_k = pre_k_;
    p.d_model = d_;
    p.head_dim = head_dim_;
    p.x = x->as<float>();
    p.b_in = f + o_bin_;
    p.b_out = f + o_bout_;
    p.ln1_s = f + o_s1_;
    p.ln1_b = f + o_c1_;
    p.b_ff1 = f + o_b1_;
    p.b_ff2 = f + o_b2_;
    p.ln2_s = f + o_s2_;
    p.ln2_b = f + o_c2_;
    p.b_pre = pre_k_ ? f + o_bpre_ : nullptr;
    p.eps1 = eps1_;
    p.eps2 = eps2_;
    p.scale = scale_;
    p.gelu = gelu_;
    p.norm_first = norm_first_;
    p.causal = causal_;
    TS_RETURN_IF_ERROR(encoder_check(d_, d_ / head_dim_, p.t_len, p.ff, p.pre_k));
    DevTensor& y = *a.out[0];
    if (head_n_) {
      TS_RETURN_IF_ERROR(a.env->alloc(y, DType::kF32, std::vector<int64_t>{x->dims[0], head_n_}));
      p.head_w = f + o_whead_;
      p.head_b = f + o_bhead_;
      p.head_n = head_n_;
      p.head_sigmoid = head_sigmoid_;
      p.head_out = y.as<float>();
    } else {
      TS_RETURN_IF_ERROR(a.env->alloc(y, DType::kF32, std::vector<int64_t>{x->dims[0], x->dims[1], d_}));
      p.y = y.as<float>();
    }
    return Status::ok();
  }

  size_t o_bin_ = 0, o_bout_ = 0, o_s1_ = 0, o_c1_ = 0, o_b1_ = 0, o_b2_ = 0, o_s2_ = 0, o_c2_ = 0, o_bpre_ = 0;
  size_t o_whead_ = 0, o_bhead_ = 0;
  int ff_ = 0, pre_k_ = 0, head_n_ = 0, d_ = 64, head_dim_ = 16;
  bool head_sigmoid_ = false;
  float scale_ = 1.f, eps1_ = 1e-5f, eps2_ = 1e-5f;
  bool gelu_ = false, norm_first_ = false, causal_ = false;
};

// The FP16 layer: fp16 weights in mma fragment order (w16_), the fp32 parameters (f32_).
class EncoderKernel final : public EncoderKernelBase {
 public:
  int64_t weight_bytes() const override { return int64_t(w16_.bytes() + f32_.bytes()); }

  Status init(const Graph& g, const Node& n) {
    EncoderWeights w;
    TS_RETURN_IF_ERROR(init_layer(g, n, &w));
    // fp16 weights in fragment order back to back: in, out, ff1, ff2, pre (each a multiple of
    // 256 halves: 16-byte aligned for the kernel's uint4 loads).
    std::vector<__half> h;
    auto put_h = [&h](const Weight& m, int k_pad) {
      const size_t at = h.size();
      const std::vector<__half> packed = encoder_pack_weight(m.nk.data(), int(m.n), int(m.k), k_pad);
      h.insert(h.end(), packed.begin(), packed.end());
      return at;
    };
    off_in_ = put_h(w.in, 0);
    off_out_ = put_h(w.out, 0);
    off_ff1_ = put_h(w.ff1, 0);
    off_ff2_ = put_h(w.ff2, 0);
    // K zero-padded to a multiple of 16 (the kernel stages x with zero columns).
    if (w.has_pre) off_pre_ = put_h(w.pre, int((w.pre.k + 15) / 16 * 16));
    std::vector<float> f;
    put_params(f, w);
    TS_RETURN_IF_ERROR(w16_.upload(h.data(), h.size() * sizeof(__half)));
    return f32_.upload(f.data(), f.size() * sizeof(float));
  }

  Status launch(const CudaArgs& a) const override {
    EncoderParams p;
    TS_RETURN_IF_ERROR(bind(a, f32_.as<float>(), p));
    const __half* w = w16_.as<__half>();
    p.w_in = w + off_in_;
    p.w_out = w + off_out_;
    p.w_ff1 = w + off_ff1_;
    p.w_ff2 = w + off_ff2_;
    p.w_pre = pre_k_ ? w + off_pre_ : nullptr;
    return launch_encoder_layer(p, a.stream);
  }

 private:
  DeviceBuffer w16_, f32_;
  size_t off_in_ = 0, off_out_ = 0, off_ff1_ = 0, off_ff2_ = 0, off_pre_ = 0;
};

// The FP32 layer: the weights as fp32 [K][N] (encoder_f32_pack_weight) and the fp32 parameters,
// one buffer.
class EncoderF32Kernel final : public EncoderKernelBase {
 public:
  int64_t weight_bytes() const override { return int64_t(f32_.bytes()); }

  Status init(const Graph& g, const Node& n) {
    EncoderWeights w;
    TS_RETURN_IF_ERROR(init_layer(g, n, &w));
    std::vector<float> f;
    auto put_t = [&f](const Weight& m, int64_t k_pad) {
      return put(f, encoder_f32_pack_weight(m.nk.data(), int(m.n), int(m.k), int(k_pad)));
    };
    o_win_ = put_t(w.in, 0);
    o_wout_ = put_t(w.out, 0);
    o_w1_ = put_t(w.ff1, 0);
    o_w2_ = put_t(w.ff2, 0);
    o_wpre_ = w.has_pre ? put_t(w.pre, (w.pre.k + 3) / 4 * 4) : 0;  // K zero-padded to 4 (the kernel stages x so)
    put_params(f, w);
    return f32_.upload(f.data(), f.size() * sizeof(float));
  }

  Status launch(const CudaArgs& a) const override {
    const float* f = f32_.as<float>();
    EncoderF32Params p;
    TS_RETURN_IF_ERROR(bind(a, f, p));
    p.w_in = f + o_win_;
    p.w_out = f + o_wout_;
    p.w_ff1 = f + o_w1_;
    p.w_ff2 = f + o_w2_;
    p.w_pre = pre_k_ ? f + o_wpre_ : nullptr;
    if (const size_t bytes = encoder_f32_scratch_bytes(p)) {
      auto s = a.env->scratch(bytes);
      if (!s) return s.status();
      p.scratch = static_cast<float*>(s.value());
    }
    return launch_encoder_layer_f32(p, a.stream);
  }

 private:
  DeviceBuffer f32_;
  size_t o_win_ = 0, o_wout_ = 0, o_w1_ = 0, o_w2_ = 0, o_wpre_ = 0;
};

}  // namespace

void add_encoder_ops(std::vector<CudaOpInfo>& ops) {
  ops.push_back({"TransformerEncoderLayer", check_encoder,
                 [](const Graph& g, const Node& n, CudaMath m, const std::string&) -> Result<CudaKernelPtr> {
                   if (m == CudaMath::kFP32 || m == CudaMath::kTF32) {
                     auto k = std::make_unique<EncoderF32Kernel>();
                     TS_RETURN_IF_ERROR(k->init(g, n));
                     return CudaKernelPtr(std::move(k));
                   }
                   if (m != CudaMath::kFP16) {
                     return unsupported(n, "runs in FP16 or FP32 on the cuda backend (build the plan with one of those, or keep the layers)");
                   }
                   auto k = std::make_unique<EncoderKernel>();
                   TS_RETURN_IF_ERROR(k->init(g, n));
                   return CudaKernelPtr(std::move(k));
                 },
                 {"fused"}});
}

}  // namespace ts::engine::cuda
