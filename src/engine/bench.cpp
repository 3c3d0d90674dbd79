// run_bench and its helpers (bench.h). The device phase is the cuda backend's
// (backends/cuda/cuda_bench.h); this file includes no CUDA header.
#include "engine/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <random>
#include <sstream>

#ifdef TICKSENTRY_HAVE_CUDA
#include "engine/backends/cuda/cuda_bench.h"
#endif

namespace ts::engine {
namespace {

using Clock = std::chrono::steady_clock;

thread_local bool t_cuda_graphs = true;

Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "cpu";
}

// Pageable host memory, 64-byte aligned (what a caller's own buffers are).
std::shared_ptr<void> pageable(size_t bytes) {
  void* p = ::operator new(std::max<size_t>(bytes, 1), std::align_val_t(64), std::nothrow);
  if (!p) return nullptr;
  return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(64)); });
}

// Warm-up for warm_up_ms (at least 3 calls), then calls timed one by one until both `iterations`
// and `duration_s` are reached. *warm counts the warm-up calls, *wall_s the timed span.
Status time_calls(const std::function<Status()>& call, double warm_up_ms, double duration_s, int iterations,
                  std::vector<double>* us, int* warm, double* wall_s) {
  const auto warm_end = Clock::now() + std::chrono::microseconds(int64_t(warm_up_ms * 1000));
  *warm = 0;
  for (; *warm < 3 || Clock::now() < warm_end; ++*warm) TS_RETURN_IF_ERROR(call());
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::microseconds(int64_t(duration_s * 1e6));
  while (int(us->size()) < iterations || Clock::now() < end) {
    const auto a = Clock::now();
    TS_RETURN_IF_ERROR(call());
    us->push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    if (us->size() >= 10000000) break;
  }
  *wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return Status::ok();
}

// Sets the thread's graph flag for the lifetime of the object (contexts read it at creation).
class GraphsForThisThread {
 public:
  explicit GraphsForThisThread(bool on) : before_(cuda_graphs_for_this_thread()) { set_cuda_graphs_for_this_thread(on); }
  ~GraphsForThisThread() { set_cuda_graphs_for_this_thread(before_); }
  GraphsForThisThread(const GraphsForThisThread&) = delete;
  GraphsForThisThread& operator=(const GraphsForThisThread&) = delete;

 private:
  bool before_;
};

}  // namespace

void set_cuda_graphs_for_this_thread(bool on) { t_cuda_graphs = on; }
bool cuda_graphs_for_this_thread() { return t_cuda_graphs; }

LatencyStats latency_stats(std::vector<double> us, const std::vector<double>& percentiles) {
  LatencyStats s;
  s.count = int64_t(us.size());
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  const auto rank = [&](double p) {  // nearest rank: the smallest value with at least p % at or below it
    const auto n = int64_t(us.size());
    const int64_t k = std::clamp<int64_t>(int64_t(std::ceil(p / 100.0 * double(n))) - 1, 0, n - 1);
    return us[size_t(k)];
  };
  s.min_us = us.front();
  s.max_us = us.back();
  double sum = 0;
  for (double v : us) sum += v;
  s.mean_us = sum / double(us.size());
  s.median_us = rank(50);
  for (double p : percentiles) {
    if (p >= 0 && p <= 100) s.percentiles.emplace_back(p, rank(p));
  }
  return s;
}

