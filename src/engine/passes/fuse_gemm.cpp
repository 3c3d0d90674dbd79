// GEMM epilogue fusion → "FusedGemm".
//   FusedGemm(x, W, bias?)  y = act(x · op(W) + bias)
//   attrs: trans_b (0: W is [K,N]; 1: W is [N,K], as Gemm transB / PyTorch Linear store it),
//          activation "none" | "relu" | "sigmoid" | "tanh" | "gelu" (erf GELU).
//   x may have any rank ≥ 1 ([batch,seq,K] from MatMul); bias has N elements.
// Heads: Gemm (transA 0, alpha 1, beta 1, constant B, bias C with N elements or none), or
// MatMul with a constant 2-D W that is followed by a bias Add or an activation. A plain
// MatMul (no epilogue) stays a MatMul.
#include "engine/passes/fuse_patterns.h"
#include "engine/passes/pass_util.h"

namespace ts::engine::passes {
namespace {

struct Ctx {
  Graph& g;
  std::vector<std::vector<int>> cons;
  // The single consumer of v (its index), or -1 if v has several, none, or is a graph output.
  int only_consumer(ValueId v) const {
    if (is_graph_output(g, v) || cons[size_t(v)].size() != 1) return -1;
    return cons[size_t(v)][0];
  }
  // Input of node i other than v (binary ops).
  ValueId other(int i, ValueId v) const {
    const Node& n = g.nodes[size_t(i)];
    if (n.inputs.size() != 2) return kNoValue;
    return n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : kNoValue;
  }
};

bool is_op(const Graph& g, int i, const char* op) { return i >= 0 && g.nodes[size_t(i)].op == op; }

// Erf-form GELU consuming t: returns the nodes (in order) and the output value, or {} .
std::vector<int> match_erf_gelu(const Ctx& c, ValueId t, ValueId& out) {
  const Graph& g = c.g;
  if (is_graph_output(g, t)) return {};
  const auto& ts = c.cons[size_t(t)];
  if (ts.size() != 2) return {};
  int div = -1, other = -1;
  for (int i : ts) {
    const Node& n = g.nodes[size_t(i)];
    if ((n.op == "Div" && n.inputs[0] == t && is_constant_scalar(g, n.inputs[1], 1.4142135623730951)) ||
        (n.op == "Mul" && is_constant_scalar(g, c.other(i, t), 0.7071067811865476))) {
      div = i;
    } else {
      other = i;
    }
  }
  if (div < 0 || other < 0) return {};
  int erf = c.only_consumer(g.nodes[size_t(div)].outputs[0]);
  if (!is_op(g, erf, "Erf")) return {};
  ValueId ev = g.nodes[size_t(erf)].outputs[0];
  int add = c.only_consumer(ev);
  if (!is_op(g, add, "Add") || !is_constant_scalar(g, c.other(add, ev), 1.0)) return {};
  ValueId av = g.nodes[size_t(add)].outputs[0];
  int m1 = c.only_consumer(av);
  if (!is_op(g, m1, "Mul")) return {};
  ValueId mv = g.nodes[size_t(m1)].outputs[0];
  if (m1 == other && c.other(m1, av) == t) {  // x * (1+erf) * 0.5
    int m2 = c.only_consumer(mv);
    if (!is_op(g, m2, "Mul") || !is_constant_scalar(g, c.other(m2, mv), 0.5)) return {};
    out = g.nodes[size_t(m2)].outputs[0];
    return {div, erf, add, m1, m2};
  }
  // (x * 0.5) * (1+erf)
  const Node& h = g.nodes[size_t(other)];
  if (h.op != "Mul" || !is_constant_scalar(g, c.other(other, t), 0.5)) return {};
  if (c.only_consumer(h.outputs[0]) != m1 || c.other(m1, av) != h.outputs[0]) return {};
  out = mv;
  return {div, other, erf, add, m1};
}

// Tries to fuse at head node h; true if the graph changed.
bool fuse_at(Ctx& c, size_t h, PassLog& log) {
  Graph& g = c.g;
  Node& head = g.nodes[h];
  bool gemm = head.op == "Gemm";
  if (!gemm && head.op != "MatMul") return false;
  if (head.inputs.size() < 2 || !g.value(head.inputs[1]).is_constant) return false;
  const Value& w = g.value(head.inputs[1]);
  if (w.shape.size() != 2) return false;
  int64_t trans_b = gemm ? head.attr_i("transB", 0) : 0;
  int64_t n_out = w.shape[trans_b ? 0 : 1].value;
  ValueId bias = kNoValue;
  if (gemm) {
    if (head.attr_i("transA", 0) != 0 || head.attr_f("alpha", 1.f) != 1.f) return false;
    if (head.inputs.size() > 2 && head.inputs[2] != kNoValue) {
      const Value& cv = g.value(head.inputs[2]);
      if (!cv.is_constant || cv.numel() != n_out || head.attr_f("beta", 1.f) != 1.f) return false;
      bias = head.inputs[2];
    }
  }
  std::vector<int> absorbed;
  ValueId t = head.outputs[0];
  if (bias == kNoValue) {
    int add = c.only_consumer(t);
    if (is_op(g, add, "Add")) {
      ValueId b = c.other(add, t);
      if (b != kNoValue && g.value(b).is_constant && g.value(b).numel() == n_out &&
          g.value(b).shape.size() <= 2 && (g.value(b).shape.size() < 2 || g.value(b).shape[0].value == 1)) {
        bias = b;
        absorbed.push_back(add);
        t = g.nodes[size_t(add)].outputs[0];
      }
    }
  }
  std::string act = "none";
  int a = c.only_consumer(t);
  if (a >= 0) {
    const std::string& op = g.nodes[size_t(a)].op;
    if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Gelu") {
      if (op != "Gelu" || g.nodes[size_t(a)].attr_s("approximate", "none") == "none") {
        act = op == "Relu" ? "relu" : op == "Sigmoid" ? "sigmoid" : op == "Tanh" ? "tanh" : "gelu";
        absorbed.push_back(a);
        t = g.nodes[size_t(a)].outputs[0];
      }
    }
  }
  if (act == "none") {
    ValueId out = kNoValue;
    auto gelu = match_erf_gelu(c, t, out);
    if (!gelu.empty()) {
      act = "gelu";
      absorbed.insert(absorbed.end(), gelu.begin(), gelu.end());
      t = out;
    }
  }
  if (!gemm && absorbed.empty()) return false;

  Node f;
  f.name = head.name;
  f.op = "FusedGemm";
  f.inputs = {head.inputs[0], head.inputs[1], bias};
  f.outputs = {t};
  f.attrs["trans_b"] = trans_b;
  f.attrs["activation"] = act;
  f.fused_from.push_back(head.name);
  for (int i : absorbed) {
    f.fused_from.push_back(g.nodes[size_t(i)].name);
    g.nodes[size_t(i)].op.clear();
  }
  log.lines.push_back(fusion_line(f));
  head = std::move(f);
  return true;
}

}  // namespace

int fuse_gemm(Graph& g, PassLog& log) {
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Ctx c{g, consumers(g)};
    if (fuse_at(c, i, log)) {
      ++count;
      erase_absorbed(g);  // absorbed nodes all come after i: i stays valid
    }
  }
  return count;
}

}  // namespace ts::engine::passes
