// fuse_rnn_stack: stacked GRU layers → one GRUStack node, stacked LSTM layers → one LSTMStack
// node (2..kMaxStackLayers layers, any depth PyTorch exports), for backends that run that op (the
// CUDA backend: the first two layers as a wavefront where it applies, cuda_rnn_wave.h,
// cuda_lstm_wave.h, cuda_rnn_wave_f32.h, the rest layer by layer in the same node). Run by the
// builder once the backend is known (the CPU backend has no such op, so its plans keep the
// layers): the pattern is what PyTorch exports for nn.GRU(num_layers=N) and nn.LSTM(num_layers=N),
//
//   GRU₁(X) → Y₁ [T, 1, B, H] → Squeeze(axis 1) → GRU₂ → … → Squeeze(axis 1) → GRU_N → Y_N, Y_h_N
//                                                                     (LSTM: … → Y_N, Y_h_N, Y_c_N)
//
// where each layer's Y feeds only the next layer's Squeeze, its other outputs (Y_h, Y_c) are
// unused, every layer is forward with the same attributes, no sequence_lens and no LSTM
// peepholes. Stack inputs: X, then W, R, B of each layer (3·N + 1), then, where any layer has an
// initial state (PyTorch's `rnn(x, h0)`: a Slice of h0 per layer; simplify_rnn drops zero ones),
// attribute initial_states = 1 and each layer's initial_h (and initial_c) (RnnStackLayout,
// engine/ir/rnn_weights.h); outputs: the last layer's. It takes the last layer's place (every value
// it reads exists there) and the first layer's name; a tactic forced on every layer carries over
// (a stack tactic "wave…" as is, a per-layer tactic t as "layers:t").
#include <functional>
#include <string>
#include <vector>

#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine {
namespace {

// The node that writes v, or -1.
int producer(const Graph& g, ValueId v) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (ValueId o : g.nodes[i].outputs)
      if (o == v) return int(i);
  }
  return -1;
}

bool used(const Graph& g, const std::vector<std::vector<int>>& users, ValueId v) {
  return v != kNoValue && (!users[size_t(v)].empty() || passes::is_graph_output(g, v));
}

bool absent(const Node& n, size_t i) { return i >= n.inputs.size() || n.inputs[i] == kNoValue; }

// Squeeze of axis 1 only (attribute or constant input).
bool squeezes_axis1(const Graph& g, const Node& sq) {
  std::vector<int64_t> axes =
      sq.inputs.size() > 1 && sq.inputs[1] != kNoValue ? constant_as_i64(g.value(sq.inputs[1])) : sq.attr_ints("axes");
  if (sq.inputs.size() > 1 && sq.inputs[1] != kNoValue && !g.value(sq.inputs[1]).is_constant) return false;
  return axes.size() == 1 && (axes[0] == 1 || axes[0] == -3);
}

// The stacked node of each recurrent op.
const char* stack_op(const std::string& op) { return op == "GRU" ? "GRUStack" : op == "LSTM" ? "LSTMStack" : nullptr; }

bool plain_rnn(const Graph& g, const Node& n, const std::string& op) {
  if (n.op != op || n.inputs.size() < 3 || n.outputs.empty()) return false;
  if (n.attr_s("direction", "forward") != "forward" || n.attr_i("layout", 0) != 0) return false;
  if (!absent(n, 4)) return false;                       // sequence_lens
  if (op == "LSTM" && !absent(n, 7)) return false;       // peepholes
  if (op == "GRU" && !absent(n, 6)) return false;        // no such input
  for (size_t i : {size_t(1), size_t(2)})
    if (!g.value(n.inputs[i]).is_constant) return false;
  return absent(n, 3) || g.value(n.inputs[3]).is_constant;
}

ValueId input_or_none(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : kNoValue; }

// The stack node's inputs for `layers` (graph nodes, first to last): X, W, R, B of each, then,
// where any layer has an initial state (attribute initial_states = 1 on `f`), each layer's
// initial_h and (LSTM) each layer's initial_c, kNoValue where a layer has none
// (engine/ir/rnn_weights.h, RnnStackLayout).
void set_stack_inputs(Node& f, const Graph& g, const std::vector<int>& layers) {
  f.inputs = {g.nodes[size_t(layers[0])].inputs[0]};
  bool states = false;
  for (int l : layers) {
    const Node& n = g.nodes[size_t(l)];
    f.inputs.insert(f.inputs.end(), {n.inputs[1], n.inputs[2], input_or_none(n, 3)});
    states = states || !absent(n, 5) || !absent(n, 6);
  }
  if (!states) return;
  f.attrs["initial_states"] = int64_t(1);
  const bool lstm = g.nodes[size_t(layers[0])].op == "LSTM";
  for (size_t k : lstm ? std::vector<size_t>{5, 6} : std::vector<size_t>{5})
    for (int l : layers) f.inputs.push_back(input_or_none(g.nodes[size_t(l)], k));
}

