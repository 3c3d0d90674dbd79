// File decoders, events per second per core: each real dataset read through its format's source
// (open_source, as `ticksentry replay` does: line split, field parse, validation, symbol
// interning, and for the vendor layouts grouped by security the in-memory merge), every event
// drained. Twice per dataset: as shipped (.csv.gz: zlib inflate included) and from a decompressed
// copy in a temporary folder (the decoder alone). Thread CPU time (one core) and wall time per
// run; `runs` runs per dataset and input (default 7), median and slowest. Target (issue 23):
// >= 1 M events/s per core per decoder.
// Writes bench/results/ingest-decode-<machine>-<date>.json.
// Usage: ingest_decode_bench [runs] [out_dir] [format]   (format: only that format's datasets)
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_json.h"
#include "core/clock.h"
#include "core/input_errors.h"
#include "core/log.h"
#include "core/symbol_table.h"
#include "ingest/line_reader.h"
#include "ingest/open_source.h"

namespace ts {
namespace {

int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

struct Dataset {
  const char* format;
  const char* path;  // under ../shared/data
};

const Dataset kDatasets[] = {
    {"lobster", "lobster/GOOG_2012-06-21_34200000_57600000_message_10.csv.gz"},
    {"sse-l2", "sse-l2/600519-20230201"},
    {"sse-l2", "sse-l2/600519-20230202"},
    {"sse-l3", "sse-l3/20230711-5stocks"},
    {"szse-l2", "szse-l2/5stocks-20220601/tick.csv.gz"},
    {"szse-trades", "szse-trades/000001-20230201"},
};

// Writes the decompressed lines of `gz` to `out` (a .csv path).
bool decompress(const std::string& gz, const std::string& out) {
  InputErrors errors;
  auto lines = ingest::LineReader::open(gz, errors);
  if (!lines) return false;
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (!f) return false;
  ingest::Line line;
  while (lines.value()->next(line)) {
    std::fwrite(line.text.data(), 1, line.text.size(), f);
    std::fputc('\n', f);
  }
  return std::fclose(f) == 0;
}

// A decompressed copy of a dataset under `tmp` (same names, .csv); returns the path to read.
// A LOBSTER message file brings its orderbook file; a folder brings all its .csv.gz files.
std::string plain_copy(const std::string& src, const std::string& tmp) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto strip = [](std::string name) { return name.substr(0, name.size() - 3); };  // "x.csv.gz" -> "x.csv"
  const fs::path dest = fs::path(tmp) / fs::path(src).filename();
  if (fs::is_directory(src, ec)) {
    fs::create_directories(dest, ec);
    for (const auto& e : fs::directory_iterator(src)) {
      const std::string n = e.path().filename().string();
      if (n.size() > 7 && n.ends_with(".csv.gz")) decompress(e.path().string(), (dest / strip(n)).string());
    }
    return dest.string();
  }
  const std::string n = fs::path(src).filename().string();
  if (!n.ends_with(".csv.gz")) return src;
  decompress(src, (fs::path(tmp) / strip(n)).string());
  if (const size_t m = n.rfind("_message_"); m != std::string::npos) {
    const std::string book = n.substr(0, m) + "_orderbook_" + n.substr(m + 9);
    decompress((fs::path(src).parent_path() / book).string(), (fs::path(tmp) / strip(book)).string());
  }
  return (fs::path(tmp) / strip(n)).string();
}

struct Run {
  uint64_t events = 0;
  uint64_t errors = 0;
  double cpu_s = 0;
  double wall_s = 0;
};

Run run_once(const char* format, const std::string& path) {
  Run r;
  SymbolTable symbols;
  InputErrors errors;
  std::vector<Event> batch(4096);
  const int64_t c0 = thread_cpu_ns(), w0 = mono_ns();
  auto src = open_source(format, {path}, symbols, errors);
  if (!src.is_ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), src.status().to_string().c_str());
    return r;
  }
  for (;;) {
    const size_t n = src.value()->next_batch(batch);
    if (n == 0 && src.value()->done()) break;
    r.events += n;
  }
  r.cpu_s = double(thread_cpu_ns() - c0) * 1e-9;
  r.wall_s = double(mono_ns() - w0) * 1e-9;
  r.errors = errors.total();
  return r;
}

}  // namespace
}  // namespace ts

