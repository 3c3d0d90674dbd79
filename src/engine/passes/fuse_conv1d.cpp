// fuse_conv1d: a 1-D Conv (constant W, stride 1, group 1) with what PyTorch exports around it in
// a TCN → one FusedConv1d node, for backends that run that op (the CUDA backend,
// cuda_conv_ops.cpp; the CPU backend's GEMM kernel, cpu_fused_conv.cpp). Run by the builder once
// the backend is known. The pattern, each part optional but the Conv:
//
//   [Transpose(perm 0,2,1)] → Conv → [Slice(starts 0, axis 2, to the input's length)] → [Relu]
//                            → [Add(·, residual) → [Relu]] → [Gather(axis 2, index −1)]
//
// which is `torch.relu(conv(x.transpose(1, 2))[:, :, :x.shape[1]]) + h` (the causal trim of a
// conv padded (k−1)·d on both sides, written with a computed end, proved to be the input's own
// length dim, or as the usual TCN block's chomp `[:, :, :-pad]`), and the block's
// `relu(out + res)`. Each absorbed value must feed only the next part.
// FusedConv1d: inputs X, W, B (or none), the residual (or none); attributes dilation, pad_begin,
// pad_end, x_time_major (X is [n, len, c]: the Transpose folded), trim (output length = input
// length), activation ("relu" or "none"), last_step (the Gather folded: only step len − 1 is
// computed; 1: output [n, m] for a scalar index, 2: [n, m, 1]), residual_activation ("relu":
// ReLU after the residual add), steps_needed (set after the fusions where every reader is another
// causal FusedConv1d: only the last that many output steps are read); output [n, m, len]. It takes the
// last part's place (the residual exists there) and the Conv's name.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine {
namespace {

// For every value: the index of the node that writes it, −1 for inputs and constants.
std::vector<int> writers(const Graph& g) {
  std::vector<int> w(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (ValueId o : g.nodes[i].outputs) {
      if (o != kNoValue) w[size_t(o)] = int(i);
    }
  }
  return w;
}

bool const_ints_are(const Graph& g, const Node& n, size_t i, std::vector<int64_t> want) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return false;
  const Value& v = g.value(n.inputs[i]);
  return v.is_constant && constant_as_i64(v) == want;
}

// The single node reading v (v no graph output), or -1.
int sole_user(const Graph& g, const std::vector<std::vector<int>>& users, ValueId v) {
  if (passes::is_graph_output(g, v) || users[size_t(v)].size() != 1) return -1;
  return users[size_t(v)][0];
}

struct ConvShape {
  int64_t kw = 0, dilation = 1, pad_begin = 0, pad_end = 0;
};