// Most layers one stack node takes (PyTorch's num_layers 1..4 in practice; a deeper stack
// becomes several nodes).
constexpr size_t kMaxStackLayers = 8;

// The one node that reads v (v not a graph output), or -1.
int only_user(const Graph& g, const std::vector<std::vector<int>>& users, ValueId v) {
  if (v == kNoValue || passes::is_graph_output(g, v) || users[size_t(v)].size() != 1) return -1;
  return users[size_t(v)][0];
}

// The layer stacked on node i (PyTorch's next layer of the same nn.GRU / nn.LSTM): it reads i's Y
// through a Squeeze of axis 1 and nothing else does, i's Y_h (and Y_c) are unused, and it is a
// plain layer of the same op with the same attributes and forced tactic. {Squeeze, layer} or
// {-1, -1}.
std::pair<int, int> next_layer(const Graph& g, const std::vector<std::vector<int>>& users, size_t i) {
  const Node& n1 = g.nodes[i];
  for (size_t o = 1; o < n1.outputs.size(); ++o)
    if (used(g, users, n1.outputs[o])) return {-1, -1};
  const int is = only_user(g, users, n1.outputs[0]);
  if (is < 0) return {-1, -1};
  const Node& sq = g.nodes[size_t(is)];
  if (sq.op != "Squeeze" || sq.inputs.empty() || sq.inputs[0] != n1.outputs[0] || !squeezes_axis1(g, sq)) return {-1, -1};
  const int i2 = only_user(g, users, sq.outputs[0]);
  if (i2 < 0) return {-1, -1};
  const Node& n2 = g.nodes[size_t(i2)];
  if (!plain_rnn(g, n2, n1.op) || n2.inputs[0] != sq.outputs[0] || n2.attrs != n1.attrs || n2.tactic != n1.tactic) {
    return {-1, -1};
  }
  return {is, i2};
}

bool swaps_first_two_axes(const Node& n) {
  return n.op == "Transpose" && n.attr_ints("perm") == std::vector<int64_t>{1, 0, 2};
}

// Gather of index -1 (a constant scalar) along `axis`.
bool gathers_last(const Graph& g, const Node& n, int64_t axis) {
  if (n.op != "Gather" || n.inputs.size() != 2 || n.attr_i("axis", 0) != axis) return false;
  const Value& idx = g.value(n.inputs[1]);
  if (!idx.is_constant || !idx.shape.empty()) return false;
  const std::vector<int64_t> v = constant_as_i64(idx);
  return v.size() == 1 && v[0] == -1;
}

