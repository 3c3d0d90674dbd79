// engine_cuda_bench: host-to-host latency and throughput of ticksentry's CUDA backend (driver:
// bench/engine_cuda_bench.sh, which runs the PyTorch peers in the same call and merges).
//
//   engine_cuda_bench --models DIR [--only gru-2x128,lstm-2x128] [--precisions fp32,fp16]
//                     [--batches 1,16,256,1024,4096] [--seq 60] [--min-time-s 1.0] --out FILE
//
// DIR holds <model>/model.onnx (bench/peers/export_models.py). Per model, precision and batch:
// one plan (profile batch 1..max batch at the given seq, opt = that batch, so the builder times
// tactics at the measured shape, as engine_bench does), one context. Per batch: inputs in host
// memory from Engine::allocate_host (page-locked on cuda), a pool of 4 random-normal inputs
// rotated, warm-up (≥ 20 runs and ≥ 0.2 s: the first runs at a shape capture its CUDA graph),
// then ExecutionContext::execute() timed run by run with steady_clock until ≥ min-time-s and
// ≥ 200 runs. Host-to-host: input in host memory → probabilities in host memory.
// Writes a JSON array of results (system "ticksentry"; p50/p99 nearest rank, µs;
// throughput_per_s = batch / p50; device_memory_bytes = the context's device memory after the
// runs + the engine's weights; "context": the context's describe() — its batch buckets and,
// per bucket, the zero-copy vs pinned-copy times measured at capture and the path kept). A
// model the backend cannot build is reported and skipped.
// Device-resident (built with the cuda backend): the same context through enqueue_on_stream
// with input and output in device memory, timed like the PyTorch peer's CUDA-graph replay
// (torch_cuda_bench.py "device_p50_us"): warm-up, then 200 (event, enqueue, event) triples
// queued back to back on one stream, one synchronize, P50/P99 of the per-call event times
// ("device_p50_us", "device_p99_us"; "device_throughput_per_s" = batch / device P50). This is
// the figure the PyTorch reference throughputs are (no PCIe in it); host-to-host stays
// the headline.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_json.h"
#include "engine_timing.h"
#include "engine/engine.h"
#include "engine/npy.h"