std::vector<BenchLayer> describe_layers(const std::string& describe) {
  std::vector<BenchLayer> out;
  std::istringstream d(describe);
  for (std::string line; std::getline(d, line);) {
    if (line.rfind("  [", 0) != 0) continue;
    const size_t close = line.find(']');
    if (close == std::string::npos) continue;
    BenchLayer l;
    try {
      l.index = std::stoi(line.substr(3, close - 3));
    } catch (...) {
      continue;
    }
    std::istringstream w(line.substr(close + 1));
    w >> l.op >> l.name;
    for (std::string tok; w >> tok;) {
      if (tok.rfind("tactic=", 0) == 0) l.tactic = tok.substr(7);
      if (tok.rfind("precision=", 0) == 0) l.precision = tok.substr(10);
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::string describe_precision(const std::string& describe) {
  const std::string first = describe.substr(0, describe.find('\n'));
  const size_t at = first.find("precision ");
  if (at == std::string::npos) return "";
  const size_t from = at + 10;
  const size_t to = first.find_first_of(" ,", from);
  return first.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

Result<BenchReport> run_bench(const Engine& engine, const BenchOptions& o) {
  if (o.iterations <= 0) return invalid("iterations must be positive");
  if (!(o.warm_up_ms >= 0)) return invalid("warm-up must be >= 0 ms");
  if (!(o.duration_s >= 0)) return invalid("duration must be >= 0 s");
  for (double p : o.percentiles) {
    if (!(p >= 0 && p <= 100)) return invalid("percentile " + std::to_string(p) + " is outside [0, 100]");
  }
  BenchReport r;
  r.backend = engine.backend();
  const std::string desc = engine.describe();
  r.precision = describe_precision(desc);
  r.layers = describe_layers(desc);
  r.pageable = o.pageable;
  r.use_cuda_graph = o.use_cuda_graph;
  r.warm_up_ms = o.warm_up_ms;
  r.duration_s = o.duration_s;
  r.iterations_asked = o.iterations;
  r.weight_bytes = engine.weight_bytes();
  r.plan_scratch_max_bytes = engine.device_memory_bytes();

  // Inputs: the named shapes, else the binding's static dims.
  std::map<std::string, std::vector<int64_t>> shapes = o.shapes;
  std::vector<std::shared_ptr<void>> hold;
  std::vector<TensorView> in;
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  const bool cuda = r.backend == "cuda";
  auto host = [&](size_t bytes) { return o.pageable || !cuda ? pageable(bytes) : engine.allocate_host(bytes); };
  for (const BindingInfo& b : engine.inputs()) {
    std::vector<int64_t> dims;
    auto it = shapes.find(b.name);
    if (it != shapes.end()) {
      dims = it->second;
      shapes.erase(it);
    } else if (shape_is_known(b.shape)) {
      for (const Dim& d : b.shape) dims.push_back(d.value);
    } else {
      return invalid("input " + b.name + " " + shape_to_string(b.shape) + " has dynamic dims: give --shapes " + b.name +
                     ":<dims>");
    }
    TensorView v{b.dtype, dims, nullptr};
    auto buf = host(v.bytes());
    if (!buf)
      return Status(StatusCode::kOutOfRange, "allocating " + std::to_string(v.bytes()) + " bytes for input " + b.name);
    std::memset(buf.get(), 0, v.bytes());
    if (b.dtype == DType::kF32) {
      float* x = static_cast<float*>(buf.get());
      for (int64_t k = 0; k < shape_numel(dims); ++k) x[k] = uni(rng);
    }
    v.data = buf.get();
    hold.push_back(buf);
    in.push_back(v);
    r.inputs.emplace_back(b.name, dims);
  }
  if (!shapes.empty()) return invalid("the engine has no input named " + shapes.begin()->first);
  if (!in.empty() && !in[0].dims.empty()) r.batch = in[0].dims[0];

  Result<std::unique_ptr<ExecutionContext>> made = [&] {
    GraphsForThisThread g(o.use_cuda_graph);
    return engine.create_context();
  }();
  if (!made) return made.status();
  ExecutionContext& ctx = *made.value();
  auto dims = ctx.output_dims(in);
  if (!dims) return dims.status();
  std::vector<TensorView> out;
  for (size_t i = 0; i < engine.outputs().size(); ++i) {
    TensorView v{engine.outputs()[i].dtype, dims.value().at(i), nullptr};
    v.capacity_bytes = std::max<size_t>(v.bytes(), 1);
    auto buf = host(v.capacity_bytes);
    if (!buf) return Status(StatusCode::kOutOfRange, "allocating output " + engine.outputs()[i].name);
    v.data = buf.get();
    hold.push_back(buf);
    out.push_back(v);
  }

  std::vector<double> us;
  TS_RETURN_IF_ERROR(time_calls([&] { return ctx.execute(in, out); }, o.warm_up_ms, o.duration_s, o.iterations, &us,
                                &r.warm_up_calls, &r.wall_s));
  r.host_to_host = latency_stats(us, o.percentiles);
  r.throughput_per_s = r.wall_s > 0 ? double(us.size()) / r.wall_s : 0;

#ifdef TICKSENTRY_HAVE_CUDA
  if (cuda) {
    auto info = cuda::device_info();
    if (info) {
      r.device = info.value().name;
      r.driver = info.value().driver;
      r.runtime = info.value().runtime;
    }
    if (o.device_phase) {
      auto t = cuda::device_bench(ctx, in, out, o.warm_up_ms, o.duration_s, o.iterations);
      if (!t) return t.status().with_context("device phase");
      r.device_timed = true;
      r.h2d = latency_stats(t.value().h2d_us, o.percentiles);
      r.compute = latency_stats(t.value().compute_us, o.percentiles);
      r.d2h = latency_stats(t.value().d2h_us, o.percentiles);
      r.host_latency = latency_stats(t.value().total_us, o.percentiles);
      r.enqueue = latency_stats(t.value().enqueue_us, o.percentiles);
      r.device_wall_s = t.value().wall_s;
      r.device_throughput_per_s = t.value().wall_s > 0 ? double(t.value().compute_us.size()) / t.value().wall_s : 0;
    } else {
      r.device_note = "device phase not asked for";
    }
  }
#endif
  if (!cuda) {
    r.device = cpu_model();
    r.device_note = "the " + r.backend + " backend has no device: host-to-host only";
  } else if (!r.device_timed && r.device_note.empty()) {
    r.device_note = "built without the cuda backend";
  }
  r.context_memory_bytes = ctx.memory_bytes();
  r.context = ctx.describe();
  return r;
}

}  // namespace ts::engine
