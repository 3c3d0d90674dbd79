// infer_shapes: dtype and (symbolic) shape of every node output, in topological order.
//
// Symbolic dims flow through unchanged where the op keeps them ([batch,seq,32]·[32,64] →
// [batch,seq,64]). Small integer tensors that hold shapes (Shape → Gather → Unsqueeze →
// Concat → Reshape, as PyTorch exports them) are tracked element by element as Dims
// ("shape data"), so a Reshape whose shape is computed at runtime still gets [batch,seq,4,16].
// A dim that cannot be expressed (a Conv output length over a symbolic input, a Reshape -1
// over symbols, ...) gets a fresh symbol "<value name>#<axis>" that binds to nothing; the
// runtime computes the concrete size. A product of symbols is written "batch*seq".
// Graph inputs and constants keep their shapes; every node output is (re)computed.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "engine/ir/rnn_weights.h"
#include "engine/passes/pass_util.h"
#include "engine/passes/passes.h"

namespace ts::engine {
namespace {

using passes::node_error;
using passes::norm_axis;
using passes::perm_problem;
// Elements of a 0-D/1-D integer tensor: a literal (symbol empty; any value, negative ones
// included: axes -2, starts -3, Reshape's -1), a symbolic dim, or kUnknown.
using ShapeData = std::vector<Dim>;
// An element or dim nothing is known about. Marked by its symbol, never by its value: every
// int64 value is a valid literal (a sentinel value of -2 once made Squeeze/Unsqueeze/Slice
// axes of -2, as PyTorch exports x.squeeze(-2) or x[..., -2:], "not constant").
const Dim kUnknown{-1, "?"};

constexpr int64_t kBig = int64_t(1) << 62;
// Shape data longer than this is not tracked (a Range or ConstantOfShape of many elements is
// data, not a shape argument).
constexpr int64_t kMaxTracked = 64;

// Elements of Range(start, limit, delta), delta != 0 (ONNX: max(ceil((limit - start) / delta), 0)).
int64_t range_count(int64_t start, int64_t limit, int64_t delta) {
  const int64_t span = limit - start;
  int64_t q = span / delta;
  if (q * delta != span && ((span < 0) == (delta < 0))) ++q;
  return std::max<int64_t>(q, 0);
}

struct Ctx {
  Graph& g;
  std::map<ValueId, ShapeData> sdata;
  // Values whose elements depend on tensor data (not only on input shapes, integer shape
  // inputs and constants); a shape argument computed from one is refused.
  std::vector<bool> data_dep;
  std::vector<int> producer;  // value → index of the node that writes it, -1 for none
};

bool is_unknown(const Dim& d) { return d.symbol == kUnknown.symbol; }
// A shape-data element holding a number (any value, negative ones included).
bool is_literal(const Dim& d) { return d.symbol.empty(); }
// As a dim of a shape: unknown when marked so or when neither known nor symbolic.
bool dim_unknown(const Dim& d) { return is_unknown(d) || (!d.is_known() && d.symbol.empty()); }

Dim fresh(const Graph& g, ValueId out, size_t axis) {
  return Dim::sym(g.value(out).name + "#" + std::to_string(axis));
}

// Broadcast two dims (numpy rules); error text on mismatch.
std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b) {
  if (a.is_known() && a.value == 1) return b;
  if (b.is_known() && b.value == 1) return a;
  if (a.is_known() && b.is_known()) return a.value == b.value ? std::optional<Dim>(a) : std::nullopt;
  if (a.is_known()) return a;  // symbol must be a (or 1, which broadcasts the same way)
  return a;
}

Result<Shape> broadcast(const Node& n, const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    Dim da = i < r - a.size() ? Dim::known(1) : a[i - (r - a.size())];
    Dim db = i < r - b.size() ? Dim::known(1) : b[i - (r - b.size())];
    auto d = broadcast_dim(da, db);
    if (!d) {
      return node_error(n, "shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                               " cannot broadcast (axis " + std::to_string(i) + ")");
    }
    out[i] = *d;
  }
  return out;
}

const Value* in(const Ctx& c, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
  return &c.g.value(n.inputs[i]);
}

// Shape data of input i (a constant, or tracked), if any.
std::optional<ShapeData> data_of(const Ctx& c, const Node& n, size_t i) {
  const Value* v = in(c, n, i);
  if (!v) return std::nullopt;
  if (v->is_constant) {
    if (v->dtype != DType::kI64 && v->dtype != DType::kI32) return std::nullopt;
    ShapeData d;
    for (auto x : constant_as_i64(*v)) d.push_back(Dim{x, {}});
    return d;
  }
  auto it = c.sdata.find(n.inputs[i]);
  if (it == c.sdata.end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<int64_t>> ints_of(const Ctx& c, const Node& n, size_t i) {
  auto d = data_of(c, n, i);
  if (!d) return std::nullopt;
  std::vector<int64_t> out;
  for (auto& x : *d) {
    if (!x.symbol.empty()) return std::nullopt;  // symbolic or unknown
    out.push_back(x.value);
  }
  return out;
}

// A shape argument (input i of n: Reshape's shape, Slice's ends, ...) that is not a constant
// nor tracked shape data is computed at run time; that is fine when it depends only on input
// shapes, integer shape inputs and constants (the backend computes it per shape), and refused
// when it is read from tensor data: the error names the argument and where the data enters.
Status check_shape_arg(const Ctx& c, const Node& n, size_t i, const char* what) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue || !c.data_dep[size_t(n.inputs[i])]) return Status::ok();
  ValueId v = n.inputs[i];
  std::string path;
  for (int hops = 0; hops < 64; ++hops) {
    const int p = c.producer[size_t(v)];
    if (p < 0) break;
    const Node& pn = c.g.nodes[size_t(p)];
    path += (path.empty() ? "" : " ← ") + passes::where(pn);
    ValueId next = kNoValue;
    for (ValueId u : pn.inputs) {
      if (u != kNoValue && c.data_dep[size_t(u)]) {
        next = u;
        break;
      }
    }
    if (next == kNoValue) break;
    v = next;
  }
  const Value& src = c.g.value(v);
  return node_error(n, std::string(what) + " '" + c.g.value(n.inputs[i]).name + "' depends on the data of " +
                           (c.producer[size_t(v)] < 0 ? "input" : "value") + " '" + src.name + "' (" +
                           dtype_name(src.dtype) + ")" + (path.empty() ? "" : " through " + path) +
                           ", not only on shapes: the engine computes shape arguments from input shapes, integer "
                           "shape inputs and constants");
}

// Length of a 1-D shape argument from its own shape, or -1.
int64_t arg_length(const Ctx& c, const Node& n, size_t i) {
  const Value* v = in(c, n, i);
  if (!v || !v->rank_known) return -1;
  if (v->shape.empty()) return 1;
  return v->shape.size() == 1 && v->shape[0].is_known() ? v->shape[0].value : -1;
}

// Axes from input `idx` (opset 13+) or attr "axes" (older exports).
std::optional<std::vector<int64_t>> axes_of(const Ctx& c, const Node& n, size_t idx) {
  if (in(c, n, idx)) return ints_of(c, n, idx);
  if (n.has_attr("axes")) return n.attr_ints("axes");
  return std::vector<int64_t>{};
}

// Product of dims as a Dim: known if all known, "a*b*4" if symbolic.
Dim product(const std::vector<Dim>& ds) {
  int64_t k = 1;
  std::string sym;
  for (auto& d : ds) {
    if (is_unknown(d)) return kUnknown;
    if (d.is_known()) k *= d.value;
    else if (d.symbol.empty()) return kUnknown;
    else sym += (sym.empty() ? "" : "*") + d.symbol;
  }
  if (sym.empty()) return Dim::known(k);
  if (k == 0) return Dim::known(0);
  return Dim::sym(k == 1 ? sym : sym + "*" + std::to_string(k));
}

Status set_out(Ctx& c, const Node& n, size_t i, DType dt, Shape s) {
  if (i >= n.outputs.size() || n.outputs[i] == kNoValue) return Status::ok();
  Value& v = c.g.value(n.outputs[i]);
  for (size_t a = 0; a < s.size(); ++a) {
    if (dim_unknown(s[a])) s[a] = fresh(c.g, n.outputs[i], a);
  }
  v.dtype = dt;
  v.shape = std::move(s);
  v.rank_known = true;
  return Status::ok();
}

Status need_rank(const Node& n, const Value* v, size_t i) {
  if (!v) return node_error(n, "missing input " + std::to_string(i));
  if (!v->rank_known) return node_error(n, "input " + std::to_string(i) + " '" + v->name + "' has unknown rank");
  return Status::ok();
}

Status infer_matmul(Ctx& c, const Node& n, const Shape& a0, const Shape& b0, DType dt) {
  if (a0.empty() || b0.empty()) return node_error(n, "MatMul of a scalar");
  Shape a = a0, b = b0;
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), Dim::known(1));
  if (b1) b.push_back(Dim::known(1));
  const Dim& ka = a[a.size() - 1];
  const Dim& kb = b[b.size() - 2];
  if (ka.is_known() && kb.is_known() && ka.value != kb.value) {
    return node_error(n, "inner dims differ: " + shape_to_string(a0) + " · " + shape_to_string(b0) + " (" +
                             std::to_string(ka.value) + " vs " + std::to_string(kb.value) + ")");
  }
  auto batch = broadcast(n, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch) return batch.status();
  Shape out = batch.value();
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b[b.size() - 1]);
  return set_out(c, n, 0, dt, out);
}