int main(int argc, char** argv) {
  using namespace ts;
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::string out_dir = argc > 2 ? argv[2] : std::string(TICKSENTRY_SOURCE_DIR) + "/bench/results";
  const char* env = std::getenv("TICKSENTRY_DATA_DIR");
  const std::string data_dir = env && *env ? env : std::string(TICKSENTRY_SOURCE_DIR) + "/../shared/data";
  spdlog::set_level(spdlog::level::warn);
  nlohmann::json results = nlohmann::json::array();
  const std::string tmp = (std::filesystem::temp_directory_path() / ("ingest_decode_bench." + std::to_string(getpid()))).string();
  std::filesystem::create_directories(tmp);
  const std::string only = argc > 3 ? argv[3] : "";
  for (const auto& d : kDatasets) {
   if (!only.empty() && only != d.format) continue;
   for (const bool plain : {false, true}) {
    std::error_code ec;
    if (!std::filesystem::exists(data_dir + "/" + d.path, ec)) {
      std::fprintf(stderr, "skip %s %s: data absent\n", d.format, d.path);
      break;
    }
    const std::string path = plain ? plain_copy(data_dir + "/" + d.path, tmp) : data_dir + "/" + d.path;
    std::vector<double> per_core, wall_rate;
    Run last;
    for (int i = 0; i < runs; ++i) {
      last = run_once(d.format, path);
      if (last.events == 0) break;
      per_core.push_back(double(last.events) / last.cpu_s);
      wall_rate.push_back(double(last.events) / last.wall_s);
    }
    if (per_core.empty()) continue;
    std::sort(per_core.begin(), per_core.end());
    std::sort(wall_rate.begin(), wall_rate.end());
    const double median = per_core[per_core.size() / 2], slowest = per_core.front();
    std::printf("%-12s %-58s %-5s %7llu events %llu errors  median %5.2f M events/s/core  slowest %5.2f  (wall %5.2f)\n",
                d.format, d.path, plain ? "plain" : "gzip", (unsigned long long)last.events,
                (unsigned long long)last.errors, median / 1e6, slowest / 1e6, wall_rate[wall_rate.size() / 2] / 1e6);
    results.push_back({{"format", d.format},
                       {"dataset", d.path},
                       {"input", plain ? "plain csv (decompressed copy)" : "csv.gz as shipped"},
                       {"events", last.events},
                       {"errors", last.errors},
                       {"runs", per_core.size()},
                       {"events_per_s_per_core_median", median},
                       {"events_per_s_per_core_slowest", slowest},
                       {"events_per_s_wall_median", wall_rate[wall_rate.size() / 2]},
                       {"target_events_per_s_per_core", 1e6},
                       {"meets_target", median >= 1e6}});
   }
  }
  std::filesystem::remove_all(tmp);
  std::string load;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    char buf[128] = {};
    if (std::fgets(buf, sizeof buf, f)) load = buf;
    std::fclose(f);
    while (!load.empty() && load.back() == '\n') load.pop_back();
  }
  bench::Invocation inv{bench::command_line(argc, argv), {{"runs", runs}, {"data_dir", data_dir}}};
  inv.settings["loadavg_at_end"] = load;
  inv.settings["note"] =
      "thread CPU time of the reading thread (one core), open + drain, gzip inflate included; the 2-core machine "
      "is shared with other builds and runs (load average ~20 during this run), so wall time is far below CPU-time "
      "throughput and even CPU time varies between runs (caches, SMT)";
  std::printf("wrote %s\n", bench::write_results(out_dir, "ingest-decode", inv, results).c_str());
  return 0;
}
