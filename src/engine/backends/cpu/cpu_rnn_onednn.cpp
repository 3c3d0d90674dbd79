// GRU and LSTM on oneDNN's RNN primitives (tactic "onednn"): lbr_gru_forward for PyTorch's
// linear_before_reset=1 GRU, gru_forward for linear_before_reset=0, lstm_forward (with
// peepholes). The builder times this tactic against ticksentry's own "avx2_blocked" and
// "avx2_packed" at the profile's opt shape and keeps the fastest (bench/engine_rnn_bench
// compares them head to head).
//
// ONNX → oneDNN: gate order GRU z,r,h = u,r,o (same); LSTM i,o,f,c → i,f,c~,o; peepholes
// i,o,f → i,f,o. Weights are given as ldgoi (ONNX's [gates·hidden, input] rows) and reordered
// into the primitive's preferred layout. Bias per gate = Wb + Rb, except the LBR GRU's 4th
// bias row, which is Rbh (kept inside r ⊙ (...)). Y [T,1,B,H] / Y_h [1,B,H] are oneDNN's
// tnc / ldnc memory as is (layout 1: ntc).
// Per context (KernelState) one primitive and its reordered weights per (T, B) seen, so a
// repeated shape allocates nothing.
#include <map>
#include <memory>
#include <unordered_map>
#include <oneapi/dnnl/dnnl.hpp>

#include "engine/backends/cpu/cpu_rnn.h"
#include "engine/ir/rnn_weights.h"

namespace ts::engine::cpu {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

const dnnl::engine& rnn_engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

enum class Cell { kGru, kLbrGru, kLstm };

struct OnednnWeights {
  int64_t hidden = 0, input = 0, gates = 0, bias_gates = 0;
  std::vector<float> w, r, bias, peep;  // oneDNN gate order; w ldgoi [G][H][I], r [G][H][H]
};

struct ShapeState {
  dnnl::primitive prim;
  dnnl::memory wl, wi, bias, peep;  // in the primitive's layouts
  dnnl::memory::desc src_layer, src_iter, src_iter_c, dst_layer, dst_iter, dst_iter_c, scratch;
  std::vector<uint8_t> scratch_buf, y_buf, yh_buf, yc_buf;  // scratchpad; outputs not bound
  std::vector<float> zeros;                                 // omitted initial_h / initial_c
};

class OnednnRnnState final : public KernelState {
 public:
  std::map<std::pair<int64_t, int64_t>, ShapeState> shapes;  // (T, B)
  dnnl::stream stream{rnn_engine()};
};

class OnednnRnnKernel final : public Kernel {
 public:
  OnednnRnnKernel(OnednnWeights w, Cell cell, bool batch_major)
      : w_(std::move(w)), cell_(cell), batch_major_(batch_major) {}

  std::unique_ptr<KernelState> make_state() const override { return std::make_unique<OnednnRnnState>(); }