Status infer_conv(Ctx& c, const Node& n, const Value& x, const Value& w) {
  if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) {
    return node_error(n, "input " + shape_to_string(x.shape) + " and weight " + shape_to_string(w.shape) +
                             " ranks do not fit a Conv");
  }
  size_t sp = x.shape.size() - 2;
  int64_t group = n.attr_i("group", 1);
  const Dim& cin = x.shape[1];
  const Dim& wc = w.shape[1];
  if (cin.is_known() && wc.is_known() && cin.value != wc.value * group) {
    return node_error(n, "input channels " + std::to_string(cin.value) + " != weight channels " +
                             std::to_string(wc.value) + " × group " + std::to_string(group));
  }
  auto ks = n.attr_ints("kernel_shape");
  if (ks.empty()) {
    for (size_t i = 0; i < sp; ++i) ks.push_back(w.shape[2 + i].value);
  }
  auto strides = n.attr_ints("strides"), dil = n.attr_ints("dilations"), pads = n.attr_ints("pads");
  strides.resize(sp, 1);
  dil.resize(sp, 1);
  pads.resize(2 * sp, 0);
  std::string auto_pad = n.attr_s("auto_pad", "NOTSET");
  Shape out = {x.shape[0], w.shape[0]};
  for (size_t i = 0; i < sp; ++i) {
    const Dim& d = x.shape[2 + i];
    int64_t eff = dil[i] * (ks[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(strides[i] == 1 ? d : d.is_known() ? Dim::known((d.value + strides[i] - 1) / strides[i]) : kUnknown);
      continue;
    }
    int64_t pad = auto_pad == "VALID" ? 0 : pads[i] + pads[i + sp];
    if (d.is_known()) {
      int64_t o = (d.value + pad - eff) / strides[i] + 1;
      if (d.value + pad < eff) return node_error(n, "kernel larger than padded input " + shape_to_string(x.shape));
      out.push_back(Dim::known(o));
    } else {
      out.push_back(strides[i] == 1 && pad == eff - 1 ? d : kUnknown);
    }
  }
  return set_out(c, n, 0, x.dtype, out);
}

