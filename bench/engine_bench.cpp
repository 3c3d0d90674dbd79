// engine_bench: CPU latency and throughput of ticksentry's inference engine, and the merge step
// that puts it next to its peers (ONNX Runtime CPU, PyTorch eager) in one results file.
// Driven by bench/engine_bench.sh; BENCHMARKS.md says how results are recorded.
//
//   engine_bench run --models DIR/models.json [--only m1,m2] [--batches 1,16,256] [--seq 60]
//                    [--iters 1000,200,50] [--threads N] --out FILE
//     For each model: build a plan from its .onnx per batch (profile batch 1..256 at the given
//     seq, opt = that batch, so tactics are timed at the measured shape), load it, warm up
//     (>= 20 runs and >= 0.3 s), then time ExecutionContext::execute() run by run on random
//     normal inputs (a pool of 8 distinct tensors, rotated). Writes a JSON array of results
//     (system "ticksentry"; p50/p99/p999 in µs, nearest rank; throughput = batch / p50).
//     --threads only labels the case: the engine runs a context on the caller's thread; the
//     driver sets OMP_NUM_THREADS for oneDNN.
//
//   engine_bench merge [--results-dir bench/results] [--benchmark engine-cpu] FILE...
//     Concatenates the result arrays in FILEs (a system measured on a case in several rounds →
//     the round with the median p50), adds "ratios" (peer p50 / ticksentry p50 for each
//     case both measured) and "targets" (batch-1 GRU-2x128, one thread: <= 250 µs and >= 2x both
//     peers), prints a table and writes <results-dir>/<benchmark>-<machine>-<yyyymmdd>.json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_json.h"
#include "engine/engine.h"