// A Conv the fused node computes: constant f32 W [m, c, kw], constant or no B, rank-3 X, stride
// 1, group 1, explicit pads.
bool plain_conv1d(const Graph& g, const Node& n, ConvShape* s) {
  if (n.op != "Conv" || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return false;
  const Value& w = g.value(n.inputs[1]);
  if (!w.is_constant || w.dtype != DType::kF32 || w.const_dims().size() != 3) return false;
  if (n.inputs.size() == 3 && n.inputs[2] != kNoValue && !g.value(n.inputs[2]).is_constant) return false;
  const Value& x = g.value(n.inputs[0]);
  if (!x.rank_known || x.shape.size() != 3 || x.dtype != DType::kF32) return false;
  if (n.attr_i("group", 1) != 1 || n.attr_s("auto_pad", "NOTSET") != "NOTSET") return false;
  const auto st = n.attr_ints("strides"), dl = n.attr_ints("dilations"), pads = n.attr_ints("pads"),
             ks = n.attr_ints("kernel_shape");
  if ((!st.empty() && st != std::vector<int64_t>{1}) || dl.size() > 1 || (!pads.empty() && pads.size() != 2)) return false;
  s->kw = w.const_dims()[2];
  if (!ks.empty() && ks != std::vector<int64_t>{s->kw}) return false;
  s->dilation = dl.empty() ? 1 : dl[0];
  s->pad_begin = pads.empty() ? 0 : pads[0];
  s->pad_end = pads.empty() ? 0 : pads[1];
  return s->dilation >= 1 && s->pad_begin >= 0 && s->pad_end >= 0;
}

bool same_dim(const Dim& a, const Dim& b) {
  return a.is_known() ? (b.is_known() && a.value == b.value) : (!a.symbol.empty() && !b.is_known() && a.symbol == b.symbol);
}

// Whether the 1-element int64 value `e` is the length `len`: a constant of that value, or
// Shape(v)[i] with v's dim i that very dim (Gather of Shape by index [i], or by a scalar index
// then Unsqueezed, as PyTorch exports `x.shape[1]`).
bool is_length(const Graph& g, const std::vector<int>& made_by, ValueId e, const Dim& len) {
  const Value& ev = g.value(e);
  if (ev.is_constant) {
    const auto v = constant_as_i64(ev);
    return v.size() == 1 && len.is_known() && v[0] == len.value;
  }
  int p = made_by[size_t(e)];
  if (p < 0) return false;
  if (g.nodes[size_t(p)].op == "Unsqueeze") {
    const Value& in = g.value(g.nodes[size_t(p)].inputs[0]);
    if (!in.rank_known || !in.shape.empty()) return false;  // a scalar made [1]
    p = made_by[size_t(g.nodes[size_t(p)].inputs[0])];
    if (p < 0) return false;
  }
  const Node& gather = g.nodes[size_t(p)];
  if (gather.op != "Gather" || gather.inputs.size() != 2 || gather.attr_i("axis", 0) != 0) return false;
  const Value& idx = g.value(gather.inputs[1]);
  const auto iv = constant_as_i64(idx);
  if (!idx.is_constant || iv.size() != 1) return false;
  const int sp = made_by[size_t(gather.inputs[0])];
  if (sp < 0 || g.nodes[size_t(sp)].op != "Shape" || g.nodes[size_t(sp)].has_attr("start") || g.nodes[size_t(sp)].has_attr("end")) {
    return false;
  }
  const Value& v = g.value(g.nodes[size_t(sp)].inputs[0]);
  const int64_t axis = passes::norm_axis(iv[0], int64_t(v.shape.size()));
  return v.rank_known && axis >= 0 && same_dim(v.shape[size_t(axis)], len);
}

// Slice(conv output) keeping [0, len) of axis 2, len the conv input's length: its end is that
// length (`h[:, :, :x.shape[1]]`), or the negative count of the steps the conv adds to it
// (`h[:, :, :-pad]`, the "chomp" of the usual TCN block).
bool causal_trim(const Graph& g, const std::vector<int>& made_by, const Node& s, ValueId in, const Dim& len,
                 const ConvShape& cs) {
  if (s.op != "Slice" || s.inputs.size() < 4 || s.inputs[0] != in || s.outputs.size() != 1) return false;
  if (!const_ints_are(g, s, 1, {0})) return false;
  if (!const_ints_are(g, s, 3, {2}) && !const_ints_are(g, s, 3, {-1})) return false;
  if (s.inputs.size() > 4 && s.inputs[4] != kNoValue && !const_ints_are(g, s, 4, {1})) return false;
  const int64_t extra = cs.pad_begin + cs.pad_end - cs.dilation * (cs.kw - 1);  // conv length − len
  if (s.inputs[2] == kNoValue) return false;
  return is_length(g, made_by, s.inputs[2], len) || (extra > 0 && const_ints_are(g, s, 2, {-extra}));
}

// A value of exactly `shape` (no broadcast).
bool has_shape(const Value& a, const Shape& shape) {
  if (!a.rank_known || a.shape.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!same_dim(a.shape[i], shape[i])) return false;
  }
  return true;
}