Status infer_rnn(Ctx& c, const Node& n, const Value& x, bool lstm) {
  if (x.shape.size() != 3) return node_error(n, "input must be rank 3, got " + shape_to_string(x.shape));
  int64_t hidden = n.attr_i("hidden_size", -1);
  if (hidden <= 0) return node_error(n, "missing hidden_size");
  int64_t dirs = n.attr_s("direction", "forward") == "bidirectional" ? 2 : 1;
  bool batch_major = n.attr_i("layout", 0) == 1;
  Dim seq = x.shape[batch_major ? 1 : 0], batch = x.shape[batch_major ? 0 : 1];
  const Value* w = in(c, n, 1);
  int64_t gates = lstm ? 4 : 3;
  if (w && w->rank_known && w->shape.size() == 3 && w->shape[1].is_known() &&
      w->shape[1].value != gates * hidden) {
    return node_error(n, "W " + shape_to_string(w->shape) + " does not match hidden_size " + std::to_string(hidden));
  }
  if (w && w->rank_known && w->shape.size() == 3 && w->shape[2].is_known() && x.shape[2].is_known() &&
      w->shape[2].value != x.shape[2].value) {
    return node_error(n, "input features " + std::to_string(x.shape[2].value) + " != W input size " +
                             std::to_string(w->shape[2].value));
  }
  Dim h = Dim::known(hidden), nd = Dim::known(dirs);
  Shape y = batch_major ? Shape{batch, seq, nd, h} : Shape{seq, nd, batch, h};
  Shape yh = batch_major ? Shape{batch, nd, h} : Shape{nd, batch, h};
  TS_RETURN_IF_ERROR(set_out(c, n, 0, x.dtype, y));
  TS_RETURN_IF_ERROR(set_out(c, n, 1, x.dtype, yh));
  if (lstm) TS_RETURN_IF_ERROR(set_out(c, n, 2, x.dtype, yh));
  return Status::ok();
}

// The fused stacks of passes/fuse_rnn_stack.cpp. Inputs X, then W, R, B per layer, then (with a
// head: attribute head_activation) the head Gemm's W and bias. X is [T, B, F], or [B, T, F] with
// x_batch_first. Outputs: the last layer's Y [T, 1, B, H] and Y_h [1, B, H] (LSTM: and Y_c), or
// with a head its [B, N] (N from the head's W and head_trans_b).
Status infer_rnn_stack(Ctx& c, const Node& n, const Value& x, bool lstm) {
  if (x.shape.size() != 3) return node_error(n, "input must be rank 3, got " + shape_to_string(x.shape));
  const int64_t hidden = n.attr_i("hidden_size", -1);
  if (hidden <= 0) return node_error(n, "missing hidden_size");
  const RnnStackLayout layout = rnn_stack_layout(n);
  const bool head = layout.head;
  if (layout.layers < 1) return node_error(n, "expects X, then W, R, B per layer (and their initial states)");
  const bool batch_first = n.attr_i("x_batch_first", 0) != 0;
  const Dim seq = x.shape[batch_first ? 1 : 0], batch = x.shape[batch_first ? 0 : 1];
  const int64_t gates = lstm ? 4 : 3;
  for (int64_t l = 0; l < layout.layers; ++l) {
    const Value* w = in(c, n, layout.w(l));
    if (!w || !w->rank_known || w->shape.size() != 3) continue;
    if (w->shape[1].is_known() && w->shape[1].value != gates * hidden)
      return node_error(n, "layer " + std::to_string(l + 1) + " W " + shape_to_string(w->shape) +
                               " does not match hidden_size " + std::to_string(hidden));
    const Dim want = l == 0 ? x.shape[2] : Dim::known(hidden);
    if (w->shape[2].is_known() && want.is_known() && w->shape[2].value != want.value)
      return node_error(n, "layer " + std::to_string(l + 1) + " input width " + std::to_string(want.value) +
                               " != W input size " + std::to_string(w->shape[2].value));
  }
  if (head) {
    const Value* hw = in(c, n, n.inputs.size() - 2);
    TS_RETURN_IF_ERROR(need_rank(n, hw, n.inputs.size() - 2));
    if (hw->shape.size() != 2) return node_error(n, "head W must be 2-D, got " + shape_to_string(hw->shape));
    const bool trans_b = n.attr_i("head_trans_b", 0) != 0;
    const Dim k = hw->shape[trans_b ? 1 : 0];
    if (k.is_known() && k.value != hidden)
      return node_error(n, "head W " + shape_to_string(hw->shape) + " does not take hidden " + std::to_string(hidden));
    return set_out(c, n, 0, x.dtype, Shape{batch, hw->shape[trans_b ? 0 : 1]});
  }
  const Dim h = Dim::known(hidden), one = Dim::known(1);
  TS_RETURN_IF_ERROR(set_out(c, n, 0, x.dtype, Shape{seq, one, batch, h}));
  if (n.outputs.size() > 1) TS_RETURN_IF_ERROR(set_out(c, n, 1, x.dtype, Shape{one, batch, h}));
  if (lstm && n.outputs.size() > 2) TS_RETURN_IF_ERROR(set_out(c, n, 2, x.dtype, Shape{one, batch, h}));
  return Status::ok();
}

