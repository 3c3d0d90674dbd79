// GRUStack / LSTMStack on the cpu backend (cpu_rnn_stack.h). One node runs every layer, the
// model's input transpose and its head (last step → Gemm → activation). The layers always run
// time-major (ONNX layout 0): with x_batch_first, X is transposed once into the kernel's state
// (what the unfused plan's Transpose node did); the head reads the last layer's final h, so the
// last layer's Y is never written.
// PERF NOTE: a first version ran the layers batch-major (ONNX layout 1) when the head was folded,
// to skip that transpose; each step's gate math then reads its B rows of the input projection
// T·G·H floats apart and writes Y rows as far apart. A/B of the two on the 2x128, 3x96 and 2x99
// LSTM/GRU stacks at batch 16 and 256 (two alternating runs each, the smaller P50): time-major
// was faster in all 8 cases (LSTM-2x128 b256 121 → 74 ms, GRU-2x128 b16 7.5 → 3.7 ms), though
// single runs on the shared 2-core machine moved up to 2x.
// PERF NOTE: the layers run one after the other over all T (each layer's input projection is one
// GEMM over T·B rows, which is what makes batch 16/256 fast). Interleaving the layers per step
// at batch 1 was not done: on this machine every sweep stack's weights together fit the 1 MB L2
// per core (GRU-2x128: 2 × 196 KB recurrent + 196 KB of layer 2's input weights), so a layer
// finds its weights in L2 either way, and the batch-1 step is bound by L2 → L1 streaming
// (cpu_rnn.cpp).
#include "engine/backends/cpu/cpu_rnn_stack.h"

#include <algorithm>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_rnn.h"
#include "engine/ir/rnn_weights.h"

namespace ts::engine::cpu {
namespace {

constexpr const char* kLayerTactics[] = {"avx2_blocked", "avx2_packed", "onednn"};

// Layer l of the stack as the GRU/LSTM node it was: inputs X (the stack's, only its place
// matters), W, R, B, no sequence_lens, its initial states; the stack's attributes without the
// stack-only ones (layout 0: time-major).
Node layer_node(const Node& n, const RnnStackLayout& lay, int64_t l) {
  Node m;
  m.name = n.name + "/layer" + std::to_string(l);
  m.op = lay.lstm ? "LSTM" : "GRU";
  m.attrs = n.attrs;
  for (const char* a : {"x_batch_first", "head_trans_b", "head_activation", "initial_states", "layout"}) m.attrs.erase(a);
  m.inputs = {n.inputs[0], n.inputs[lay.w(l)], n.inputs[lay.w(l) + 1], n.inputs[lay.w(l) + 2], kNoValue};
  if (lay.states) {
    m.inputs.push_back(n.inputs[lay.initial_h(l)]);
    if (lay.lstm) m.inputs.push_back(n.inputs[lay.initial_c(l)]);
  }
  return m;
}

// Per-layer tactics of a stack tactic: "layers:t" → t for every layer, "layers:t1,t2" → t1 for
// the first layer, t2 for the rest. Empty on a malformed name.
std::vector<std::string> layer_tactics(const std::string& tactic, int64_t layers) {
  const std::string prefix = "layers:";
  std::string t = tactic.empty() ? prefix + kLayerTactics[0] : tactic;
  if (t.rfind(prefix, 0) != 0) return {};
  t = t.substr(prefix.size());
  const size_t comma = t.find(',');
  const std::string first = t.substr(0, comma), rest = comma == std::string::npos ? first : t.substr(comma + 1);
  if (first.empty() || rest.empty()) return {};
  std::vector<std::string> out(size_t(layers), rest);
  out[0] = first;
  return out;
}

class RnnStackState final : public KernelState {
 public:
  std::vector<std::unique_ptr<KernelState>> layers;
  RtTensor y[2];   // the inner layers' Y, alternating
  RtTensor xt;     // X time-major (x_batch_first)
  RtTensor yh, yc; // the last layer's final states (head)
  RtTensor view;   // the next layer's X: a view of y without its direction axis (dims kept, no allocation)
};

class RnnStackKernel final : public Kernel {
 public:
  RnnStackKernel(std::vector<KernelPtr> layers, RnnStackLayout lay, int64_t hidden, bool x_batch_first)
      : layers_(std::move(layers)), lay_(lay), hidden_(hidden), x_batch_first_(x_batch_first) {}

  void set_head(PackedB w, Act act) {
    head_w_ = std::move(w);
    head_act_ = act;
  }
  bool bf16() const {
    return std::any_of(layers_.begin(), layers_.end(), [](const KernelPtr& k) { return rnn_kernel_is_bf16(*k); });
  }

