// fuse_rnn_stack: two stacked GRU layers → one GRUStack node, two stacked LSTM layers → one
// LSTMStack node, for backends that run that op (the CUDA backend's wavefronts, cuda_rnn_wave.h,
// cuda_lstm_wave.h and, in FP32, cuda_rnn_wave_f32.h). Run by the builder for FP32/FP16/BF16 plans
// once the backend is known (INT8 plans keep their layers; the CPU backend has no such op, so its
// plans keep them too): the pattern is what PyTorch exports for nn.GRU(num_layers=2) and
// nn.LSTM(num_layers=2),
//
//   GRU₁(X) → Y₁ [T, 1, B, H] → Squeeze(axis 1) → GRU₂ → Y₂, Y_h₂        (LSTM: … → Y₂, Y_h₂, Y_c₂)
//
// where Y₁ feeds nothing else, layer 1's other outputs (Y_h, Y_c) are unused, both layers are
// forward with the same attributes, no sequence_lens, no initial state (simplify_rnn drops
// PyTorch's zero ones) and no LSTM peepholes. Stack inputs: X, W₁, R₁, B₁, W₂, R₂, B₂; outputs:
// layer 2's. It takes layer 2's place (every value it reads exists there) and layer 1's name; a
// tactic forced on both layers carries over (a stack tactic "wave…" as is, a per-layer tactic t as
// "layers:t").
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
  if (!absent(n, 4) || !absent(n, 5)) return false;  // sequence_lens, initial_h
  if (op == "LSTM" && (!absent(n, 6) || !absent(n, 7))) return false;  // initial_c, peepholes
  for (size_t i : {size_t(1), size_t(2)})
    if (!g.value(n.inputs[i]).is_constant) return false;
  return absent(n, 3) || g.value(n.inputs[3]).is_constant;
}

// The one node that reads v (v not a graph output), or -1.
int only_user(const Graph& g, const std::vector<std::vector<int>>& users, ValueId v) {
  if (v == kNoValue || passes::is_graph_output(g, v) || users[size_t(v)].size() != 1) return -1;
  return users[size_t(v)][0];
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
// x_batch_first = 1, and for the head inputs 7, 8 (the Gemm's W and bias), attributes
// head_trans_b and head_activation, and the Gemm's output as its one output.
int fuse_rnn_stack_io(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs) {
  int count = 0;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < g.nodes.size() && !again; ++i) {
      const std::string& op = g.nodes[i].op;
      if ((op != "GRUStack" && op != "LSTMStack") || g.nodes[i].attr_i("x_batch_first", 0) != 0 || g.nodes[i].inputs.size() != 7) {
        continue;
      }
      const auto users = passes::consumers(g);
      Node f = g.nodes[i];
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
    for (size_t i2 = 0; i2 < g.nodes.size() && !again; ++i2) {
      const Node& n2 = g.nodes[i2];
      const char* fused_op = stack_op(n2.op);
      if (!fused_op || !plain_rnn(g, n2, n2.op)) continue;
      const int is = producer(g, n2.inputs[0]);
      if (is < 0 || g.nodes[size_t(is)].op != "Squeeze") continue;
      const Node& sq = g.nodes[size_t(is)];
      if (!squeezes_axis1(g, sq) || users[size_t(sq.outputs[0])].size() != 1 || passes::is_graph_output(g, sq.outputs[0])) continue;
      const int i1 = producer(g, sq.inputs[0]);
      if (i1 < 0 || !plain_rnn(g, g.nodes[size_t(i1)], n2.op)) continue;
      const Node& n1 = g.nodes[size_t(i1)];
      if (n1.outputs[0] != sq.inputs[0] || users[size_t(n1.outputs[0])].size() != 1 || passes::is_graph_output(g, n1.outputs[0])) continue;
      bool states_used = false;  // Y_h (and an LSTM's Y_c) of layer 1
      for (size_t o = 1; o < n1.outputs.size(); ++o) states_used = states_used || used(g, users, n1.outputs[o]);
      if (states_used) continue;
      if (n1.attrs != n2.attrs) continue;
      std::string tactic;
      if (n1.tactic != n2.tactic) continue;
      if (n1.tactic.rfind("wave", 0) == 0) tactic = n1.tactic;  // a stack tactic ("wave", "wave3")
      else if (!n1.tactic.empty()) tactic = "layers:" + n1.tactic;

      Node f;
      f.name = n1.name;
      f.op = fused_op;
      auto in = [](const Node& n, size_t k) { return k < n.inputs.size() ? n.inputs[k] : kNoValue; };
      f.inputs = {n1.inputs[0], n1.inputs[1], n1.inputs[2], in(n1, 3), n2.inputs[1], n2.inputs[2], in(n2, 3)};
      f.outputs = n2.outputs;
      f.attrs = n2.attrs;
      f.fused_from = {n1.name, sq.name, n2.name};
      f.tactic = tactic;
      if (!backend_runs(f)) continue;  // the backend has no such op (or refuses this one)
      log.lines.push_back(passes::fusion_line(f));
      g.nodes[i2] = std::move(f);
      g.nodes[size_t(is)].op.clear();
      g.nodes[size_t(i1)].op.clear();
      passes::erase_absorbed(g);
      ++count;
      again = true;
    }
  }
  fuse_rnn_stack_io(g, log, backend_runs);
  return count;
}

}  // namespace ts::engine
