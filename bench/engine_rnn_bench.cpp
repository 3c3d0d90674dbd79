// GRU-2x128 / LSTM-2x128 (F=32, T=60, hidden 128; GRU with linear_before_reset=1 as PyTorch
// exports it) on the CPU backend, one thread: ticksentry's recurrence "avx2_blocked" with FP32
// recurrent weights, the same with BF16 ones (precision bf16), and oneDNN's RNN primitives
// (tactic "onednn", FP32), timed in turn (runs of 50) in the same benchmark, so machine load
// hits all alike. Counters: per-run medians and minima (µs) of each over all iterations, and
// the ratios of the medians to avx2_blocked FP32.
//   engine_rnn_bench [--benchmark_filter=Gru]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/backends/cpu/cpu_backend.h"
#include "engine/backends/cpu/cpu_rnn.h"
#include "engine/ir/graph.h"
#include "engine/runtime.h"

namespace {

using namespace ts::engine;

std::vector<float> random_vec(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

ValueId add_const(Graph& g, const std::string& name, const std::vector<int64_t>& dims, const void* data,
                  size_t bytes, DType t = DType::kF32) {
  Value v;
  v.name = name;
  v.dtype = t;
  for (int64_t d : dims) v.shape.push_back(Dim::known(d));
  v.rank_known = true;
  v.is_constant = true;
  v.data.resize(bytes);
  std::memcpy(v.data.data(), data, bytes);
  return g.add_value(v);
}

ValueId add_value(Graph& g, const std::string& name) {
  Value v;
  v.name = name;
  return g.add_value(v);
}

// X [T, B, F] → RNN(128) → Squeeze(axis 1) → RNN(128) → Y_h, as torch.onnx.export lays it out.
Graph rnn_2x128(bool lstm, int64_t f = 32, int64_t hs = 128) {
  Graph g;
  Value x;
  x.name = "x";
  x.shape = {Dim::sym("seq"), Dim::sym("batch"), Dim::known(f)};
  x.rank_known = true;
  ValueId xi = g.add_value(x);
  g.inputs.push_back(xi);
  const int64_t ng = lstm ? 4 : 3;
  const float sc = 1.0f / std::sqrt(float(hs));
  ValueId prev = xi;
  int64_t in = f;
  for (int layer = 0; layer < 2; ++layer) {
    const std::string s = std::to_string(layer);
    auto w = random_vec(size_t(ng * hs * in), uint32_t(10 * layer + 1), sc);
    auto r = random_vec(size_t(ng * hs * hs), uint32_t(10 * layer + 2), sc);
    auto b = random_vec(size_t(2 * ng * hs), uint32_t(10 * layer + 3), sc);
    ValueId wi = add_const(g, "W" + s, {1, ng * hs, in}, w.data(), w.size() * 4);
    ValueId ri = add_const(g, "R" + s, {1, ng * hs, hs}, r.data(), r.size() * 4);
    ValueId bi = add_const(g, "B" + s, {1, 2 * ng * hs}, b.data(), b.size() * 4);
    ValueId y = add_value(g, "y" + s), yh = add_value(g, "yh" + s);
    Node n;
    n.name = "/rnn" + s;
    n.op = lstm ? "LSTM" : "GRU";
    n.inputs = {prev, wi, ri, bi};
    n.outputs = {y, yh};
    n.attrs["hidden_size"] = hs;
    if (!lstm) n.attrs["linear_before_reset"] = int64_t(1);
    g.nodes.push_back(n);
    if (layer == 0) {
      const int64_t ax = 1;
      ValueId axes = add_const(g, "ax", {1}, &ax, sizeof(ax), DType::kI64);
      ValueId sq = add_value(g, "s" + s);
      Node q;
      q.name = "/squeeze";
      q.op = "Squeeze";
      q.inputs = {y, axes};
      q.outputs = {sq};
      g.nodes.push_back(q);
      prev = sq;
      in = hs;
    } else {
      g.outputs.push_back(yh);
    }
  }
  return g;
}

// Every node with its default tactic, GRU/LSTM with `rnn_tactic` (and BF16 recurrent weights
// when bf16).
std::shared_ptr<const Program> prepare(Graph g, const std::string& rnn_tactic, bool bf16) {
  const Backend& be = cpu_backend();
  auto p = std::make_shared<Program>();
  for (Node& n : g.nodes) n.tactic = (n.op == "GRU" || n.op == "LSTM") ? rnn_tactic : be.tactics(g, n).front();
  for (const Node& n : g.nodes) {
    auto k = (n.op == "GRU" || n.op == "LSTM") ? cpu::make_rnn_kernel(g, n, n.tactic, bf16) : be.make_kernel(g, n, n.tactic);
    if (!k) return nullptr;
    p->kernels.push_back(std::move(k.value()));
  }
  p->graph = std::move(g);
  return p;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

void bm_rnn(benchmark::State& state, bool lstm) {
  const int64_t batch = state.range(0);
  Graph g = rnn_2x128(lstm);
  struct Variant {
    const char* name;
    std::shared_ptr<const Program> prog;
    std::vector<double> us;
  };
  Variant vs[3] = {{"blocked_fp32", prepare(g, "avx2_blocked", false), {}},
                   {"blocked_bf16", prepare(g, "avx2_blocked", true), {}},
                   {"onednn_fp32", prepare(g, "onednn", false), {}}};
  std::vector<std::unique_ptr<Executor>> ex;
  for (auto& v : vs) {
    if (!v.prog) {
      state.SkipWithError("prepare failed");
      return;
    }
    ex.push_back(std::make_unique<Executor>(v.prog));
  }
  std::vector<float> xd = random_vec(size_t(60 * batch * 32), 9, 1.0f);
  std::vector<int64_t> dims = {60, batch, 32};
  std::vector<TensorView> in = {TensorView{DType::kF32, dims, xd.data()}};
  for (int i = 0; i < 20; ++i) {
    for (auto& e : ex) {
      if (!e->run(in)) {
        state.SkipWithError("run failed");
        return;
      }
    }
  }
  // Variants in turn, runs of 50 inferences (their packed weights do not all fit in L2
  // together, so per-inference alternation would time cold caches); the first 2 inferences after
  // each switch warm the caches and are not counted.
  int64_t i = 0;
  for (auto _ : state) {
    const size_t which = size_t(i / 50) % 3;
    const bool warm = i % 50 >= 2;
    ++i;
    auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(ex[which]->run(in));
    auto t1 = std::chrono::steady_clock::now();
    if (warm) vs[which].us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  const double base = median(vs[0].us);
  for (auto& v : vs) {
    const double m = median(v.us);
    state.counters[std::string(v.name) + "_p50_us"] = m;
    state.counters[std::string(v.name) + "_min_us"] = v.us.empty() ? 0.0 : *std::min_element(v.us.begin(), v.us.end());
    if (&v != &vs[0]) state.counters[std::string(v.name) + "_over_blocked_fp32"] = base > 0 ? m / base : 0.0;
  }
  state.counters["runs_each"] = double(vs[0].us.size());
}

void BM_Gru2x128(benchmark::State& state) { bm_rnn(state, false); }
void BM_Lstm2x128(benchmark::State& state) { bm_rnn(state, true); }

// Iterations are split between the three variants: ≥ 1000 counted runs each at batch 1.
BENCHMARK(BM_Gru2x128)->Arg(1)->Iterations(3300)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gru2x128)->Arg(16)->Arg(256)->Iterations(600)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Lstm2x128)->Arg(1)->Iterations(3300)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