  std::unique_ptr<KernelState> make_state() const override {
    auto s = std::make_unique<RnnStackState>();
    for (const KernelPtr& k : layers_) s->layers.push_back(k->make_state());
    return s;
  }

  Status run(const KernelArgs& a) const override {
    auto* st = static_cast<RnnStackState*>(a.state);
    if (!st) return Status(StatusCode::kInternal, "rnn stack: no kernel state");
    const RtTensor* x = a.input(0);
    if (!x || x->dtype != DType::kF32 || x->dims.size() != 3) {
      return bad_input(x_batch_first_ ? "X must be f32 [batch, seq, input]" : "X must be f32 [seq, batch, input]");
    }
    if (x_batch_first_) {  // [B, T, F] → [T, B, F]
      const int64_t b = x->dims[0], t_len = x->dims[1], f = x->dims[2], xt_dims[3] = {t_len, b, f};
      st->xt.ensure(DType::kF32, xt_dims);
      for (int64_t t = 0; t < t_len; ++t)
        for (int64_t bi = 0; bi < b; ++bi)
          std::copy_n(x->as<float>() + (bi * t_len + t) * f, f, st->xt.as<float>() + (t * b + bi) * f);
      x = &st->xt;
    }
    RtTensor& view = st->view;
    const size_t n_layers = layers_.size();
    for (size_t l = 0; l < n_layers; ++l) {
      const RtTensor* ins[7] = {x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
      if (lay_.states) {
        ins[5] = a.input(lay_.initial_h(int64_t(l)));
        if (lay_.lstm) ins[6] = a.input(lay_.initial_c(int64_t(l)));
      }
      const bool last = l + 1 == n_layers;
      RtTensor* outs[3] = {nullptr, nullptr, nullptr};
      if (!last) {
        outs[0] = &st->y[l & 1];
      } else if (lay_.head) {
        outs[1] = &st->yh;
      } else {
        for (size_t o = 0; o < 3 && o < a.out.size(); ++o) outs[o] = a.out[o];
      }
      KernelArgs la{std::span<const RtTensor* const>(ins, lay_.lstm ? 7 : 6), std::span<RtTensor* const>(outs, 3),
                    a.scratch, st->layers[l].get()};
      Status s = layers_[l]->run(la);
      if (!s) return s.with_context("layer " + std::to_string(l));
      if (last) break;
      const RtTensor& y = st->y[l & 1];  // [T, 1, B, H]
      view.dtype = DType::kF32;
      view.dims.resize(3);
      view.dims[0] = y.dims[0];
      view.dims[1] = y.dims[2];
      view.dims[2] = hidden_;
      view.data = y.data;
      x = &view;
    }
    if (!lay_.head) return Status::ok();
    // The head: act(h_T · W + bias) over the last layer's final h ([1, B, H]).
    const int64_t b = x_batch_first_ ? a.input(0)->dims[0] : a.input(0)->dims[1];
    const int64_t od[2] = {b, head_w_.n};
    if (a.out.empty() || !a.out[0]) return Status::ok();
    a.out[0]->ensure(DType::kF32, od);
    gemm_packed(st->yh.as<float>(), hidden_, b, head_w_, a.out[0]->as<float>(), head_w_.n, head_act_);
    return Status::ok();
  }

 private:
  std::vector<KernelPtr> layers_;
  RnnStackLayout lay_;
  int64_t hidden_;
  bool x_batch_first_;
  PackedB head_w_;
  Act head_act_ = Act::kNone;
};

}  // namespace

Status check_rnn_stack(const Graph& g, const Node& n) {
  const RnnStackLayout lay = rnn_stack_layout(n);
  if (lay.layers <= 0) return unsupported(n, "has an input count that fits no stack layout");
  for (int64_t l = 0; l < lay.layers; ++l) {
    const Node m = layer_node(n, lay, l);
    for (size_t i = 1; i < 4; ++i) {
      if (m.inputs[i] != kNoValue && !is_const(g, m.inputs[i])) {
        return unsupported(n, "needs constant weights in every layer on the cpu backend (layer " + std::to_string(l) + ")");
      }
    }
    Status s = check_rnn(g, m, lay.lstm);
    if (!s) return s.with_context("layer " + std::to_string(l) + " of " + n.name);
  }
  if (lay.head) {
    const std::string act = n.attr_s("head_activation", "none");
    if (act != "none" && act != "sigmoid") return unsupported(n, "head_activation=" + act + " is not supported");
    const ValueId w = n.inputs[lay.head_w()], bias = n.inputs[lay.head_w() + 1];
    if (!is_const(g, w) || g.value(w).dtype != DType::kF32 || g.value(w).const_dims().size() != 2) {
      return unsupported(n, "needs a constant f32 [N, H] or [H, N] head weight");
    }
    const auto wd = g.value(w).const_dims();
    const int64_t h = n.attr_i("hidden_size", 0), k = n.attr_i("head_trans_b", 0) != 0 ? wd[1] : wd[0];
    if (k != h) return unsupported(n, "has a head weight of shape " + dims_str(wd) + " for hidden_size " + std::to_string(h));
    const int64_t cols = n.attr_i("head_trans_b", 0) != 0 ? wd[0] : wd[1];
    if (bias != kNoValue && (!is_const(g, bias) || g.value(bias).dtype != DType::kF32 ||
                             shape_numel(g.value(bias).const_dims()) != cols)) {
      return unsupported(n, "needs a constant f32 head bias of " + std::to_string(cols) + " values");
    }
  }
  return Status::ok();
}

std::vector<std::string> rnn_stack_tactics(const Graph&, const Node& n) {
  const RnnStackLayout lay = rnn_stack_layout(n);
  std::vector<std::string> own = {kLayerTactics[0], kLayerTactics[1]};
  if (lay.layers > 0 && onednn_rnn_supports(layer_node(n, lay, 0))) own.push_back(kLayerTactics[2]);
  std::vector<std::string> out;
  for (const std::string& t : own) out.push_back("layers:" + t);
  if (lay.layers < 2) return out;
  for (const std::string& first : own)
    for (const std::string& rest : own)
      if (first != rest) out.push_back("layers:" + first + "," + rest);
  return out;
}

Result<KernelPtr> make_rnn_stack_kernel(const Graph& g, const Node& n, const std::string& tactic, bool bf16_weights) {
  TS_RETURN_IF_ERROR(check_rnn_stack(g, n));
  const RnnStackLayout lay = rnn_stack_layout(n);
  const std::vector<std::string> per_layer = layer_tactics(tactic, lay.layers);
  if (per_layer.empty()) return unsupported(n, "has no tactic '" + tactic + "' in the cpu backend");
  const bool x_batch_first = n.attr_i("x_batch_first", 0) != 0;
  std::vector<KernelPtr> layers;
  for (int64_t l = 0; l < lay.layers; ++l) {
    const std::string& t = per_layer[size_t(l)];
    if (std::find(std::begin(kLayerTactics), std::end(kLayerTactics), t) == std::end(kLayerTactics)) {
      return unsupported(n, "has no tactic '" + tactic + "' in the cpu backend");
    }
    auto k = make_rnn_kernel(g, layer_node(n, lay, l), t, bf16_weights);
    if (!k) return k.status().with_context("layer " + std::to_string(l) + " of " + n.name);
    layers.push_back(std::move(k.value()));
  }
  const int64_t h = n.attr_i("hidden_size", 0);
  auto k = std::make_unique<RnnStackKernel>(std::move(layers), lay, h, x_batch_first);
  if (lay.head) {
    const Value& w = g.value(n.inputs[lay.head_w()]);
    const ValueId bias = n.inputs[lay.head_w() + 1];
    const bool trans = n.attr_i("head_trans_b", 0) != 0;
    const int64_t cols = trans ? w.const_dims()[0] : w.const_dims()[1];
    Act act = Act::kNone;
    act_from_name(n.attr_s("head_activation", "none"), &act);
    k->set_head(pack_b(w.as<float>(), h, cols, trans, bias == kNoValue ? nullptr : g.value(bias).as<float>()), act);
  }
  return KernelPtr(std::move(k));
}

bool rnn_stack_kernel_is_bf16(const Kernel& k) {
  auto* s = dynamic_cast<const RnnStackKernel*>(&k);
  return s && s->bf16();
}

void add_rnn_stack_ops(std::vector<OpInfo>& ops) {
  const std::vector<std::string> defaults = {std::string("layers:") + kLayerTactics[0]};
  auto make = [](const Graph& g, const Node& n, const std::string& t) { return make_rnn_stack_kernel(g, n, t, false); };
  for (const char* op : {"GRUStack", "LSTMStack"}) {
    ops.push_back({op, check_rnn_stack, defaults, make, rnn_stack_tactics});
  }
}

}  // namespace ts::engine::cpu
