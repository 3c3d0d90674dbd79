// shape_sweep: ticksentry's half of the shape sweep (driver: bench/shape_sweep/shape_sweep.sh,
// on the GPU machine, after bench/shape_sweep/torch_peer.py has written the references).
//
//   shape_sweep --models DIR --work DIR --out FILE [--backend cuda] [--precisions fp16,fp32,bf16]
//               [--batches 1,16,256,4096] [--seq 60] [--min-time-s 0.25] [--only 00,07] [--threads N]
// --threads: cpu backend, threads per call (1 for the one-core comparison with ONNX Runtime).
//
// DIR: export.py's output (cases.json, <name>/model.onnx). WORK: torch_peer.py's references,
// <name>/x_acc.npy ([16, seq, F]) and <name>/y_ref.npy (PyTorch FP32, TF32 off).
// Per case, precision and batch: one plan (profile batch 1..max batch at seq, opt = that batch,
// so the builder times its tactics at the measured shape), one context.
//   accuracy   on the plan of batch 16 (else the first): x_acc through execute(), relative L2
//              error against y_ref (‖out − ref‖ / ‖ref‖); limits FP32 1e-5, FP16 1e-2 (issue 26);
//              also against PyTorch's float64 output (y_ref64.npy) where present.
//   timing     host-to-host: inputs in host memory from Engine::allocate_host (page-locked on
//              cuda), 4 random-normal inputs rotated, warm-up ≥ 10 calls and ≥ 0.1 s (the first
//              calls at a shape capture its CUDA graph), then ≥ 30 calls and ≥ min-time-s, each
//              timed with steady_clock; device-resident: enqueue_on_stream with device buffers,
//              CUDA events (bench/engine_timing.h).
// Writes a JSON array (system "ticksentry"); a case that does not build is recorded with the
// builder's message. Exit 0 even when cases fail: the merge (report.py) judges.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_json.h"
#include "engine/engine.h"
#include "engine/npy.h"
#include "engine_timing.h"