// Output dims of a Reshape from its shape data.
Result<Shape> reshape_dims(const Node& n, const Shape& xs, const ShapeData& target) {
  Shape out;
  int neg = -1;
  bool allowzero = n.attr_i("allowzero", 0) != 0;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& t = target[i];
    if (t.is_known() && t.value == 0 && !allowzero) {
      if (i >= xs.size()) return node_error(n, "0 in shape at axis " + std::to_string(i) + " beyond input rank");
      out.push_back(xs[i]);
    } else if (t.value == -1 && t.symbol.empty()) {
      if (neg >= 0) return node_error(n, "more than one -1 in shape");
      neg = int(i);
      out.push_back(kUnknown);
    } else {
      out.push_back(t);
    }
  }
  if (neg >= 0) {
    // numel(x) / product(others), when expressible.
    std::vector<Dim> num(xs.begin(), xs.end());
    int64_t den = 1;
    std::vector<std::string> den_syms;
    bool ok = true;
    for (size_t i = 0; i < out.size(); ++i) {
      if (int(i) == neg) continue;
      if (out[i].is_known()) den *= out[i].value;
      else if (!out[i].symbol.empty()) den_syms.push_back(out[i].symbol);
      else ok = false;
    }
    for (auto& s : den_syms) {  // cancel matching symbols
      auto it = std::find_if(num.begin(), num.end(), [&](const Dim& d) { return d.symbol == s; });
      if (it == num.end()) ok = false;
      else num.erase(it);
    }
    int64_t k = 1;
    std::vector<Dim> syms;
    for (auto& d : num) {
      if (d.is_known()) k *= d.value;
      else syms.push_back(d);
    }
    if (ok && den != 0 && k % den == 0) {
      syms.push_back(Dim::known(k / den));
      out[size_t(neg)] = product(syms);
    } else if (ok && den != 0 && syms.empty()) {
      return node_error(n, "cannot reshape " + shape_to_string(xs) + " (" + std::to_string(k) +
                               " elements) to a multiple of " + std::to_string(den));
    }
  } else if (shape_is_known(xs) && shape_is_known(out)) {
    int64_t a = 1, b = 1;
    for (auto& d : xs) a *= d.value;
    for (auto& d : out) b *= d.value;
    if (a != b) return node_error(n, "cannot reshape " + shape_to_string(xs) + " to " + shape_to_string(out));
  }
  return out;
}

// Tracks shape data through the small integer ops.
void track_data(Ctx& c, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] == kNoValue) return;
  ValueId out = n.outputs[0];
  const std::string& op = n.op;
  if (op == "Shape") {
    const Value* x = in(c, n, 0);
    if (!x || !x->rank_known) return;
    const int64_t r = int64_t(x->shape.size());
    const auto [s, e] = shape_op_range(n.attr_i("start", 0), n.attr_i("end", r), r);
    c.sdata[out] = ShapeData(x->shape.begin() + s, x->shape.begin() + e);
    return;
  }
  if (op == "Range") {
    auto a = ints_of(c, n, 0), b = ints_of(c, n, 1), d = ints_of(c, n, 2);
    if (!a || !b || !d || a->size() != 1 || b->size() != 1 || d->size() != 1 || (*d)[0] == 0) return;
    const int64_t count = range_count((*a)[0], (*b)[0], (*d)[0]);
    if (count > kMaxTracked) return;
    ShapeData r;
    for (int64_t k = 0; k < count; ++k) r.push_back(Dim{(*a)[0] + k * (*d)[0], {}});
    c.sdata[out] = r;
    return;
  }
  auto d0 = data_of(c, n, 0);
  if (!d0) return;
  if (op == "ConstantOfShape") {
    int64_t count = 1;
    for (const Dim& e : *d0) {
      if (!is_literal(e) || e.value < 0) return;
      count *= e.value;
    }
    const double v = n.attr_f("value", 0.0f);
    if (count > kMaxTracked || v != double(int64_t(v))) return;
    c.sdata[out] = ShapeData(size_t(count), Dim{int64_t(v), {}});
    return;
  }
  if (op == "Neg" || op == "Abs") {
    ShapeData r;
    for (const Dim& e : *d0) {
      if (!is_literal(e)) return;
      r.push_back(Dim{op == "Neg" ? -e.value : std::abs(e.value), {}});
    }
    c.sdata[out] = r;
    return;
  }
  if (op == "Equal" || op == "Max" || op == "Min" || op == "Where") {
    // Element-wise over equal lengths or a length-1 side; Where's condition is input 0.
    std::vector<ShapeData> ins = {*d0};
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      auto d = data_of(c, n, i);
      if (!d) return;
      ins.push_back(*d);
    }
    size_t len = 1;
    for (auto& d : ins) len = std::max(len, d.size());
    for (auto& d : ins) {
      if (d.size() != len && d.size() != 1) return;
    }
    auto at = [&](size_t k, size_t i) -> const Dim& { return ins[k][ins[k].size() == 1 ? 0 : i]; };
    ShapeData r;
    for (size_t i = 0; i < len; ++i) {
      if (op == "Where") {
        const Dim& cond = at(0, i);
        if (!is_literal(cond)) r.push_back(at(1, i) == at(2, i) ? at(1, i) : kUnknown);
        else r.push_back(cond.value ? at(1, i) : at(2, i));
        continue;
      }
      const Dim &a = at(0, i), &b = at(1, i);
      if (op == "Equal" && a == b && !is_unknown(a)) r.push_back(Dim{1, {}});
      else if (!is_literal(a) || !is_literal(b)) r.push_back(kUnknown);
      else if (op == "Equal") r.push_back(Dim{a.value == b.value, {}});
      else r.push_back(Dim{op == "Max" ? std::max(a.value, b.value) : std::min(a.value, b.value), {}});
    }
    c.sdata[out] = r;
    return;
  }
  if (op == "Identity" || op == "Cast" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape") {
    c.sdata[out] = *d0;
  } else if (op == "Gather") {
    auto idx = ints_of(c, n, 1);
    if (!idx) return;
    ShapeData r;
    for (auto i : *idx) {
      int64_t k = i < 0 ? i + int64_t(d0->size()) : i;
      if (k < 0 || k >= int64_t(d0->size())) return;
      r.push_back((*d0)[size_t(k)]);
    }
    c.sdata[out] = r;
  } else if (op == "Concat") {
    ShapeData r;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      auto d = data_of(c, n, i);
      if (!d) return;
      r.insert(r.end(), d->begin(), d->end());
    }
    c.sdata[out] = r;
  } else if (op == "Slice") {
    auto st = ints_of(c, n, 1), en = ints_of(c, n, 2);
    if (!st || !en || st->size() != 1 || en->size() != 1) return;
    auto stp = in(c, n, 4) ? ints_of(c, n, 4) : std::vector<int64_t>{1};
    if (!stp || (*stp)[0] != 1) return;
    int64_t sz = int64_t(d0->size()), s = (*st)[0], e = (*en)[0];
    if (s < 0) s += sz;
    if (e < 0) e += sz;
    s = std::clamp<int64_t>(s, 0, sz);
    e = std::clamp<int64_t>(e, 0, sz);
    c.sdata[out] = ShapeData(d0->begin() + s, d0->begin() + std::max(s, e));
  } else if (op == "Mul" || op == "Add" || op == "Sub" || op == "Div") {
    auto d1 = data_of(c, n, 1);
    if (!d1 || (d0->size() != d1->size() && d1->size() != 1 && d0->size() != 1)) return;
    size_t len = std::max(d0->size(), d1->size());
    ShapeData r;
    for (size_t i = 0; i < len; ++i) {
      const Dim& a = (*d0)[d0->size() == 1 ? 0 : i];
      const Dim& b = (*d1)[d1->size() == 1 ? 0 : i];
      if (is_literal(a) && is_literal(b)) {
        if (op == "Div" && b.value == 0) return;
        const int64_t v = op == "Mul" ? a.value * b.value : op == "Add" ? a.value + b.value
                        : op == "Sub" ? a.value - b.value : a.value / b.value;
        r.push_back(Dim{v, {}});  // a literal, negative ones included (-1 in a Reshape shape)
      } else if (op == "Mul" && !is_unknown(a) && !is_unknown(b) && (a.is_known() || !a.symbol.empty()) &&
                 (b.is_known() || !b.symbol.empty())) {
        r.push_back(product({a, b}));
      } else if ((op == "Div" || op == "Mul") && is_literal(b) && b.value == 1) {
        r.push_back(a);
      } else if ((op == "Add" || op == "Sub") && is_literal(b) && b.value == 0) {
        r.push_back(a);
      } else {
        r.push_back(kUnknown);
      }
    }
    c.sdata[out] = r;
  }
}