  Status run(const KernelArgs& a) const override {
    const RtTensor* x = a.input(0);
    if (!x || x->dtype != DType::kF32 || x->dims.size() != 3) return bad_input("X must be f32 of rank 3");
    const int64_t t_len = x->dims[batch_major_ ? 1 : 0], b = x->dims[batch_major_ ? 0 : 1], h = w_.hidden;
    if (x->dims[2] != w_.input) return bad_input("X shape " + dims_str(x->dims) + " does not match input_size " + std::to_string(w_.input));
    const RtTensor* h0 = a.input(5);
    const RtTensor* c0 = cell_ == Cell::kLstm ? a.input(6) : nullptr;
    if (h0 && (h0->dtype != DType::kF32 || h0->numel() != b * h)) return bad_input("initial_h must be f32 [1, batch, hidden]");
    if (c0 && (c0->dtype != DType::kF32 || c0->numel() != b * h)) return bad_input("initial_c must be f32 [1, batch, hidden]");
    auto* st = static_cast<OnednnRnnState*>(a.state);
    if (!st) return Status(StatusCode::kInternal, "onednn rnn: no kernel state");
    try {
      auto it = st->shapes.find({t_len, b});
      if (it == st->shapes.end()) it = st->shapes.emplace(std::make_pair(t_len, b), make_shape(t_len, b, st->stream)).first;
      ShapeState& s = it->second;
      const auto& eng = rnn_engine();
      RtTensor* y = a.out.size() > 0 ? a.out[0] : nullptr;
      RtTensor* yh = a.out.size() > 1 ? a.out[1] : nullptr;
      RtTensor* yc = cell_ == Cell::kLstm && a.out.size() > 2 ? a.out[2] : nullptr;
      const int64_t yd[4] = {t_len, 1, b, h}, yd_bm[4] = {b, t_len, 1, h};
      const int64_t sd[3] = {1, b, h}, sd_bm[3] = {b, 1, h};
      if (y) y->ensure(DType::kF32, batch_major_ ? yd_bm : yd);
      if (yh) yh->ensure(DType::kF32, batch_major_ ? sd_bm : sd);
      if (yc) yc->ensure(DType::kF32, batch_major_ ? sd_bm : sd);
      std::unordered_map<int, dnnl::memory> args = {
          {DNNL_ARG_SRC_LAYER, dnnl::memory(s.src_layer, eng, const_cast<uint8_t*>(x->data))},
          {DNNL_ARG_WEIGHTS_LAYER, s.wl},
          {DNNL_ARG_WEIGHTS_ITER, s.wi},
          {DNNL_ARG_BIAS, s.bias},
          {DNNL_ARG_DST_LAYER, dnnl::memory(s.dst_layer, eng, y ? y->data : s.y_buf.data())},
          {DNNL_ARG_DST_ITER, dnnl::memory(s.dst_iter, eng, yh ? yh->data : s.yh_buf.data())},
          {DNNL_ARG_SCRATCHPAD, dnnl::memory(s.scratch, eng, s.scratch_buf.data())}};
      if (h0) args[DNNL_ARG_SRC_ITER] = dnnl::memory(s.src_iter, eng, const_cast<uint8_t*>(h0->data));
      if (cell_ == Cell::kLstm) {
        args[DNNL_ARG_DST_ITER_C] = dnnl::memory(s.dst_iter_c, eng, yc ? yc->data : s.yc_buf.data());
        if (c0) args[DNNL_ARG_SRC_ITER_C] = dnnl::memory(s.src_iter_c, eng, const_cast<uint8_t*>(c0->data));
        if (!w_.peep.empty()) args[DNNL_ARG_WEIGHTS_PEEPHOLE] = s.peep;
      }
      // The primitive was made with initial-state memories, so an omitted one is given as zeros.
      if (!h0) args[DNNL_ARG_SRC_ITER] = dnnl::memory(s.src_iter, eng, s.zeros.data());
      if (cell_ == Cell::kLstm && !c0) args[DNNL_ARG_SRC_ITER_C] = dnnl::memory(s.src_iter_c, eng, s.zeros.data());
      s.prim.execute(st->stream, args);
      st->stream.wait();
    } catch (const dnnl::error& e) {
      return Status(StatusCode::kInternal, std::string("oneDNN RNN: ") + e.what() + " (status " + std::to_string(int(e.status)) + ")");
    }
    return Status::ok();
  }

 private:
  ShapeState make_shape(int64_t t_len, int64_t b, dnnl::stream& strm) const {
    const auto& eng = rnn_engine();
    const int64_t h = w_.hidden, in = w_.input, g = w_.gates;
    ShapeState s;
    const tag layer_tag = batch_major_ ? tag::ntc : tag::tnc;
    s.src_layer = dnnl::memory::desc({t_len, b, in}, dt::f32, layer_tag);
    s.dst_layer = dnnl::memory::desc({t_len, b, h}, dt::f32, layer_tag);
    s.src_iter = dnnl::memory::desc({1, 1, b, h}, dt::f32, tag::ldnc);
    s.dst_iter = s.src_iter;
    const dnnl::memory::desc wl_any({1, 1, in, g, h}, dt::f32, tag::any), wi_any({1, 1, h, g, h}, dt::f32, tag::any);
    const dnnl::memory::desc bias_md({1, 1, w_.bias_gates, h}, dt::f32, tag::ldgo);
    const auto fwd = dnnl::prop_kind::forward_inference;
    const auto dir = dnnl::rnn_direction::unidirectional_left2right;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::memory::desc wl_md, wi_md, scratch_md;
    if (cell_ == Cell::kLstm) {
      s.src_iter_c = s.src_iter;
      s.dst_iter_c = s.src_iter;
      const dnnl::memory::desc peep_md = w_.peep.empty() ? dnnl::memory::desc() : dnnl::memory::desc({1, 1, 3, h}, dt::f32, tag::ldgo);
      dnnl::lstm_forward::desc d(fwd, dir, s.src_layer, s.src_iter, s.src_iter_c, wl_any, wi_any, peep_md, bias_md,
                                 s.dst_layer, s.dst_iter, s.dst_iter_c);
      dnnl::lstm_forward::primitive_desc pd(d, attr, eng);
      wl_md = pd.weights_layer_desc();
      wi_md = pd.weights_iter_desc();
      scratch_md = pd.scratchpad_desc();
      s.prim = dnnl::lstm_forward(pd);
      if (!w_.peep.empty()) s.peep = dnnl::memory(pd.weights_peephole_desc(), eng, const_cast<float*>(w_.peep.data()));
    } else if (cell_ == Cell::kLbrGru) {
      dnnl::lbr_gru_forward::desc d(fwd, dir, s.src_layer, s.src_iter, wl_any, wi_any, bias_md, s.dst_layer, s.dst_iter);
      dnnl::lbr_gru_forward::primitive_desc pd(d, attr, eng);
      wl_md = pd.weights_layer_desc();
      wi_md = pd.weights_iter_desc();
      scratch_md = pd.scratchpad_desc();
      s.prim = dnnl::lbr_gru_forward(pd);
    } else {
      dnnl::gru_forward::desc d(fwd, dir, s.src_layer, s.src_iter, wl_any, wi_any, bias_md, s.dst_layer, s.dst_iter);
      dnnl::gru_forward::primitive_desc pd(d, attr, eng);
      wl_md = pd.weights_layer_desc();
      wi_md = pd.weights_iter_desc();
      scratch_md = pd.scratchpad_desc();
      s.prim = dnnl::gru_forward(pd);
    }
    s.scratch = scratch_md;
    s.scratch_buf.assign(scratch_md.get_size() + 64, 0);
    s.y_buf.assign(s.dst_layer.get_size(), 0);
    s.yh_buf.assign(s.dst_iter.get_size(), 0);
    s.yc_buf.assign(s.dst_iter.get_size(), 0);
    s.zeros.assign(size_t(b * h), 0.0f);
    // Weights from ldgoi (ONNX rows) into the primitive's layouts, once per shape.
    dnnl::memory wl_user({{1, 1, in, g, h}, dt::f32, tag::ldgoi}, eng, const_cast<float*>(w_.w.data()));
    dnnl::memory wi_user({{1, 1, h, g, h}, dt::f32, tag::ldgoi}, eng, const_cast<float*>(w_.r.data()));
    s.wl = dnnl::memory(wl_md, eng);
    s.wi = dnnl::memory(wi_md, eng);
    dnnl::reorder(wl_user, s.wl).execute(strm, wl_user, s.wl);
    dnnl::reorder(wi_user, s.wi).execute(strm, wi_user, s.wi);
    strm.wait();
    s.bias = dnnl::memory(bias_md, eng, const_cast<float*>(w_.bias.data()));
    return s;
  }

