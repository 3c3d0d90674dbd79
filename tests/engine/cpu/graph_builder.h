#pragma once
// Test helper: builds small graphs directly in the IR and runs them on the CPU backend.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/backends/cpu/cpu_backend.h"
#include "engine/engine.h"
#include "engine/ir/graph.h"
#include "engine/runtime.h"

namespace ts::engine::testing {

inline Shape known(const std::vector<int64_t>& d) {
  Shape s;
  for (auto v : d) s.push_back(Dim::known(v));
  return s;
}

struct GraphBuilder {
  Graph g;
  ValueId input(const std::string& name, Shape shape, DType t = DType::kF32) {
    Value v;
    v.name = name;
    v.dtype = t;
    v.shape = std::move(shape);
    v.rank_known = true;
    ValueId id = g.add_value(v);
    g.inputs.push_back(id);
    return id;
  }
  ValueId constant(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& data) {
    Value v;
    v.name = name;
    v.shape = known(dims);
    v.rank_known = true;
    v.is_constant = true;
    v.data.resize(data.size() * 4);
    std::memcpy(v.data.data(), data.data(), v.data.size());
    return g.add_value(v);
  }
  ValueId constant_i64(const std::string& name, const std::vector<int64_t>& data) {
    Value v;
    v.name = name;
    v.dtype = DType::kI64;
    v.shape = known({int64_t(data.size())});
    v.rank_known = true;
    v.is_constant = true;
    v.data.resize(data.size() * 8);
    std::memcpy(v.data.data(), data.data(), v.data.size());
    return g.add_value(v);
  }
  ValueId value(const std::string& name, DType t = DType::kF32) {
    Value v;
    v.name = name;
    v.dtype = t;
    return g.add_value(v);
  }
  Node& node(const std::string& op, std::vector<ValueId> ins, std::vector<ValueId> outs) {
    Node n;
    n.name = "/" + op + std::to_string(g.nodes.size());
    n.op = op;
    n.inputs = std::move(ins);
    n.outputs = std::move(outs);
    g.nodes.push_back(n);
    return g.nodes.back();
  }
  void output(ValueId id) { g.outputs.push_back(id); }
};

struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  TensorView view() { return TensorView{dtype, dims, bytes.data()}; }
  const float* f() const { return reinterpret_cast<const float*>(bytes.data()); }
  float* f() { return reinterpret_cast<float*>(bytes.data()); }
  int64_t numel() const { return shape_numel(dims); }
};

inline HostTensor random_tensor(std::vector<int64_t> dims, uint32_t seed, float scale = 1.0f) {
  HostTensor t;
  t.dims = std::move(dims);
  t.bytes.resize(size_t(shape_numel(t.dims)) * 4);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.f()[i] = u(rng);
  return t;
}

inline std::vector<float> random_vec(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Prepares the graph on the CPU backend (each node with `tactic` if it has it) and runs it once;
// returns the graph outputs (dtype/dims from the run).
inline Result<std::vector<HostTensor>> run_graph(Graph g, std::vector<HostTensor>& inputs,
                                                  const std::string& tactic = "") {
  const Backend& be = cpu_backend();
  for (Node& n : g.nodes) {
    TS_RETURN_IF_ERROR(be.check_supported(g, n));
    auto t = be.tactics(g, n);
    n.tactic = std::find(t.begin(), t.end(), tactic) != t.end() ? tactic : t.front();
  }
  auto program = be.prepare(g);
  if (!program) return program.status();
  Executor ex(program.value());
  std::vector<TensorView> views;
  for (auto& t : inputs) views.push_back(t.view());
  TS_RETURN_IF_ERROR(ex.run(views));
  std::vector<HostTensor> outs(program.value()->graph.outputs.size());
  std::vector<TensorView> ov(outs.size());
  // Run copy_outputs twice: the first fills dims, then allocate and copy.
  std::vector<std::vector<uint8_t>> big(outs.size(), std::vector<uint8_t>(1 << 24));
  for (size_t i = 0; i < outs.size(); ++i) {
    ov[i].dtype = program.value()->graph.value(program.value()->graph.outputs[i]).dtype;
    if (ov[i].dtype == DType::kF32 && false) {}
    ov[i].data = big[i].data();
    ov[i].capacity_bytes = big[i].size();
  }
  // dtype of outputs is decided at run time; read it back from the graph value if set.
  Status s = ex.copy_outputs(ov);
  if (!s) return s;
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].dtype = ov[i].dtype;
    outs[i].dims = ov[i].dims;
    outs[i].bytes.assign(big[i].begin(), big[i].begin() + std::ptrdiff_t(ov[i].bytes()));
  }
  return outs;
}

inline void expect_close(const float* got, const float* want, int64_t n, float rel, float abs_tol,
                         const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i) {
    float tol = abs_tol + rel * std::fabs(want[i]);
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
      ++bad;
    }
  }
}

// The scalar Gather index -1 (the last time step) that a PyTorch head's `y[:, -1]` exports.
inline ValueId last_step_index(GraphBuilder& b) {
  Value last;
  last.name = "last";
  last.dtype = DType::kI64;
  last.rank_known = true;
  last.is_constant = true;
  last.data.resize(8);
  const int64_t minus1 = -1;
  std::memcpy(last.data.data(), &minus1, 8);
  return b.g.add_value(last);
}

// Runs a loaded engine once on a fresh context; each output sized from out_elems floats of room.
inline Result<std::vector<std::vector<float>>> run_engine(Engine& e, std::vector<HostTensor>& inputs,
                                                          size_t out_elems = 1 << 22) {
  auto ctx = e.create_context();
  if (!ctx) return ctx.status();
  std::vector<TensorView> in;
  for (auto& t : inputs) in.push_back(t.view());
  std::vector<std::vector<float>> bufs(e.outputs().size(), std::vector<float>(out_elems));
  std::vector<TensorView> out(e.outputs().size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].data = bufs[i].data();
    out[i].capacity_bytes = bufs[i].size() * sizeof(float);
  }
  TS_RETURN_IF_ERROR(ctx.value()->execute(in, out));
  for (size_t i = 0; i < out.size(); ++i) bufs[i].resize(size_t(shape_numel(out[i].dims)));
  return bufs;
}

}  // namespace ts::engine::testing