Status infer_node(Ctx& c, const Node& n) {
  const std::string& op = n.op;
  const Value* x = in(c, n, 0);
  auto unary = [&]() -> Status {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    return set_out(c, n, 0, x->dtype, x->shape);
  };
  if (op == "Identity" || op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Gelu" || op == "Erf" ||
      op == "Sqrt" || op == "Softmax" || op == "Neg" || op == "Exp" || op == "Log" || op == "Abs" ||
      op == "Reciprocal" || op == "LeakyRelu" || op == "Dropout" || op == "LogSoftmax") {
    if (op == "Softmax" || op == "LogSoftmax") {
      TS_RETURN_IF_ERROR(need_rank(n, x, 0));
      if (norm_axis(n.attr_i("axis", -1), int64_t(x->shape.size())) < 0) return node_error(n, "axis out of range");
    }
    return unary();
  }
  if (op == "LayerNormalization") {
    TS_RETURN_IF_ERROR(unary());
    int64_t r = int64_t(x->shape.size()), axis = norm_axis(n.attr_i("axis", -1), r);
    if (axis < 0) return node_error(n, "axis out of range for " + shape_to_string(x->shape));
    Shape stat = x->shape;
    for (int64_t i = axis; i < r; ++i) stat[size_t(i)] = Dim::known(1);
    TS_RETURN_IF_ERROR(set_out(c, n, 1, DType::kF32, stat));
    return set_out(c, n, 2, DType::kF32, stat);
  }
  if (op == "Cast") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto to = n.attr_i("to", 1);
    static const std::map<int64_t, DType> kTo = {{1, DType::kF32}, {2, DType::kU8}, {3, DType::kI8},
                                                 {6, DType::kI32}, {7, DType::kI64}, {9, DType::kBool},
                                                 {10, DType::kF16}, {11, DType::kF64}, {16, DType::kBF16}};
    auto it = kTo.find(to);
    if (it == kTo.end()) return node_error(n, "unsupported Cast target type " + std::to_string(to));
    return set_out(c, n, 0, it->second, x->shape);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Where" ||
      op == "Equal" || op == "Less" || op == "Greater" || op == "Max" || op == "Min") {
    size_t first = op == "Where" ? 1 : 0;
    Shape s;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = in(c, n, i);
      TS_RETURN_IF_ERROR(need_rank(n, v, i));
      auto b = i == 0 ? Result<Shape>(v->shape) : broadcast(n, s, v->shape);
      if (!b) return b.status();
      s = b.value();
    }
    const Value* t = in(c, n, first);
    bool cmp = op == "Equal" || op == "Less" || op == "Greater";
    return set_out(c, n, 0, cmp ? DType::kBool : t->dtype, s);
  }
  if (op == "MatMul") {
    const Value* b = in(c, n, 1);
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    TS_RETURN_IF_ERROR(need_rank(n, b, 1));
    return infer_matmul(c, n, x->shape, b->shape, x->dtype);
  }
  if (op == "Gemm" || op == "FusedGemm") {
    const Value* b = in(c, n, 1);
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    TS_RETURN_IF_ERROR(need_rank(n, b, 1));
    if (b->shape.size() != 2) return node_error(n, "B must be 2-D, got " + shape_to_string(b->shape));
    bool tb = n.attr_i(op == "Gemm" ? "transB" : "trans_b", 0) != 0;
    Shape bs = tb ? Shape{b->shape[1], b->shape[0]} : b->shape;
    Shape as = x->shape;
    if (op == "Gemm") {
      if (as.size() != 2) return node_error(n, "A must be 2-D, got " + shape_to_string(as));
      if (n.attr_i("transA", 0)) std::swap(as[0], as[1]);
    }
    TS_RETURN_IF_ERROR(infer_matmul(c, n, as, bs, x->dtype));
    const Value* bias = in(c, n, 2);
    if (bias && bias->rank_known) {
      auto r = broadcast(n, c.g.value(n.outputs[0]).shape, bias->shape);
      if (!r) return r.status();
    }
    return Status::ok();
  }
  if (op == "Conv") {
    const Value* w = in(c, n, 1);
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    TS_RETURN_IF_ERROR(need_rank(n, w, 1));
    return infer_conv(c, n, *x, *w);
  }
  if (op == "FusedConv1d") {  // passes/fuse_conv1d.cpp: X [n, c, len] (or [n, len, c]) → [n, m, len_out]
    const Value* w = in(c, n, 1);
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    TS_RETURN_IF_ERROR(need_rank(n, w, 1));
    if (x->shape.size() != 3 || w->shape.size() != 3 || !w->shape[2].is_known()) {
      return node_error(n, "X " + shape_to_string(x->shape) + " and W " + shape_to_string(w->shape) + " do not fit a 1-D conv");
    }
    const Dim& len = x->shape[n.attr_i("x_time_major", 0) ? 1 : 2];
    const int64_t span = n.attr_i("dilation", 1) * (w->shape[2].value - 1) + 1;
    const int64_t pad = n.attr_i("pad_begin", 0) + n.attr_i("pad_end", 0);
    Dim out = len;
    if (!n.attr_i("trim", 0) && pad != span - 1) {
      if (len.is_known() && len.value + pad < span) return node_error(n, "kernel larger than padded input " + shape_to_string(x->shape));
      out = len.is_known() ? Dim::known(len.value + pad - span + 1) : kUnknown;
    }
    const int64_t last = n.attr_i("last_step", 0);  // a folded Gather of the last step: [n, m] or [n, m, 1]
    if (last == 1) return set_out(c, n, 0, x->dtype, Shape{x->shape[0], w->shape[0]});
    return set_out(c, n, 0, x->dtype, Shape{x->shape[0], w->shape[0], last == 2 ? Dim::known(1) : out});
  }
  if (op == "GRU" || op == "LSTM") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    return infer_rnn(c, n, *x, op == "LSTM");
  }
  if (op == "GRUStack" || op == "LSTMStack") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    return infer_rnn_stack(c, n, *x, op == "LSTMStack");
  }
  if (op == "TransformerEncoderLayer") {  // passes/fuse_encoder.cpp: X [B, T, K] → [B, T, D], or the head's [B, N]
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    if (x->shape.size() != 3) return node_error(n, "input must be rank 3, got " + shape_to_string(x->shape));
    const Value* ln2 = in(c, n, 11);  // ln2 scale [D]
    TS_RETURN_IF_ERROR(need_rank(n, ln2, 11));
    if (ln2->shape.size() != 1) return node_error(n, "ln2 scale must be 1-D");
    if (n.has_attr("head_activation")) {
      const Value* hw = in(c, n, 15);
      TS_RETURN_IF_ERROR(need_rank(n, hw, 15));
      if (hw->shape.size() != 2) return node_error(n, "head W must be 2-D, got " + shape_to_string(hw->shape));
      return set_out(c, n, 0, x->dtype, Shape{x->shape[0], hw->shape[n.attr_i("head_trans_b", 0) ? 0 : 1]});
    }
    return set_out(c, n, 0, x->dtype, Shape{x->shape[0], x->shape[1], ln2->shape[0]});
  }
  if (op == "Transpose") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto perm = n.attr_ints("perm");
    size_t r = x->shape.size();
    if (perm.empty()) {
      for (size_t i = 0; i < r; ++i) perm.push_back(int64_t(r - 1 - i));
    }
    if (auto why = perm_problem(perm, r); !why.empty()) return node_error(n, why);
    Shape s;
    for (auto p : perm) s.push_back(x->shape[size_t(p)]);
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "Reshape") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto t = data_of(c, n, 1);
    if (!t) {
      TS_RETURN_IF_ERROR(check_shape_arg(c, n, 1, "shape"));
      const Value* sv = in(c, n, 1);
      if (!sv || !sv->rank_known || sv->shape.size() != 1 || !sv->shape[0].is_known()) {
        return node_error(n, "shape input has unknown length");
      }
      return set_out(c, n, 0, x->dtype, Shape(size_t(sv->shape[0].value)));
    }
    auto s = reshape_dims(n, x->shape, *t);
    if (!s) return s.status();
    return set_out(c, n, 0, x->dtype, s.value());
  }
  if (op == "Flatten") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    int64_t r = int64_t(x->shape.size()), axis = n.attr_i("axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) return node_error(n, "axis out of range");
    Shape s = {product({x->shape.begin(), x->shape.begin() + axis}),
               product({x->shape.begin() + axis, x->shape.end()})};
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto axes = axes_of(c, n, 1);
    if (!axes) {
      // Axes computed per shape: the rank is known from their count, every dim at run time.
      TS_RETURN_IF_ERROR(check_shape_arg(c, n, 1, "axes"));
      const int64_t k = arg_length(c, n, 1), r = int64_t(x->shape.size());
      if (k < 0 || (op == "Squeeze" && k > r)) return node_error(n, "axes input has unknown length");
      return set_out(c, n, 0, x->dtype, Shape(size_t(op == "Squeeze" ? r - k : r + k), kUnknown));
    }
    if (op == "Squeeze") {
      int64_t r = int64_t(x->shape.size());
      std::vector<bool> drop(size_t(r), false);
      if (axes->empty()) {
        for (int64_t i = 0; i < r; ++i) drop[size_t(i)] = x->shape[size_t(i)] == Dim::known(1);
      }
      for (auto a : *axes) {
        int64_t k = norm_axis(a, r);
        if (k < 0) return node_error(n, "axis " + std::to_string(a) + " out of range for " + shape_to_string(x->shape));
        const Dim& d = x->shape[size_t(k)];
        if (d.is_known() && d.value != 1) {
          return node_error(n, "cannot squeeze axis " + std::to_string(a) + " of " + shape_to_string(x->shape));
        }
        drop[size_t(k)] = true;
      }
      Shape s;
      for (int64_t i = 0; i < r; ++i) {
        if (!drop[size_t(i)]) s.push_back(x->shape[size_t(i)]);
      }
      return set_out(c, n, 0, x->dtype, s);
    }
    int64_t r = int64_t(x->shape.size() + axes->size());
    std::vector<bool> ins(size_t(r), false);
    for (auto a : *axes) {
      int64_t k = norm_axis(a, r);
      if (k < 0) return node_error(n, "axis " + std::to_string(a) + " out of range");
      ins[size_t(k)] = true;
    }
    Shape s;
    size_t j = 0;
    for (int64_t i = 0; i < r; ++i) s.push_back(ins[size_t(i)] ? Dim::known(1) : x->shape[j++]);
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "Slice") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    static const char* kArg[] = {"", "starts", "ends", "axes", "steps"};
    for (size_t i = 1; i <= 4; ++i) {
      if (in(c, n, i) && !data_of(c, n, i)) TS_RETURN_IF_ERROR(check_shape_arg(c, n, i, kArg[i]));
    }
    const int64_t r = int64_t(x->shape.size());
    auto st = data_of(c, n, 1), en = data_of(c, n, 2);
    std::optional<std::vector<int64_t>> axes;
    if (in(c, n, 3)) axes = ints_of(c, n, 3);
    if (!st || !en || (in(c, n, 3) && !axes)) {
      // Computed per shape but not followed here: the sliced axes' lengths are found at run time.
      Shape s = x->shape;
      if (!axes) s.assign(size_t(r), kUnknown);
      for (int64_t a : axes ? *axes : std::vector<int64_t>{}) {
        const int64_t k = norm_axis(a, r);
        if (k < 0) return node_error(n, "axis " + std::to_string(a) + " out of range for " + shape_to_string(x->shape));
        s[size_t(k)] = kUnknown;
      }
      if (!axes && st) {
        for (size_t i = 0; i < st->size() && i < size_t(r); ++i) s[i] = kUnknown;
        for (size_t i = st->size(); i < size_t(r); ++i) s[i] = x->shape[i];
      }
      return set_out(c, n, 0, x->dtype, s);
    }
    if (st->size() != en->size()) return node_error(n, "starts and ends differ in length");
    if (!axes) {
      axes.emplace();
      for (size_t i = 0; i < st->size(); ++i) axes->push_back(int64_t(i));
    }
    if (axes->size() != st->size()) return node_error(n, "axes and starts differ in length");
    ShapeData steps(st->size(), Dim{1, {}});
    if (in(c, n, 4)) {
      auto sd = data_of(c, n, 4);
      if (!sd || sd->size() != st->size()) return node_error(n, "steps do not match starts");
      steps = *sd;
    }
    Shape s = x->shape;
    for (size_t i = 0; i < st->size(); ++i) {
      int64_t a = norm_axis((*axes)[i], r);
      if (a < 0) return node_error(n, "axis " + std::to_string((*axes)[i]) + " out of range for " + shape_to_string(x->shape));
      const Dim& d = x->shape[size_t(a)];
      const Dim &bd = (*st)[i], &ed = (*en)[i], &sd = steps[i];
      if (!is_literal(bd) || !is_literal(ed) || !is_literal(sd)) {
        // x[:, :x.shape[1]] (a causal trim): the whole axis when it is that very dim.
        const bool whole = is_literal(bd) && bd.value == 0 && is_literal(sd) && sd.value == 1 && !is_unknown(ed) && ed == d;
        s[size_t(a)] = whole ? d : kUnknown;
        continue;
      }
      int64_t b = bd.value, e = ed.value, step = sd.value;
      if (step == 0) return node_error(n, "step 0");
      if (d.is_known()) {
        int64_t len = d.value;
        if (b < 0) b += len;
        if (e < 0) e += len;
        if (step > 0) {
          b = std::clamp<int64_t>(b, 0, len);
          e = std::clamp<int64_t>(e, 0, len);
          s[size_t(a)] = Dim::known(e > b ? (e - b + step - 1) / step : 0);
        } else {
          b = std::clamp<int64_t>(b, 0, len - 1);
          e = std::clamp<int64_t>(e, -1, len - 1);
          s[size_t(a)] = Dim::known(b > e ? (b - e - step - 1) / -step : 0);
        }
      } else if (step == 1 && b == 0 && e >= kBig / 4) {
        s[size_t(a)] = d;
      } else if (step == 1 && b < 0 && (e >= kBig / 4 || (e <= 0 && e > b))) {
        s[size_t(a)] = Dim::known((e >= kBig / 4 ? 0 : e) - b);  // a tail of fixed length
      } else if (step == 1 && b >= 0 && e >= 0 && e < kBig / 4) {
        s[size_t(a)] = Dim::known(e - b);  // assumes the symbolic dim is at least `e`
      } else {
        s[size_t(a)] = kUnknown;
      }
    }
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "Gather") {
    const Value* idx = in(c, n, 1);
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    TS_RETURN_IF_ERROR(need_rank(n, idx, 1));
    int64_t r = int64_t(x->shape.size()), axis = norm_axis(n.attr_i("axis", 0), r);
    if (axis < 0) return node_error(n, "axis out of range for " + shape_to_string(x->shape));
    Shape s(x->shape.begin(), x->shape.begin() + axis);
    s.insert(s.end(), idx->shape.begin(), idx->shape.end());
    s.insert(s.end(), x->shape.begin() + axis + 1, x->shape.end());
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "Concat") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    int64_t r = int64_t(x->shape.size()), axis = norm_axis(n.attr_i("axis", 0), r);
    if (axis < 0) return node_error(n, "axis out of range");
    Shape s = x->shape;
    std::vector<Dim> parts;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = in(c, n, i);
      TS_RETURN_IF_ERROR(need_rank(n, v, i));
      if (int64_t(v->shape.size()) != r) return node_error(n, "inputs differ in rank");
      for (int64_t k = 0; k < r; ++k) {
        if (k == axis) continue;
        const Dim &a = s[size_t(k)], &b = v->shape[size_t(k)];
        if (a.is_known() && b.is_known() && a.value != b.value) {
          return node_error(n, "input " + std::to_string(i) + " " + shape_to_string(v->shape) +
                                   " does not match " + shape_to_string(x->shape) + " off axis " + std::to_string(axis));
        }
        if (!a.is_known() && b.is_known()) s[size_t(k)] = b;
      }
      parts.push_back(v->shape[size_t(axis)]);
    }
    int64_t k = 0;
    bool known = true;
    for (auto& d : parts) {
      if (d.is_known()) k += d.value;
      else known = false;
    }
    s[size_t(axis)] = known ? Dim::known(k) : kUnknown;
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "Shape") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto it = c.sdata.find(n.outputs[0]);
    return set_out(c, n, 0, DType::kI64, {Dim::known(int64_t(it->second.size()))});
  }
  if (op == "ConstantOfShape" || op == "Expand") {
    size_t si = op == "Expand" ? 1 : 0;
    auto t = data_of(c, n, si);
    Shape s;
    if (t) {
      s = *t;
    } else {
      TS_RETURN_IF_ERROR(check_shape_arg(c, n, si, "shape"));
      const Value* sv = in(c, n, si);
      if (!sv || !sv->rank_known || sv->shape.size() != 1 || !sv->shape[0].is_known()) {
        return node_error(n, "shape input has unknown length");
      }
      s = Shape(size_t(sv->shape[0].value));
    }
    if (op == "ConstantOfShape") {
      DType dt = n.has_attr("value_dtype") ? DType(n.attr_i("value_dtype", 0)) : DType::kF32;
      return set_out(c, n, 0, dt, s);
    }
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto b = broadcast(n, x->shape, s);
    if (!b) return b.status();
    return set_out(c, n, 0, x->dtype, b.value());
  }
  if (op == "Range") {
    for (size_t i = 0; i < 3; ++i) {
      const Value* v = in(c, n, i);
      TS_RETURN_IF_ERROR(need_rank(n, v, i));
      if (!v->shape.empty()) return node_error(n, "input " + std::to_string(i) + " must be a scalar, got " + shape_to_string(v->shape));
      static const char* kArg[] = {"start", "limit", "delta"};
      TS_RETURN_IF_ERROR(check_shape_arg(c, n, i, kArg[i]));
    }
    auto a = ints_of(c, n, 0), b = ints_of(c, n, 1), d = ints_of(c, n, 2);
    if (d && (*d)[0] == 0) return node_error(n, "delta is 0");
    Dim len = a && b && d ? Dim::known(range_count((*a)[0], (*b)[0], (*d)[0])) : kUnknown;
    return set_out(c, n, 0, x->dtype, {len});
  }
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax") {
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    auto axes = axes_of(c, n, 1);
    if (!axes) return node_error(n, "axes are not constant");
    int64_t r = int64_t(x->shape.size());
    bool keep = n.attr_i("keepdims", 1) != 0;
    std::vector<bool> red(size_t(r), axes->empty());
    for (auto a : *axes) {
      int64_t k = norm_axis(a, r);
      if (k < 0) return node_error(n, "axis " + std::to_string(a) + " out of range for " + shape_to_string(x->shape));
      red[size_t(k)] = true;
    }
    Shape s;
    for (int64_t i = 0; i < r; ++i) {
      if (!red[size_t(i)]) s.push_back(x->shape[size_t(i)]);
      else if (keep) s.push_back(Dim::known(1));
    }
    return set_out(c, n, 0, x->dtype, s);
  }
  if (op == "FusedAttention") {  // (q, k, v) → q's shape with v's last dim
    const Value* v = in(c, n, 2);
    TS_RETURN_IF_ERROR(need_rank(n, x, 0));
    TS_RETURN_IF_ERROR(need_rank(n, v, 2));
    Shape s = x->shape;
    s.back() = v->shape.back();
    return set_out(c, n, 0, x->dtype, s);
  }
  return Status(StatusCode::kUnsupported, passes::where(n) + ": unsupported op '" + op + "' (no shape inference)");
}

}  // namespace