namespace {

using nlohmann::json;
using ts::engine::BuildOptions;
using ts::engine::DType;
using ts::engine::Engine;
using ts::engine::OptimizationProfile;
using ts::engine::ShapeRange;
using ts::engine::TensorView;
using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxBatch = 256;
constexpr int kPool = 8;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int64_t> split_ints(const std::string& s) {
  std::vector<int64_t> out;
  for (const auto& item : split(s)) out.push_back(std::stoll(item));
  return out;
}

// Nearest-rank percentile of sorted samples (the same rule as the peer scripts).
double percentile(const std::vector<double>& sorted, double p) {
  const auto n = static_cast<int64_t>(sorted.size());
  int64_t k = static_cast<int64_t>(std::ceil(p * static_cast<double>(n))) - 1;
  k = std::clamp<int64_t>(k, 0, n - 1);
  return sorted[static_cast<size_t>(k)];
}

// Elements of an output binding at batch b, seq t; unresolved symbols get a generous bound.
int64_t output_capacity(const ts::engine::BindingInfo& out, int64_t b, int64_t t) {
  int64_t n = 1;
  for (const auto& d : out.shape) {
    if (d.is_known()) n *= d.value;
    else if (d.symbol == "batch") n *= b;
    else if (d.symbol == "seq") n *= t;
    else n *= b * t * 64;
  }
  return std::max<int64_t>(n, 1);
}

struct Options {
  std::string command;  // this run's command line, recorded in each of its result rows
  std::string models;
  std::set<std::string> only;
  std::vector<int64_t> batches{1, 16, 256};
  std::vector<int64_t> iters{1000, 200, 50};
  int64_t seq = 60;
  int threads = 1;
  std::string out;
};

int run_cases(const Options& o) {
  std::ifstream f(o.models);
  if (!f) {
    std::fprintf(stderr, "engine_bench: cannot read %s\n", o.models.c_str());
    return 2;
  }
  const json listing = json::parse(f);
  json results = json::array();
  std::mt19937 rng(12345);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const auto& m : listing.at("models")) {
    const std::string name = m.at("model");
    if (!o.only.empty() && !o.only.count(name)) continue;
    const int64_t feat = m.at("features");
    for (size_t bi = 0; bi < o.batches.size(); ++bi) {
      const int64_t b = o.batches[bi];
      const int64_t n = o.iters[std::min(bi, o.iters.size() - 1)];
      BuildOptions opts;
      opts.backend = "cpu";
      OptimizationProfile prof;
      prof.inputs["x"] = ShapeRange{{1, o.seq, feat}, {b, o.seq, feat}, {kMaxBatch, o.seq, feat}};
      opts.profiles.push_back(prof);
      const auto b0 = Clock::now();
      auto plan = ts::engine::build_file(m.at("onnx").get<std::string>(), opts);
      const double build_s = std::chrono::duration<double>(Clock::now() - b0).count();
      if (!plan) {
        std::fprintf(stderr, "engine_bench: %s: %s\n", name.c_str(), plan.status().to_string().c_str());
        return 1;
      }
      auto engine = Engine::load(plan.value());
      if (!engine) {
        std::fprintf(stderr, "engine_bench: %s: %s\n", name.c_str(), engine.status().to_string().c_str());
        return 1;
      }
      auto ctx = engine.value()->create_context();
      if (!ctx) {
        std::fprintf(stderr, "engine_bench: %s: %s\n", name.c_str(), ctx.status().to_string().c_str());
        return 1;
      }
      const auto& out_info = engine.value()->outputs().at(0);
      std::vector<std::vector<float>> pool(kPool, std::vector<float>(static_cast<size_t>(b * o.seq * feat)));
      for (auto& x : pool)
        for (auto& v : x) v = normal(rng);
      std::vector<float> y(static_cast<size_t>(output_capacity(out_info, b, o.seq)));
      auto run_once = [&](int i) {
        const TensorView in[] = {TensorView{DType::kF32, {b, o.seq, feat}, pool[size_t(i % kPool)].data()}};
        TensorView out[] = {TensorView{DType::kF32, {}, y.data(), y.size() * sizeof(float)}};
        return ctx.value()->execute(in, out);
      };
      const auto w0 = Clock::now();
      for (int i = 0; i < 20 || Clock::now() - w0 < std::chrono::milliseconds(300); ++i) {
        const auto st = run_once(i);
        if (!st) {
          std::fprintf(stderr, "engine_bench: %s b%lld: %s\n", name.c_str(), static_cast<long long>(b),
                       st.to_string().c_str());
          return 1;
        }
      }
      std::vector<double> lat(static_cast<size_t>(n));
      const auto t0 = Clock::now();
      for (int64_t i = 0; i < n; ++i) {
        const auto s = Clock::now();
        (void)run_once(static_cast<int>(i));
        lat[size_t(i)] = std::chrono::duration<double, std::micro>(Clock::now() - s).count();
      }
      const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::sort(lat.begin(), lat.end());
      const double p50 = percentile(lat, 0.5);
      results.push_back(
          {{"system", "ticksentry"},
           {"case", {{"model", name}, {"precision", "fp32"}, {"batch", b}, {"seq", o.seq}, {"threads", o.threads}}},
           {"metrics",
            {{"p50_us", p50},
             {"p99_us", percentile(lat, 0.99)},
             {"p999_us", percentile(lat, 0.999)},
             {"throughput_per_s", double(b) * 1e6 / p50},
             {"wall_throughput_per_s", double(b * n) / wall_s},
             {"iterations", n},
             {"build_s", build_s},
             {"plan_bytes", plan.value().size()},
             {"device_memory_bytes", engine.value()->device_memory_bytes()}}},
           {"command", o.command},
           {"notes",
            "ticksentry CPU backend fp32, ExecutionContext::execute on the calling thread, "
            "profile batch 1..256 opt " +
                std::to_string(b) + ", seq " + std::to_string(o.seq)}});
      std::fprintf(stderr, "ticksentry: %s b%lld threads %d: p50 %.1f us (build %.2f s)\n", name.c_str(),
                   static_cast<long long>(b), o.threads, p50, build_s);
    }
  }
  std::ofstream(o.out) << results.dump(1) << "\n";
  return 0;
}