namespace {

using nlohmann::json;
using namespace ts::engine;
using ts::bench::percentile;
using ts::bench::split_csv;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct Args {
  std::string models_dir, work_dir, out, backend = "cuda";
  std::vector<std::string> only, precisions{"fp16", "fp32"};
  std::vector<int64_t> batches{1, 16, 256, 4096};
  int64_t seq = 60;
  double min_time_s = 0.25;
  int threads = 0;  // cpu backend: threads per call (set_cpu_threads_for_this_thread); 0 = library default
};

// The context's "  memory ..." line of its describe() (where its memory_bytes() goes), or "".
std::string memory_line(const std::string& describe) {
  const size_t at = describe.find("  memory ");
  if (at == std::string::npos) return "";
  const size_t end = describe.find('\n', at);
  return describe.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
}

// "op:tactic" per layer of an engine's describe() (lines "  [i] op name tactic=T precision=P").
std::string layer_tactics(const std::string& describe) {
  std::istringstream d(describe);
  std::string out;
  for (std::string line; std::getline(d, line);) {
    if (line.rfind("  [", 0) != 0) continue;
    std::istringstream l(line);
    std::string idx, op, name, tactic;
    l >> idx >> op >> name >> tactic;
    if (tactic.rfind("tactic=", 0) != 0) continue;
    out += (out.empty() ? "" : ";") + op + ":" + tactic.substr(7);
  }
  return out;
}

double rel_l2(const float* out, const HostTensor& ref) {
  const float* r = ref.as<float>();
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double d = double(out[i]) - double(r[i]);
    num += d * d;
    den += double(r[i]) * double(r[i]);
  }
  if (!std::isfinite(num)) return INFINITY;
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

// x_acc through the context; the relative error against y_ref, or an error message.
json check_accuracy(ExecutionContext& ctx, const fs::path& work, double limit) {
  auto x = npy_read((work / "x_acc.npy").string());
  auto y = npy_read((work / "y_ref.npy").string());
  if (!x || !y) return {{"error", "no reference (torch_peer.py did not write it)"}};
  std::vector<float> out(size_t(y.value().numel()) + 16, std::nanf(""));  // poisoned: unwritten shows
  std::vector<TensorView> in{x.value().view()}, outs(1);
  outs[0].data = out.data();
  outs[0].capacity_bytes = out.size() * sizeof(float);
  if (auto s = ctx.execute(in, outs); !s) return {{"error", s.to_string()}};
  if (outs[0].dims != y.value().dims) return {{"error", "output shape differs from PyTorch's"}};
  double e = rel_l2(out.data(), y.value());
  json r = {{"rel_err", e}, {"limit", limit}, {"ok", e <= limit}};
  // PyTorch's float64 output on the CPU, where torch_peer.py wrote it: which side an FP32
  // disagreement comes from.
  if (auto y64 = npy_read((work / "y_ref64.npy").string()); y64 && y64.value().dtype == DType::kF64) {
    const double* r64 = y64.value().as<double>();
    double num = 0, den = 0;
    for (int64_t i = 0; i < y64.value().numel() && i < y.value().numel(); ++i) {
      num += (double(out[size_t(i)]) - r64[i]) * (double(out[size_t(i)]) - r64[i]);
      den += r64[i] * r64[i];
    }
    r["rel_err_vs_fp64"] = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
  }
  return r;
}

struct Case {
  std::string name;
  int64_t features = 0;
};

json run_one(const Args& a, const Case& c, const std::vector<uint8_t>& onnx, const std::string& prec, int64_t b,
             int64_t max_batch, bool with_accuracy) {
  json row = {{"system", "ticksentry"},
              {"case", {{"arch", c.name}, {"precision", prec}, {"batch", b}, {"seq", a.seq}, {"backend", a.backend}}}};
  BuildOptions o;
  o.backend = a.backend;
  o.precision = prec == "fp16" ? Precision::kFP16 : prec == "bf16" ? Precision::kBF16 : Precision::kFP32;
  o.workspace_bytes = int64_t(4) << 30;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, a.seq, c.features}, {b, a.seq, c.features}, {max_batch, a.seq, c.features}};
  o.profiles = {p};
  auto t0 = Clock::now();
  auto plan = build(onnx, o);
  if (!plan) {
    row["error"] = "build: " + plan.status().to_string();
    return row;
  }
  double build_s = std::chrono::duration<double>(Clock::now() - t0).count();
  auto eng = Engine::load(plan.value());
  if (!eng) {
    row["error"] = "load: " + eng.status().to_string();
    return row;
  }
  auto ctx = eng.value()->create_context();
  if (!ctx) {
    row["error"] = "context: " + ctx.status().to_string();
    return row;
  }
  row["tactics"] = layer_tactics(eng.value()->describe());
  if (with_accuracy) row["accuracy"] = check_accuracy(*ctx.value(), fs::path(a.work_dir) / c.name, prec == "fp16" ? 1e-2 : 1e-5);

  const size_t in_elems = size_t(b * a.seq * c.features);
  std::vector<std::shared_ptr<void>> pool;
  std::mt19937 rng(uint32_t(b * 7 + 1));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int q = 0; q < 4; ++q) {
    auto buf = eng.value()->allocate_host(in_elems * sizeof(float));
    if (!buf) {
      row["error"] = "allocate_host failed";
      return row;
    }
    float* x = static_cast<float*>(buf.get());
    for (size_t i = 0; i < in_elems; ++i) x[i] = nd(rng);
    pool.push_back(buf);
  }
  auto dims = ctx.value()->output_dims(std::vector<TensorView>{TensorView{DType::kF32, {b, a.seq, c.features}, pool[0].get()}});
  if (!dims) {
    row["error"] = "output_dims: " + dims.status().to_string();
    return row;
  }
  size_t out_elems = 1;
  for (int64_t d : dims.value().at(0)) out_elems *= size_t(d);
  auto out = eng.value()->allocate_host(out_elems * sizeof(float));
  std::vector<TensorView> in(1), outs(1);
  in[0] = TensorView{DType::kF32, {b, a.seq, c.features}, nullptr};
  outs[0].data = out.get();
  outs[0].capacity_bytes = out_elems * sizeof(float);
  auto h = ts::bench::time_host_calls(
      [&](int q) {
        in[0].data = pool[size_t(q % 4)].get();
        return ctx.value()->execute(in, outs);
      },
      10, 0.1, 30, a.min_time_s);
  if (!h.error.empty()) {
    row["error"] = "execute: " + h.error;
    return row;
  }
  double p50 = percentile(h.us, 0.5);
  json m = {{"p50_us", p50},
            {"p99_us", percentile(h.us, 0.99)},
            {"iterations", h.us.size()},
            {"build_s", build_s}};
  const int64_t after_h2h = ctx.value()->memory_bytes();
  auto dev = ts::bench::time_device_resident(*ctx.value(), pool[0].get(), {b, a.seq, c.features}, in_elems * sizeof(float),
                                             out_elems * sizeof(float), 0);
  // The context after both paths (enqueue_on_stream may grow what a pipelined bucket shrank),
  // plus the weights: what this model at this batch holds, against PyTorch's peak for the case.
  m["device_memory_bytes"] = std::max(after_h2h, ctx.value()->memory_bytes()) + eng.value()->weight_bytes();
  m["weight_bytes"] = eng.value()->weight_bytes();
  m["memory_detail"] = memory_line(ctx.value()->describe());
  if (dev.error.empty()) {
    m["device_p50_us"] = dev.p50_us;
    m["device_p99_us"] = dev.p99_us;
  } else {
    row["device_error"] = dev.error;
  }
  row["metrics"] = m;
  return row;
}