// A causal FusedConv1d: its output step t reads input steps t − span .. t (trimmed to the input's
// length, padded span before), so the last s output steps read the last s + span input steps.
int64_t causal_span(const Graph& g, const Node& n) {
  if (n.op != "FusedConv1d" || !n.attr_i("trim", 0) || n.attr_i("x_time_major", 0) || n.inputs.size() < 2) return -1;
  const auto wd = g.value(n.inputs[1]).const_dims();
  if (wd.size() != 3) return -1;
  const int64_t span = n.attr_i("dilation", 1) * (wd[2] - 1);
  return n.attr_i("pad_begin", 0) == span ? span : -1;
}

// steps_needed on each FusedConv1d whose output is read only by causal FusedConv1d nodes (as X or
// as the residual), from the last node back: the largest number of trailing steps a reader uses
// (its own computed steps, plus its span when it reads the value as X). A backend may compute
// more (the CUDA kernels ignore the attribute); the CPU kernel computes only those steps. The
// output keeps its shape; the steps before are not read by anyone.
void mark_steps_needed(Graph& g, PassLog& log) {
  const auto users = passes::consumers(g);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    if (n.op != "FusedConv1d" || n.attr_i("last_step", 0) || n.outputs.size() != 1) continue;
    const ValueId y = n.outputs[0];
    if (passes::is_graph_output(g, y) || users[size_t(y)].empty()) continue;
    int64_t need = 0;
    for (int u : users[size_t(y)]) {
      const Node& r = g.nodes[size_t(u)];
      const int64_t span = causal_span(g, r);
      const int64_t computed = r.attr_i("last_step", 0) ? 1 : r.attr_i("steps_needed", 0);
      if (span < 0 || computed <= 0) {
        need = 0;
        break;
      }
      int64_t n_read = 0;
      if (r.inputs[0] == y) n_read = computed + span;
      if (r.inputs.size() > 3 && r.inputs[3] == y) n_read = std::max(n_read, computed);
      if (n_read == 0) {  // read as W or B: not a causal reader
        need = 0;
        break;
      }
      need = std::max(need, n_read);
    }
    if (need <= 0) continue;
    n.attrs["steps_needed"] = need;
    log.lines.push_back("fuse_conv1d: " + n.name + " computes its last " + std::to_string(need) + " steps (all its readers use)");
  }
}

}  // namespace