std::string case_key(const json& c) {
  return c.at("model").get<std::string>() + "|" + std::to_string(c.at("batch").get<int64_t>()) + "|" +
         std::to_string(c.at("seq").get<int64_t>()) + "|" + std::to_string(c.at("threads").get<int64_t>());
}

int merge(const std::string& results_dir, const std::string& benchmark, const ts::bench::Invocation& run,
          const std::vector<std::string>& files) {
  json results = json::array();
  for (const auto& path : files) {
    std::ifstream f(path);
    if (!f) {
      std::fprintf(stderr, "engine_bench merge: cannot read %s\n", path.c_str());
      return 2;
    }
    for (auto& r : json::parse(f)) results.push_back(r);
  }
  // Repeated rounds of a system on a case (engine_bench.sh --rounds) → the round with the median
  // p50, with every round's p50 kept in metrics.p50_us_rounds.
  {
    std::map<std::string, std::vector<json>> groups;
    std::vector<std::string> group_order;
    for (auto& r : results) {
      const std::string g = r.at("system").get<std::string>() + "#" + case_key(r.at("case"));
      if (!groups.count(g)) group_order.push_back(g);
      groups[g].push_back(r);
    }
    json merged = json::array();
    for (const auto& g : group_order) {
      auto& rs = groups[g];
      std::vector<double> rounds;
      for (const auto& r : rs) rounds.push_back(r.at("metrics").at("p50_us").get<double>());
      std::sort(rs.begin(), rs.end(), [](const json& a, const json& b) {
        return a.at("metrics").at("p50_us").get<double>() < b.at("metrics").at("p50_us").get<double>();
      });
      json pick = rs[(rs.size() - 1) / 2];
      if (rs.size() > 1) {
        pick["metrics"]["rounds"] = rs.size();
        pick["metrics"]["p50_us_rounds"] = rounds;
      }
      merged.push_back(pick);
    }
    results = merged;
  }
  // p50 by system and case.
  std::map<std::string, std::map<std::string, double>> p50;  // case key → system → p50
  std::map<std::string, json> cases;
  std::vector<std::string> order;
  std::set<std::string> peers;
  for (const auto& r : results) {
    const std::string key = case_key(r.at("case"));
    if (!cases.count(key)) order.push_back(key);
    cases[key] = r.at("case");
    const std::string sys = r.at("system");
    p50[key][sys] = r.at("metrics").at("p50_us").get<double>();
    if (sys != "ticksentry") peers.insert(sys);
  }
  json ratios = json::array();
  for (const auto& key : order) {
    auto ts_it = p50[key].find("ticksentry");
    if (ts_it == p50[key].end()) continue;
    for (const auto& peer : peers) {
      auto it = p50[key].find(peer);
      if (it == p50[key].end()) continue;
      json c = cases[key];
      c.erase("precision");
      ratios.push_back({{"case", c},
                        {"peer", peer},
                        {"peer_p50_us", it->second},
                        {"ticksentry_p50_us", ts_it->second},
                        {"speedup", it->second / ts_it->second}});
    }
  }
  // Targets (issue 3): batch-1 GRU-2x128 on one thread: <= 250 µs, >= 2x faster than both peers.
  json targets = json::object();
  const std::string gru = "gru-2x128|1|60|1";
  if (p50.count(gru) && p50[gru].count("ticksentry")) {
    const double t = p50[gru]["ticksentry"];
    targets["gru-2x128 batch 1 seq 60 one thread"] = {{"ticksentry_p50_us", t}, {"p50_le_250_us", t <= 250.0}};
    for (const auto& peer : peers)
      if (p50[gru].count(peer)) {
        targets["gru-2x128 batch 1 seq 60 one thread"]["speedup_vs_" + peer] = p50[gru][peer] / t;
        targets["gru-2x128 batch 1 seq 60 one thread"]["ge_2x_vs_" + peer] = p50[gru][peer] / t >= 2.0;
      }
  }
  const std::string path = ts::bench::write_results(results_dir, benchmark, run, results);
  // write_results writes the common shape; add ratios and targets to the same file.
  json doc;
  {
    std::ifstream f(path);
    doc = json::parse(f);
  }
  doc["ratios"] = ratios;
  doc["ratios_note"] = "speedup = peer p50 / ticksentry p50 for the same model, batch, seq and threads";
  doc["targets"] = targets;
  std::ofstream(path) << doc.dump(2) << "\n";

  // Table: one row per case, p50 per system and speedups.
  std::vector<std::string> systems{"ticksentry"};
  for (const auto& p : peers) systems.push_back(p);
  std::printf("\n%-18s %5s %4s %3s", "model", "batch", "seq", "thr");
  for (const auto& s : systems) std::printf(" %16s", (s + " p50us").c_str());
  for (const auto& s : peers) std::printf(" %18s", ("x vs " + s).c_str());
  std::printf(" %14s\n", "ts seq/s");
  for (const auto& key : order) {
    const json& c = cases[key];
    std::printf("%-18s %5lld %4lld %3lld", c["model"].get<std::string>().c_str(),
                static_cast<long long>(c["batch"].get<int64_t>()), static_cast<long long>(c["seq"].get<int64_t>()),
                static_cast<long long>(c["threads"].get<int64_t>()));
    for (const auto& s : systems) {
      if (p50[key].count(s)) std::printf(" %16.1f", p50[key][s]);
      else std::printf(" %16s", "-");
    }
    for (const auto& s : peers) {
      if (p50[key].count(s) && p50[key].count("ticksentry")) std::printf(" %17.2fx", p50[key][s] / p50[key]["ticksentry"]);
      else std::printf(" %18s", "-");
    }
    if (p50[key].count("ticksentry"))
      std::printf(" %14.0f\n", double(c["batch"].get<int64_t>()) * 1e6 / p50[key]["ticksentry"]);
    else std::printf(" %14s\n", "-");
  }
  std::printf("\ntargets: %s\nwrote %s\n", targets.dump().c_str(), path.c_str());
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: engine_bench run --models DIR/models.json [--only a,b] [--batches 1,16,256] [--seq 60]\n"
               "                        [--iters 1000,200,50] [--threads N] --out FILE\n"
               "       engine_bench merge [--results-dir DIR] [--benchmark NAME] [--command CMD] [--settings JSON]\n"
               "                          FILE...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  auto take = [&](size_t& i) -> std::string {
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "engine_bench: %s needs a value\n", args[i].c_str());
      std::exit(2);
    }
    return args[++i];
  };
  if (mode == "run") {
    Options o;
    o.command = ts::bench::command_line(argc, argv);
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--models") o.models = take(i);
      else if (a == "--only") {
        for (auto& s : split(take(i))) o.only.insert(s);
      } else if (a == "--batches") o.batches = split_ints(take(i));
      else if (a == "--iters") o.iters = split_ints(take(i));
      else if (a == "--seq") o.seq = std::stoll(take(i));
      else if (a == "--threads") o.threads = std::stoi(take(i));
      else if (a == "--out") o.out = take(i);
      else return usage();
    }
    if (o.models.empty() || o.out.empty() || o.batches.empty() || o.iters.empty()) return usage();
    return run_cases(o);
  }
  if (mode == "merge") {
    std::string dir = TICKSENTRY_SOURCE_DIR "/bench/results";
    std::string benchmark = "engine-cpu";
    std::vector<std::string> files;
    // The driver's command line and settings (engine_bench.sh passes its own); else merge's.
    ts::bench::Invocation run{ts::bench::command_line(argc, argv), json::object()};
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--results-dir") dir = take(i);
      else if (args[i] == "--benchmark") benchmark = take(i);
      else if (args[i] == "--command") run.command = take(i);
      else if (args[i] == "--settings") run.settings = json::parse(take(i), nullptr, /*allow_exceptions=*/false);
      else files.push_back(args[i]);
    }
    if (files.empty() || run.settings.is_discarded()) return usage();
    return merge(dir, benchmark, run, files);
  }
  return usage();
}