  OnednnWeights w_;
  Cell cell_;
  bool batch_major_;
};

}  // namespace

bool onednn_rnn_supports(const Node& n) {
  // sequence_lens (input 4) has no oneDNN equivalent (it would need per-row lengths).
  return !(n.inputs.size() > 4 && n.inputs[4] != kNoValue);
}

Result<KernelPtr> make_rnn_onednn(const Graph& g, const Node& n) {
  if (!onednn_rnn_supports(n)) return unsupported(n, "with sequence_lens has no oneDNN tactic");
  const bool lstm = n.op == "LSTM";
  const bool lbr = !lstm && n.attr_i("linear_before_reset", 0) != 0;
  const int64_t h = n.attr_i("hidden_size", 0), ng = lstm ? 4 : 3;
  const Value& wv = g.value(n.inputs[1]);
  const Value& rv = g.value(n.inputs[2]);
  OnednnWeights w;
  w.hidden = h;
  w.input = wv.const_dims()[2];
  w.gates = ng;
  w.bias_gates = lbr ? 4 : ng;
  const std::vector<float> bias = rnn_bias(g, n, ng, h);
  // oneDNN gate k takes ONNX gate map[k].
  const int64_t lstm_map[4] = {0, 2, 3, 1}, gru_map[3] = {0, 1, 2};
  const int64_t* map = lstm ? lstm_map : gru_map;
  const float* wp = wv.as<float>();
  const float* rp = rv.as<float>();
  w.w.resize(size_t(ng * h * w.input));
  w.r.resize(size_t(ng * h * h));
  w.bias.assign(size_t(w.bias_gates * h), 0.0f);
  for (int64_t k = 0; k < ng; ++k) {
    const int64_t src = map[k];
    std::copy(wp + src * h * w.input, wp + (src + 1) * h * w.input, w.w.begin() + k * h * w.input);
    std::copy(rp + src * h * h, rp + (src + 1) * h * h, w.r.begin() + k * h * h);
    for (int64_t j = 0; j < h; ++j) {
      const float wb = bias[size_t(src * h + j)], rb = bias[size_t((ng + src) * h + j)];
      w.bias[size_t(k * h + j)] = (lbr && k == 2) ? wb : wb + rb;
    }
  }
  if (lbr) {
    for (int64_t j = 0; j < h; ++j) w.bias[size_t(3 * h + j)] = bias[size_t(5 * h + j)];
  }
  if (lstm && n.inputs.size() > 7 && n.inputs[7] != kNoValue) {
    const float* p = g.value(n.inputs[7]).as<float>();  // ONNX i, o, f → oneDNN i, f, o
    w.peep.resize(size_t(3 * h));
    std::copy(p, p + h, w.peep.begin());
    std::copy(p + 2 * h, p + 3 * h, w.peep.begin() + h);
    std::copy(p + h, p + 2 * h, w.peep.begin() + 2 * h);
  }
  const Cell cell = lstm ? Cell::kLstm : lbr ? Cell::kLbrGru : Cell::kGru;
  return KernelPtr(new OnednnRnnKernel(std::move(w), cell, n.attr_i("layout", 0) == 1));
}

}  // namespace ts::engine::cpu
