// Attention block → "FusedAttention":
//   s = MatMul(q, kT) [Div(s, c) | Mul(s, c)] → p = Softmax(s, axis=-1) → y = MatMul(p, v)
// becomes FusedAttention(q, kT, v) with attrs scale (1/c for Div, c for Mul, 1 without) and
// k_transposed = 1 (input 1 is Kᵀ, [..., d, Tk]). When kT is a Transpose of k swapping the last
// two axes and used only here, the Transpose is absorbed: input 1 is k ([..., Tk, d]) and
// k_transposed = 0; a Transpose producing kT from an axis order whose last axis becomes kT's
// second-last is rewritten to produce k instead (same rows, contiguous copies), k_transposed = 0.
// A Div or Mul of q by a constant scalar used only here (PyTorch scales q
// before q·kᵀ) is absorbed into scale. Output: q's shape with v's last dim. Masks (an Add
// before Softmax) are not matched: such blocks stay unfused.
#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine::passes {

int fuse_attention(Graph& g, PassLog& log) {
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != "MatMul") continue;
    auto cons = consumers(g);
    auto only = [&](ValueId v) -> int {
      if (is_graph_output(g, v) || cons[size_t(v)].size() != 1) return -1;
      return cons[size_t(v)][0];
    };
    const Node& qk = g.nodes[i];
    if (g.value(qk.inputs[1]).is_constant) continue;
    std::vector<int> nodes = {int(i)};
    ValueId s = qk.outputs[0];
    float scale = 1.f;
    int next = only(s);
    if (next < 0) continue;
    const Node& sc = g.nodes[size_t(next)];
    if ((sc.op == "Div" || sc.op == "Mul") && sc.inputs[0] == s && g.value(sc.inputs[1]).is_constant &&
        g.value(sc.inputs[1]).numel() == 1) {
      double c = constant_as_f64(g.value(sc.inputs[1]))[0];
      scale = float(sc.op == "Div" ? 1.0 / c : c);
      nodes.push_back(next);
      s = sc.outputs[0];
      next = only(s);
    }
    if (next < 0 || g.nodes[size_t(next)].op != "Softmax") continue;
    const Node& sm = g.nodes[size_t(next)];
    const Value& sv = g.value(s);
    if (!sv.rank_known || norm_axis(sm.attr_i("axis", -1), int64_t(sv.shape.size())) != int64_t(sv.shape.size()) - 1) continue;
    nodes.push_back(next);
    int pv = only(sm.outputs[0]);
    if (pv < 0 || g.nodes[size_t(pv)].op != "MatMul" || g.nodes[size_t(pv)].inputs[0] != sm.outputs[0]) continue;
    nodes.push_back(pv);
    Node f;
    f.name = qk.name;
    f.op = "FusedAttention";
    f.inputs = {qk.inputs[0], qk.inputs[1], g.nodes[size_t(pv)].inputs[1]};
    f.outputs = {g.nodes[size_t(pv)].outputs[0]};
    f.attrs["scale"] = scale;
    f.attrs["k_transposed"] = int64_t(1);
    ValueId kt = qk.inputs[1];
    for (size_t t = 0; t < i; ++t) {  // absorb Transpose(k) swapping the last two axes
      Node& tr = g.nodes[t];
      if (tr.op != "Transpose" || tr.outputs[0] != kt || only(kt) != int(i)) continue;
      auto perm = tr.attr_ints("perm");
      bool swap_last = perm.size() >= 2;
      for (size_t k = 0; k + 2 < perm.size(); ++k) swap_last = swap_last && perm[k] == int64_t(k);
      size_t r = perm.size();
      if (r >= 2 && !(swap_last && perm[r - 2] == int64_t(r - 1) && perm[r - 1] == int64_t(r - 2)) &&
          perm[r - 2] == int64_t(r - 1) && g.value(kt).shape.size() == r) {
        // kT = Transpose(x, perm) with x's last axis becoming kT's second-last (PyTorch's
        // [T, B·H, d] → [B·H, d, T]): transpose to [B·H, T, d] instead, which copies whole rows,
        // and let the kernel read k untransposed.
        std::swap(perm[r - 2], perm[r - 1]);
        tr.attrs["perm"] = perm;
        auto& ks = g.value(kt).shape;
        std::swap(ks[r - 2], ks[r - 1]);
        f.attrs["k_transposed"] = int64_t(0);
        break;
      }
      if (!swap_last || perm[r - 2] != int64_t(r - 1) || perm[r - 1] != int64_t(r - 2)) break;
      f.inputs[1] = tr.inputs[0];
      f.attrs["k_transposed"] = int64_t(0);
      f.fused_from.push_back(tr.name);
      tr.op.clear();
      break;
    }
    for (size_t t = 0; t < i; ++t) {  // absorb q = Div(x, c) | Mul(x, c)
      Node& qs = g.nodes[t];
      if ((qs.op != "Div" && qs.op != "Mul") || qs.outputs[0] != f.inputs[0] || only(f.inputs[0]) != int(i)) continue;
      const Value& c = g.value(qs.inputs[1]);
      if (g.value(qs.inputs[0]).is_constant || !c.is_constant || c.numel() != 1) break;
      double cv = constant_as_f64(c)[0];
      if (qs.op == "Div" && cv == 0.0) break;
      const Value& x = g.value(qs.inputs[0]);
      if (!x.rank_known || !g.value(f.inputs[0]).rank_known || x.shape.size() != g.value(f.inputs[0]).shape.size()) break;  // c must not add axes
      scale = float(qs.op == "Div" ? double(scale) / cv : double(scale) * cv);
      f.attrs["scale"] = scale;
      f.inputs[0] = qs.inputs[0];
      f.fused_from.push_back(qs.name);
      qs.op.clear();
      break;
    }
    for (int k : nodes) f.fused_from.push_back(g.nodes[size_t(k)].name);
    for (int k : nodes) g.nodes[size_t(k)].op.clear();
    log.lines.push_back(fusion_line(f));
    g.nodes[i] = std::move(f);
    erase_absorbed(g);
    ++count;
    i = size_t(-1);  // restart (wraps to 0): a Transpose before i may have gone
  }
  return count;
}

}  // namespace ts::engine::passes