// A GRUStack's (LSTMStack's) input glue and head → the node (the CUDA wavefronts read X
// batch-first and compute the head from the last step's h, cuda_rnn_wave.h, cuda_lstm_wave.h),
// what PyTorch exports for `rnn(x.transpose(0, 1))` … `sigmoid(head(y[:, -1]))` with
// batch_first=False layers:
//
//   X [B, T, F] → Transpose(1, 0, 2) → GRUStack → Y [T, 1, B, H] → Squeeze(axis 1)
//     → Transpose(1, 0, 2) → Gather(axis 1, -1)  (or Gather(axis 0, -1) without the Transpose)
//     → FusedGemm (activation none or sigmoid) → out [B, N]
//
// Each part is optional; every absorbed value feeds only the next node and is no graph output;
// the head needs the stack's Y_h (and an LSTMStack's Y_c) unused. The node gains attribute
// x_batch_first = 1, and for the head two inputs after the layers' (the Gemm's W and bias: 7, 8
// for two layers), attributes head_trans_b and head_activation, and the Gemm's output as its one
// output. A single plain GRU (LSTM) layer with such glue becomes a stack of one layer (X, W, R,
// B), so that its transposes and head go into it too; without any, it stays as it is.
int fuse_rnn_stack_io(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs) {
  int count = 0;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
      const std::string& op = g.nodes[i].op;
      const bool one_layer = stack_op(op) && plain_rnn(g, g.nodes[i], op);
      if (!one_layer && ((op != "GRUStack" && op != "LSTMStack") || g.nodes[i].attr_i("x_batch_first", 0) != 0 ||
                         g.nodes[i].has_attr("head_activation"))) {
        continue;
      }
      const auto users = passes::consumers(g);
      Node f = g.nodes[i];
      if (one_layer) {  // a single layer as a stack of one: X, W, R, B; "layers:<t>" for a forced tactic t
        f.op = stack_op(op);
        set_stack_inputs(f, g, {int(i)});
        f.fused_from = {f.name};
        if (!f.tactic.empty() && f.tactic.rfind("wave", 0) != 0) f.tactic = "layers:" + f.tactic;
      }
      std::vector<int> absorbed;
      const int it = producer(g, f.inputs[0]);
      if (it >= 0 && swaps_first_two_axes(g.nodes[size_t(it)]) && only_user(g, users, f.inputs[0]) == int(i)) {
        f.inputs[0] = g.nodes[size_t(it)].inputs[0];
        f.attrs["x_batch_first"] = int64_t(1);
        absorbed.push_back(it);
      }
      [&] {  // the head
        for (size_t o = 1; o < f.outputs.size(); ++o)
          if (used(g, users, f.outputs[o])) return;  // Y_h (, Y_c)
        const int is = only_user(g, users, f.outputs[0]);
        if (is < 0 || g.nodes[size_t(is)].op != "Squeeze" || !squeezes_axis1(g, g.nodes[size_t(is)])) return;
        int ig = only_user(g, users, g.nodes[size_t(is)].outputs[0]);
        std::vector<int> head{is};
        if (ig >= 0 && swaps_first_two_axes(g.nodes[size_t(ig)])) {
          head.push_back(ig);
          ig = only_user(g, users, g.nodes[size_t(ig)].outputs[0]);
          if (ig < 0 || !gathers_last(g, g.nodes[size_t(ig)], 1)) return;
        } else if (ig < 0 || !gathers_last(g, g.nodes[size_t(ig)], 0)) {
          return;
        }
        head.push_back(ig);
        const int im = only_user(g, users, g.nodes[size_t(ig)].outputs[0]);
        if (im < 0) return;
        const Node& gm = g.nodes[size_t(im)];
        const std::string act = gm.attr_s("activation", "none");
        if (gm.op != "FusedGemm" || gm.inputs.size() < 2 || gm.inputs[0] != g.nodes[size_t(ig)].outputs[0] || gm.outputs.size() != 1 ||
            (act != "none" && act != "sigmoid") || !g.value(gm.inputs[1]).is_constant ||
            (gm.inputs.size() > 2 && gm.inputs[2] != kNoValue && !g.value(gm.inputs[2]).is_constant)) {
          return;
        }
        head.push_back(im);
        f.inputs.push_back(gm.inputs[1]);
        f.inputs.push_back(gm.inputs.size() > 2 ? gm.inputs[2] : kNoValue);
        f.attrs["head_trans_b"] = gm.attr_i("trans_b", 0);
        f.attrs["head_activation"] = act;
        f.outputs = gm.outputs;
        absorbed.insert(absorbed.end(), head.begin(), head.end());
      }();
      if (absorbed.empty()) continue;
      for (int k : absorbed) f.fused_from.push_back(g.nodes[size_t(k)].name);
      if (!backend_runs(f)) continue;
      log.lines.push_back(passes::fusion_line(f));
      // The node takes the head's place when it has one (after every value it reads; its output's
      // readers come later), else its own.
      const size_t at = f.outputs[0] == g.nodes[i].outputs[0] ? i : size_t(absorbed.back());
      for (int k : absorbed) g.nodes[size_t(k)].op.clear();
      g.nodes[i].op.clear();
      g.nodes[at] = std::move(f);
      passes::erase_absorbed(g);
      ++count;
      again = true;
    }
  }
  return count;
}

}  // namespace

int fuse_rnn_stack(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs) {
  int count = 0;
  for (bool again = true; again;) {
    again = false;
    const auto users = passes::consumers(g);
    for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
      const Node& n1 = g.nodes[i];
      const char* fused_op = stack_op(n1.op);
      if (!fused_op || !plain_rnn(g, n1, n1.op)) continue;
      // The chain of layers from n1: each next one reads the previous one's Y through a
      // Squeeze(axis 1) and matches it (next_layer()).
      std::vector<int> layers{int(i)}, squeezes;
      while (layers.size() < kMaxStackLayers) {
        const auto [sq, nx] = next_layer(g, users, size_t(layers.back()));
        if (nx < 0) break;
        squeezes.push_back(sq);
        layers.push_back(nx);
      }
      if (layers.size() < 2) continue;
      const Node& last = g.nodes[size_t(layers.back())];
      std::string tactic;
      if (n1.tactic.rfind("wave", 0) == 0) tactic = n1.tactic;  // a stack tactic ("wave", "wave3")
      else if (!n1.tactic.empty()) tactic = "layers:" + n1.tactic;

      Node f;
      f.name = n1.name;
      f.op = fused_op;
      for (size_t l = 0; l < layers.size(); ++l) {
        f.fused_from.push_back(g.nodes[size_t(layers[l])].name);
        if (l < squeezes.size()) f.fused_from.push_back(g.nodes[size_t(squeezes[l])].name);
      }
      f.outputs = last.outputs;
      f.attrs = last.attrs;
      set_stack_inputs(f, g, layers);
      f.tactic = tactic;
      if (!backend_runs(f)) continue;  // the backend has no such op (or refuses this one)
      log.lines.push_back(passes::fusion_line(f));
      const size_t at = size_t(layers.back());
      for (size_t l = 0; l + 1 < layers.size(); ++l) g.nodes[size_t(layers[l])].op.clear();
      for (int sq : squeezes) g.nodes[size_t(sq)].op.clear();
      g.nodes[at] = std::move(f);
      passes::erase_absorbed(g);
      ++count;
      again = true;
    }
  }
  fuse_rnn_stack_io(g, log, backend_runs);
  return count;
}

}  // namespace ts::engine