int usage() {
  std::fprintf(stderr,
               "usage: shape_sweep --models DIR --work DIR --out FILE [--backend cuda] [--precisions fp16,fp32] "
               "[--batches 1,16,256,4096] [--seq 60] [--min-time-s 0.25] [--only 00,07] [--threads N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--models") a.models_dir = next();
    else if (k == "--work") a.work_dir = next();
    else if (k == "--out") a.out = next();
    else if (k == "--backend") a.backend = next();
    else if (k == "--only") a.only = split_csv(next());
    else if (k == "--precisions") a.precisions = split_csv(next());
    else if (k == "--batches") {
      a.batches.clear();
      for (auto& s : split_csv(next())) a.batches.push_back(std::stoll(s));
    } else if (k == "--seq") a.seq = std::stoll(next());
    else if (k == "--min-time-s") a.min_time_s = std::stod(next());
    else if (k == "--threads") a.threads = std::stoi(next());
    else return usage();
  }
  if (a.models_dir.empty() || a.work_dir.empty() || a.out.empty() || a.batches.empty()) return usage();
  if (a.threads > 0) set_cpu_threads_for_this_thread(a.threads);
  std::ifstream lf(fs::path(a.models_dir) / "cases.json");
  if (!lf) {
    std::fprintf(stderr, "shape_sweep: no cases.json in %s\n", a.models_dir.c_str());
    return 2;
  }
  const json listing = json::parse(lf);
  const int64_t max_batch = *std::max_element(a.batches.begin(), a.batches.end());
  // Accuracy on the plan whose opt batch is 16 (the reference's batch), else the first.
  const int64_t acc_batch =
      std::find(a.batches.begin(), a.batches.end(), 16) != a.batches.end() ? 16 : a.batches.front();
  json results = json::array();
  std::printf("%-50s %-5s %5s %10s %10s %9s %s\n", "arch", "prec", "batch", "p50_us", "dev_p50", "rel_err", "build_s");
  for (const json& e : listing.at("cases")) {
    Case c{e.at("name").get<std::string>(), e.at("features").get<int64_t>()};
    if (!a.only.empty() &&
        std::none_of(a.only.begin(), a.only.end(), [&](const std::string& p) { return c.name.rfind(p, 0) == 0; }))
      continue;
    if (e.contains("export_error")) {
      results.push_back({{"system", "ticksentry"}, {"case", {{"arch", c.name}}}, {"error", "export failed"}});
      continue;
    }
    std::ifstream f(fs::path(a.models_dir) / c.name / "model.onnx", std::ios::binary);
    std::vector<uint8_t> onnx((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (const auto& prec : a.precisions) {
      for (int64_t b : a.batches) {
        json row = run_one(a, c, onnx, prec, b, max_batch, b == acc_batch);
        if (row.contains("error")) {
          std::printf("%-50s %-5s %5lld  %s\n", c.name.c_str(), prec.c_str(), (long long)b,
                      row["error"].get<std::string>().substr(0, 200).c_str());
        } else {
          const json& m = row["metrics"];
          std::string acc;
          if (row.contains("accuracy") && row["accuracy"].contains("rel_err")) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.2e", row["accuracy"]["rel_err"].get<double>());
            acc = buf;
          } else if (row.contains("accuracy")) {
            acc = row["accuracy"]["error"].get<std::string>();
          }
          std::printf("%-50s %-5s %5lld %10.1f %10.1f %9s %.2f\n", c.name.c_str(), prec.c_str(), (long long)b,
                      m["p50_us"].get<double>(), m.value("device_p50_us", NAN), acc.substr(0, 60).c_str(),
                      m["build_s"].get<double>());
        }
        std::fflush(stdout);
        results.push_back(std::move(row));
        // A case that does not build fails at every batch the same way: record it once per precision.
        if (results.back().contains("error") && results.back()["error"].get<std::string>().rfind("build:", 0) == 0)
          break;
      }
      std::ofstream(a.out) << results.dump(1) << "\n";  // after every case: a stopped run keeps what it measured
    }
  }
  std::ofstream(a.out) << results.dump(1) << "\n";
  std::printf("wrote %s\n", a.out.c_str());
  return 0;
}
