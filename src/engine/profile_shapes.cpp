// Shape inference at a profile's concrete dims, and the build's trial-run inputs (contract in
// profile_shapes.h).
#include "engine/profile_shapes.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "engine/passes/passes.h"

namespace ts::engine {
namespace {

bool is_int_dtype(DType t) { return t == DType::kI64 || t == DType::kI32; }

// Integer values for an integer input read by node `n` at input index `k`, length `len`.
std::vector<int64_t> int_values_for(const Graph& g, const Node& n, size_t k, int64_t len, std::string* how) {
  auto data_dims = [&]() -> std::vector<int64_t> {
    const Value& x = g.value(n.inputs[0]);
    return shape_is_known(x.shape) ? x.const_dims() : std::vector<int64_t>{};
  };
  std::vector<int64_t> v(size_t(len), 1);
  const std::string& op = n.op;
  if (op == "Reshape" && k == 1) {
    // The data's own dims: with as many values as the rank, the identity; fewer, the last
    // one -1 (merging the rest); more, ones appended.
    auto d = data_dims();
    for (int64_t i = 0; i < len; ++i) v[size_t(i)] = size_t(i) < d.size() ? d[size_t(i)] : 1;
    if (len > 0 && size_t(len) < d.size()) v.back() = -1;
    *how = "the data's dims";
  } else if (op == "Expand" && k == 1) {
    *how = "ones (no broadcast)";
  } else if (op == "Slice" && k >= 1 && k <= 4) {
    const int64_t fill = k == 1 ? 0 : k == 2 ? std::numeric_limits<int64_t>::max() : 1;
    for (int64_t i = 0; i < len; ++i) v[size_t(i)] = k == 3 ? i : fill;
    *how = k == 1 ? "starts 0" : k == 2 ? "ends at the axis' end" : k == 3 ? "axes 0..k-1" : "steps 1";
  } else if ((op == "Unsqueeze" || op == "Squeeze") && k == 1) {
    auto d = data_dims();
    int64_t j = 0;
    for (int64_t i = 0; i < len; ++i) {
      if (op == "Squeeze") {
        while (size_t(j) < d.size() && d[size_t(j)] != 1) ++j;
        v[size_t(i)] = j++;
      } else {
        v[size_t(i)] = i;
      }
    }
    *how = op == "Squeeze" ? "the axes of size 1" : "axes 0..k-1";
  } else if (op == "Gather" && k == 1) {
    std::fill(v.begin(), v.end(), 0);
    *how = "indices 0";
  } else {
    *how = "ones";
  }
  return v;
}

}  // namespace

Result<Graph> graph_at_dims(const Graph& g, const InputDims& dims) {
  Graph h;
  h.nodes = g.nodes;
  h.inputs = g.inputs;
  h.outputs = g.outputs;
  h.opset = g.opset;
  h.values.reserve(g.values.size());
  for (const Value& v : g.values) {
    Value c;
    c.name = v.name;
    c.dtype = v.dtype;
    c.shape = v.shape;
    c.rank_known = v.rank_known;
    c.is_constant = v.is_constant;
    // Float weights stay behind: shape inference reads only their shapes.
    if (v.is_constant && (is_int_dtype(v.dtype) || v.data.size() <= 64)) c.data = v.data;
    h.values.push_back(std::move(c));
  }
  for (ValueId id : h.inputs) {
    auto it = dims.find(h.value(id).name);
    if (it != dims.end()) h.value(id).shape = shape_of(it->second);
  }
  PassLog log;
  TS_RETURN_IF_ERROR(infer_shapes(h, log));
  return h;
}

std::string input_dims_str(const Graph& g, const InputDims& dims) {
  std::string s;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    auto it = dims.find(v.name);
    const std::vector<int64_t> d = it != dims.end() ? it->second : shape_is_known(v.shape) ? v.const_dims() : std::vector<int64_t>{};
    s += (s.empty() ? "" : ",") + v.name + ":" + (d.empty() && !shape_is_known(v.shape) ? std::string("?") : dims_x_str(d));
  }
  return s;
}

Status check_profile_dims(const Graph& g, const std::vector<OptimizationProfile>& profiles, bool user_profiles) {
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (const char* which : {"min", "opt", "max"}) {
      if (!user_profiles && std::strcmp(which, "opt") != 0) continue;
      InputDims d;
      for (const auto& [name, r] : profiles[i].inputs) {
        d[name] = std::strcmp(which, "min") == 0 ? r.min : std::strcmp(which, "opt") == 0 ? r.opt : r.max;
      }
      auto h = graph_at_dims(g, d);
      if (!h) {
        return Status(h.status().code(), "at profile " + std::to_string(i) + "'s " + which + " shapes " +
                                             input_dims_str(g, d) + ": " + h.status().message());
      }
    }
  }
  return Status::ok();
}

std::string fill_trial_input(const Graph& at_opt, ValueId id, TensorView& tv, std::mt19937& rng) {
  const Value& v = at_opt.value(id);
  const int64_t n = shape_numel(tv.dims);
  auto* p = static_cast<uint8_t*>(tv.data);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  switch (tv.dtype) {
    case DType::kF32: for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(p)[i] = uni(rng); return "";
    case DType::kF64: for (int64_t i = 0; i < n; ++i) reinterpret_cast<double*>(p)[i] = uni(rng); return "";
    case DType::kF16: for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(p)[i] = f16_from_f64(uni(rng)); return "";
    case DType::kBF16: for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(p)[i] = bf16_from_f32(uni(rng)); return "";
    case DType::kBool: for (int64_t i = 0; i < n; ++i) p[i] = uint8_t(i % 2 == 0); return "alternating";
    default: break;
  }
  // Integers: by the first node that reads the input as a shape argument.
  std::string how = "ones";
  std::vector<int64_t> vals(size_t(n), 1);
  for (const Node& node : at_opt.nodes) {
    auto it = std::find(node.inputs.begin(), node.inputs.end(), id);
    if (it == node.inputs.end()) continue;
    vals = int_values_for(at_opt, node, size_t(it - node.inputs.begin()), n, &how);
    how = node.op + " " + how;
    break;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = vals[size_t(i)];
    switch (tv.dtype) {
      case DType::kI64: reinterpret_cast<int64_t*>(p)[i] = x; break;
      case DType::kI32: reinterpret_cast<int32_t*>(p)[i] = int32_t(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX)); break;
      default: p[i] = uint8_t(x); break;  // i8/u8
    }
  }
  std::string shown;
  for (int64_t i = 0; i < std::min<int64_t>(n, 8); ++i) {
    const int64_t x = vals[size_t(i)];
    if (i) shown += ',';
    shown += x == std::numeric_limits<int64_t>::max() ? std::string("max") : std::to_string(x);
  }
  return v.name + "=[" + shown + (n > 8 ? ",..." : "") + "] (" + how + ")";
}

}  // namespace ts::engine