namespace {

using nlohmann::json;
using namespace ts::engine;
using Clock = std::chrono::steady_clock;
using ts::bench::percentile;
using ts::bench::split_csv;

struct Args {
  std::string models_dir, out;
  std::vector<std::string> only{"gru-2x128", "lstm-2x128"};
  std::vector<std::string> precisions{"fp32", "fp16"};
  std::vector<int64_t> batches{1, 16, 256, 1024, 4096};
  int64_t seq = 60;
  double min_time_s = 1.0;
  std::string timing_cache_dir;  // per plan DIR/<model>-<precision>-b<batch>.tsv: the builder's tactic times (ns)
};

int usage() {
  std::fprintf(stderr,
               "usage: engine_cuda_bench --models DIR [--only m1,m2] [--precisions fp32,fp16,tf32,int8] "
               "[--batches 1,16] [--seq 60] [--min-time-s 1] [--timing-cache-dir DIR] --out FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const std::string command = ts::bench::command_line(argc, argv);  // recorded in each result row
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--models") a.models_dir = next();
    else if (k == "--out") a.out = next();
    else if (k == "--only") a.only = split_csv(next());
    else if (k == "--timing-cache-dir") a.timing_cache_dir = next();
    else if (k == "--precisions") a.precisions = split_csv(next());
    else if (k == "--batches") {
      a.batches.clear();
      for (auto& s : split_csv(next())) a.batches.push_back(std::stoll(s));
    } else if (k == "--seq") a.seq = std::stoll(next());
    else if (k == "--min-time-s") a.min_time_s = std::stod(next());
    else return usage();
  }
  if (a.models_dir.empty() || a.out.empty() || a.batches.empty()) return usage();
  const int64_t max_batch = *std::max_element(a.batches.begin(), a.batches.end());
  const int64_t features = 32;
  json results = json::array();
  std::printf("%-12s %-5s %6s %10s %10s %14s %12s\n", "model", "prec", "batch", "p50_us", "p99_us", "seq_per_s", "dev_MiB");
  for (const auto& model : a.only) {
    std::ifstream f(std::filesystem::path(a.models_dir) / model / "model.onnx", std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "%s: no model.onnx, skipped\n", model.c_str());
      continue;
    }
    std::vector<uint8_t> onnx((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (const auto& prec : a.precisions) {
      for (int64_t b : a.batches) {
        BuildOptions o;
        o.backend = "cuda";
        o.precision = prec == "fp16" ? Precision::kFP16 : prec == "int8" ? Precision::kINT8 : Precision::kFP32;
        o.tf32 = prec == "tf32";
        if (prec == "int8") {
          // Calibration (quantize.h) on 1,000 random-normal windows, written once; the cache makes
          // the builds after the first batch skip recalibrating. Speed, not accuracy, is measured
          // here (accuracy: the AUC test on real windows).
          const std::string calib = a.out + ".calib.npy";
          if (!std::filesystem::exists(calib)) {
            std::vector<float> w(size_t(1000 * a.seq * features));
            std::mt19937 crng(7);
            std::normal_distribution<float> cn(0.0f, 1.0f);
            for (float& v : w) v = cn(crng);
            std::vector<int64_t> dims{1000, a.seq, features};
            if (!ts::engine::npy_write(calib, DType::kF32, dims, w.data())) return 1;
          }
          o.calibration_data = calib;
          o.calibration_cache = a.out + "." + model + ".calib";
        }
        o.workspace_bytes = int64_t(4) << 30;
        OptimizationProfile p;
        p.inputs["x"] = ShapeRange{{1, a.seq, features}, {b, a.seq, features}, {max_batch, a.seq, features}};
        o.profiles = {p};
        if (!a.timing_cache_dir.empty()) {
          o.timing_cache_path = a.timing_cache_dir + "/" + model + "-" + prec + "-b" + std::to_string(b) + ".tsv";
        }
        auto t0 = Clock::now();
        auto plan = build(onnx, o);
        if (!plan) {
          std::fprintf(stderr, "%s %s: build failed: %s\n", model.c_str(), prec.c_str(), plan.status().to_string().c_str());
          results.push_back({{"system", "ticksentry"},
                             {"case", {{"model", model}, {"precision", prec}, {"seq", a.seq}}},
                             {"error", plan.status().message()}});
          continue;
        }
        double build_s = std::chrono::duration<double>(Clock::now() - t0).count();
        auto eng = Engine::load(plan.value());
        if (!eng) {
          std::fprintf(stderr, "%s: load failed: %s\n", model.c_str(), eng.status().to_string().c_str());
          return 1;
        }
        auto ctx = eng.value()->create_context();
        if (!ctx) {
          std::fprintf(stderr, "%s: context failed: %s\n", model.c_str(), ctx.status().to_string().c_str());
          return 1;
        }
        std::string rnn_tactics;  // what the builder chose for the recurrent layers
        int int8_layers = 0;      // layers an int8 plan runs in INT8
        {
          std::istringstream d(eng.value()->describe());
          for (std::string line; std::getline(d, line);) {
            if (line.find("precision=int8") != std::string::npos) ++int8_layers;
            if (line.find("GRU") == std::string::npos && line.find("LSTM") == std::string::npos) continue;
            auto at = line.find("tactic=");
            if (at == std::string::npos) continue;
            if (!rnn_tactics.empty()) rnn_tactics += ",";
            rnn_tactics += line.substr(at + 7, line.find(' ', at) - at - 7);
          }
        }
        {
          const size_t in_elems = size_t(b * a.seq * features);
          const size_t out_elems = size_t(b * a.seq * 8);
          std::vector<std::shared_ptr<void>> pool;
          std::mt19937 rng(uint32_t(b * 7 + 1));
          std::normal_distribution<float> nd(0.0f, 1.0f);
          for (int q = 0; q < 4; ++q) {
            auto buf = eng.value()->allocate_host(in_elems * sizeof(float));
            if (!buf) {
              std::fprintf(stderr, "allocate_host failed\n");
              return 1;
            }
            float* x = static_cast<float*>(buf.get());
            for (size_t i = 0; i < in_elems; ++i) x[i] = nd(rng);
            pool.push_back(buf);
          }
          auto out = eng.value()->allocate_host(out_elems * sizeof(float));
          std::vector<TensorView> in(1), outs(1);
          in[0] = TensorView{DType::kF32, {b, a.seq, features}, nullptr};
          outs[0].data = out.get();
          outs[0].capacity_bytes = out_elems * sizeof(float);
          auto run_once = [&](int q) -> ts::Status {
            in[0].data = pool[size_t(q % 4)].get();
            return ctx.value()->execute(in, outs);
          };
          auto w_end = Clock::now() + std::chrono::milliseconds(200);
          int q = 0;
          for (int w = 0; w < 20 || Clock::now() < w_end; ++w) {
            auto s = run_once(q++);
            if (!s) {
              std::fprintf(stderr, "%s %s batch %lld: %s\n", model.c_str(), prec.c_str(), (long long)b,
                           s.to_string().c_str());
              return 1;
            }
          }
          std::vector<double> us;
          auto end = Clock::now() + std::chrono::duration<double>(a.min_time_s);
          while (us.size() < 200 || Clock::now() < end) {
            auto r0 = Clock::now();
            auto s = run_once(q++);
            auto r1 = Clock::now();
            if (!s) {
              std::fprintf(stderr, "run failed: %s\n", s.to_string().c_str());
              return 1;
            }
            us.push_back(std::chrono::duration<double, std::micro>(r1 - r0).count());
            if (us.size() >= 200000) break;
          }
          std::sort(us.begin(), us.end());
          double p50 = percentile(us, 0.5), p99 = percentile(us, 0.99);
          int64_t mem = ctx.value()->memory_bytes() + eng.value()->weight_bytes();
          auto dev = ts::bench::time_device_resident(*ctx.value(), pool[0].get(), {b, a.seq, features},
                                                     in_elems * sizeof(float), out_elems * sizeof(float));
          double tput = double(b) / (p50 * 1e-6);
          const std::string context = ctx.value()->describe();
          std::printf("%-12s %-5s %6lld %10.1f %10.1f %14.0f %12.1f  %s\n", model.c_str(), prec.c_str(), (long long)b, p50,
                      p99, tput, double(mem) / (1 << 20), rnn_tactics.c_str());
          if (dev.error.empty()) std::printf("    device-resident P50 %.1f us, P99 %.1f us\n", dev.p50_us, dev.p99_us);
          else std::printf("    device-resident: %s\n", dev.error.c_str());
          {
            std::istringstream lines(context);
            for (std::string line; std::getline(lines, line);) {
              if (line.rfind("  ", 0) == 0) std::printf("    %s\n", line.c_str() + 2);
            }
          }
          std::fflush(stdout);
          results.push_back({{"system", "ticksentry"},
                             {"case", {{"model", model}, {"precision", prec}, {"batch", b}, {"seq", a.seq}}},
                             {"metrics",
                              {{"p50_us", p50},
                               {"p99_us", p99},
                               {"min_us", us.front()},
                               {"throughput_per_s", tput},
                               {"device_memory_bytes", mem},
                               {"iterations", us.size()},
                               {"build_s", build_s}}},
                             {"command", command},
                             {"tactics", rnn_tactics},
                             {"context", context},
                             {"int8_layers", int8_layers}});
          if (dev.error.empty()) {
            json& m = results.back()["metrics"];
            m["device_p50_us"] = dev.p50_us;
            m["device_p99_us"] = dev.p99_us;
            m["device_throughput_per_s"] = double(b) / (dev.p50_us * 1e-6);
          } else {
            results.back()["device_error"] = dev.error;
          }
        }
      }
    }
  }
  std::ofstream(a.out) << results.dump(2) << "\n";
  std::printf("wrote %s\n", a.out.c_str());
  return 0;
}
