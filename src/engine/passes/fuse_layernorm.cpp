// Decomposed LayerNorm → "LayerNormalization" (ONNX op, opset 17 semantics):
//   m = ReduceMean(x, axes=[-1]); d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes=[-1]);
//   y = Div(d, Sqrt(Add(v, eps))) [* gamma] [+ beta]
// becomes LayerNormalization(x, gamma, beta) with epsilon and axis = -1. Without the Mul/Add
// gamma = 1 / beta = 0 constants of the last dim are created (needs that dim known).
#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine::passes {
namespace {

bool reduces_last_axis(const Graph& g, const Node& n) {
  if (n.op != "ReduceMean" || n.attr_i("keepdims", 1) != 1) return false;
  std::vector<int64_t> axes = n.attr_ints("axes");
  if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) axes = constant_as_i64(g.value(n.inputs[1]));
  const Value& x = g.value(n.inputs[0]);
  if (axes.size() != 1 || !x.rank_known) return false;
  return norm_axis(axes[0], int64_t(x.shape.size())) == int64_t(x.shape.size()) - 1;
}

struct Match {
  std::vector<int> nodes;
  ValueId x = kNoValue, gamma = kNoValue, beta = kNoValue, out = kNoValue;
  float eps = 1e-5f;
};

bool match_at(const Graph& g, const std::vector<std::vector<int>>& cons, int r1, Match& m) {
  auto only = [&](ValueId v) -> int {
    if (is_graph_output(g, v) || cons[size_t(v)].size() != 1) return -1;
    return cons[size_t(v)][0];
  };
  auto node = [&](int i) -> const Node& { return g.nodes[size_t(i)]; };
  auto out0 = [&](int i) { return node(i).outputs[0]; };
  auto other = [&](int i, ValueId v) -> ValueId {
    const Node& n = node(i);
    if (n.inputs.size() != 2) return kNoValue;
    return n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : kNoValue;
  };
  if (!reduces_last_axis(g, node(r1))) return false;
  m.x = node(r1).inputs[0];
  int sub = only(out0(r1));
  if (sub < 0 || node(sub).op != "Sub" || node(sub).inputs[0] != m.x || node(sub).inputs[1] != out0(r1)) return false;
  ValueId d = out0(sub);
  if (is_graph_output(g, d) || cons[size_t(d)].size() != 2) return false;
  int pow = -1, div = -1;
  for (int i : cons[size_t(d)]) {
    if (node(i).op == "Pow" && node(i).inputs[0] == d && is_constant_scalar(g, node(i).inputs[1], 2.0)) pow = i;
    if (node(i).op == "Div" && node(i).inputs[0] == d) div = i;
  }
  if (pow < 0 || div < 0) return false;
  int r2 = only(out0(pow));
  if (r2 < 0 || !reduces_last_axis(g, node(r2))) return false;
  int add = only(out0(r2));
  if (add < 0 || node(add).op != "Add") return false;
  ValueId epsv = other(add, out0(r2));
  if (epsv == kNoValue || !g.value(epsv).is_constant || g.value(epsv).numel() != 1) return false;
  m.eps = float(constant_as_f64(g.value(epsv))[0]);
  int sq = only(out0(add));
  if (sq < 0 || node(sq).op != "Sqrt" || only(out0(sq)) != div || node(div).inputs[1] != out0(sq)) return false;
  m.nodes = {r1, sub, pow, r2, add, sq, div};
  m.out = out0(div);
  int mul = only(m.out);
  if (mul >= 0 && node(mul).op == "Mul") {
    ValueId gm = other(mul, m.out);
    if (gm != kNoValue && g.value(gm).is_constant && g.value(gm).shape.size() == 1) {
      m.gamma = gm;
      m.nodes.push_back(mul);
      m.out = out0(mul);
    }
  }
  int badd = only(m.out);
  if (badd >= 0 && node(badd).op == "Add") {
    ValueId b = other(badd, m.out);
    if (b != kNoValue && g.value(b).is_constant && g.value(b).shape.size() == 1) {
      m.beta = b;
      m.nodes.push_back(badd);
      m.out = out0(badd);
    }
  }
  return true;
}

}  // namespace

int fuse_layernorm(Graph& g, PassLog& log) {
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != "ReduceMean") continue;
    Match m;
    if (!match_at(g, consumers(g), int(i), m)) continue;
    const Value& x = g.value(m.x);
    const Dim& last = x.shape.back();
    if ((m.gamma == kNoValue || m.beta == kNoValue) && !last.is_known()) continue;
    std::string base = g.nodes[i].name;
    if (m.gamma == kNoValue) {
      m.gamma = g.add_value(make_constant(base + ".gamma", DType::kF32, {last.value},
                                          std::vector<double>(size_t(last.value), 1.0)));
    }
    if (m.beta == kNoValue) {
      m.beta = g.add_value(make_constant(base + ".beta", DType::kF32, {last.value},
                                         std::vector<double>(size_t(last.value), 0.0)));
    }
    Node f;
    f.name = base;
    f.op = "LayerNormalization";
    f.inputs = {m.x, m.gamma, m.beta};
    f.outputs = {m.out};
    f.attrs["epsilon"] = m.eps;
    f.attrs["axis"] = int64_t(-1);
    for (int k : m.nodes) f.fused_from.push_back(g.nodes[size_t(k)].name);
    for (int k : m.nodes) g.nodes[size_t(k)].op.clear();
    log.lines.push_back(fusion_line(f));
    g.nodes[i] = std::move(f);
    erase_absorbed(g);
    ++count;
  }
  return count;
}

}  // namespace ts::engine::passes