Status infer_shapes(Graph& g, PassLog& log) {
  Ctx c{g, {}, std::vector<bool>(g.values.size(), false), std::vector<int>(g.values.size(), -1)};
  for (ValueId id : g.inputs) {
    // Integer inputs may be shape inputs the user gives (TensorRT's shape tensors), and a
    // scalar is a parameter the user gives (Range's start); the rest is data.
    const Value& v = g.value(id);
    const bool scalar = v.rank_known && v.shape.empty();
    c.data_dep[size_t(id)] = v.dtype != DType::kI64 && v.dtype != DType::kI32 && !scalar;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    bool dep = false;
    if (n.op != "Shape") {
      for (ValueId u : n.inputs) dep = dep || (u != kNoValue && c.data_dep[size_t(u)]);
    }
    for (ValueId o : n.outputs) {
      if (o == kNoValue) continue;
      c.data_dep[size_t(o)] = dep;
      c.producer[size_t(o)] = int(i);
    }
    track_data(c, n);
    TS_RETURN_IF_ERROR(infer_node(c, n));
  }
  size_t symbolic = 0;
  for (const auto& v : g.values) symbolic += v.rank_known && !shape_is_known(v.shape) ? 1 : 0;
  log.lines.push_back("infer_shapes: " + std::to_string(g.nodes.size()) + " nodes, " +
                      std::to_string(symbolic) + " values with symbolic dims");
  return Status::ok();
}

}  // namespace ts::engine