int fuse_conv1d(Graph& g, PassLog& log, const std::function<bool(const Node&)>& backend_runs) {
  int fused = 0;
  // One fusion at a time, then shape inference again (the trimmed output is the input's length,
  // where shape inference gave the Slice a fresh symbol: the next level's residual Add then sees
  // equal shapes), then the next Conv.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ConvShape cs;
    if (!plain_conv1d(g, g.nodes[i], &cs)) continue;
    const auto users = passes::consumers(g);
    const auto made_by = writers(g);
    const Node& conv = g.nodes[i];
    Node f;
    f.op = "FusedConv1d";
    f.name = conv.name;
    std::vector<int> absorbed{int(i)};
    ValueId x = conv.inputs[0];
    const Dim len = g.value(x).shape[2];
    bool time_major = false;
    const int t = made_by[size_t(x)];
    if (t >= 0 && g.nodes[size_t(t)].op == "Transpose" && g.nodes[size_t(t)].attr_ints("perm") == std::vector<int64_t>{0, 2, 1} &&
        sole_user(g, users, x) == int(i)) {
      time_major = true;
      x = g.nodes[size_t(t)].inputs[0];
      absorbed.insert(absorbed.begin(), t);
    }
    ValueId cur = conv.outputs[0];
    bool trim = false, relu = false, relu_after_add = false;
    ValueId residual = kNoValue;
    int next = sole_user(g, users, cur);
    if (next >= 0 && cs.pad_begin + cs.pad_end >= cs.dilation * (cs.kw - 1) && causal_trim(g, made_by, g.nodes[size_t(next)], cur, len, cs)) {
      trim = true;
      absorbed.push_back(next);
      cur = g.nodes[size_t(next)].outputs[0];
      next = sole_user(g, users, cur);
    }
    if (next >= 0 && g.nodes[size_t(next)].op == "Relu" && g.nodes[size_t(next)].inputs.size() == 1) {
      relu = true;
      absorbed.push_back(next);
      cur = g.nodes[size_t(next)].outputs[0];
      next = sole_user(g, users, cur);
    }
    if (next >= 0 && g.nodes[size_t(next)].op == "Add" && g.nodes[size_t(next)].inputs.size() == 2) {
      const Node& add = g.nodes[size_t(next)];
      const ValueId other = add.inputs[0] == cur ? add.inputs[1] : add.inputs[0];
      Shape y = g.value(conv.outputs[0]).shape;  // what the fused node computes
      if (trim && y.size() == 3) y[2] = len;
      if (other != cur && g.value(other).dtype == DType::kF32 && has_shape(g.value(other), y)) {
        residual = other;
        absorbed.push_back(next);
        cur = add.outputs[0];
        next = sole_user(g, users, cur);
        if (next >= 0 && g.nodes[size_t(next)].op == "Relu" && g.nodes[size_t(next)].inputs.size() == 1) {
          relu_after_add = true;  // relu(out + res), the usual TCN block's end
          absorbed.push_back(next);
          cur = g.nodes[size_t(next)].outputs[0];
          next = sole_user(g, users, cur);
        }
      }
    }
    // Gather(axis 2, index −1) of the result: only the last step is computed.
    int64_t last_step = 0;
    if (next >= 0 && g.nodes[size_t(next)].op == "Gather" && g.nodes[size_t(next)].inputs.size() == 2 &&
        g.nodes[size_t(next)].inputs[0] == cur) {
      const Node& ga = g.nodes[size_t(next)];
      const Value& idx = g.value(ga.inputs[1]);
      const int64_t axis = ga.attr_i("axis", 0);
      if ((axis == 2 || axis == -1) && idx.is_constant && idx.rank_known && idx.shape.size() <= 1 &&
          constant_as_i64(idx) == std::vector<int64_t>{-1}) {
        last_step = idx.shape.empty() ? 1 : 2;
        absorbed.push_back(next);
        cur = ga.outputs[0];
      }
    }
    for (int k : absorbed) f.fused_from.push_back(g.nodes[size_t(k)].name);
    f.inputs = {x, conv.inputs[1], conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue};
    if (residual != kNoValue) f.inputs.push_back(residual);
    f.outputs = {cur};
    f.attrs["dilation"] = cs.dilation;
    f.attrs["pad_begin"] = cs.pad_begin;
    f.attrs["pad_end"] = cs.pad_end;
    f.attrs["x_time_major"] = int64_t(time_major);
    f.attrs["trim"] = int64_t(trim);
    f.attrs["activation"] = std::string(relu ? "relu" : "none");
    if (last_step) f.attrs["last_step"] = last_step;
    if (relu_after_add) f.attrs["residual_activation"] = std::string("relu");
    if (!backend_runs(f)) continue;  // the backend has no such op (or refuses this one)
    log.lines.push_back(passes::fusion_line(f));
    const int tail = absorbed.back();
    for (int k : absorbed) {
      if (k == tail) continue;
      g.nodes[size_t(k)].op.clear();
      g.nodes[size_t(k)].inputs.clear();  // absorbed: no longer a reader of anything
      g.nodes[size_t(k)].outputs.clear();
    }
    g.nodes[size_t(tail)] = std::move(f);
    ++fused;
    passes::erase_absorbed(g);
    PassLog shapes;
    if (!infer_shapes(g, shapes)) break;
    i = size_t(-1);  // from the start: the indices moved (fused nodes are no Conv)
  }
  if (fused) {
    PassLog dead;
    (void)remove_dead(g, dead);  // the computed Slice ends (Shape → Gather → Unsqueeze) now read by nobody
    mark_steps_needed(g, log);
  }
  return fused;
}

}  // namespace ts::engine
