// Mapped vendor layouts vs the hand-written reader (docs/performance.md, docs/formats.md):
// events/s per core reading the real SSE Level-2 day (600519, 2023-02-01: 86,979 events from
// snapshot, entrust and trade files) with `--format sse-l2` (src/ingest/sse_source.cpp) and with
// `--format mapped --layout sse-l2` (config/layouts/sse-l2.toml), open → last event, one thread.
// Two inputs: the files as shipped (.csv.gz: zlib inflate included) and the same files
// decompressed to a scratch folder (.csv: parsing alone). The two readers alternate run by run
// so that the machine's load falls on both alike; per-core rate = events / thread CPU seconds
// (wall-clock rate given too). Also the SZSE five-stock snapshot day through its layout.
// Writes bench/results/ingest-mapped-<machine>-<date>.json.
// Usage: ingest_mapped_bench [--runs N] [--out DIR]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_json.h"
#include "core/log.h"
#include "ingest/line_reader.h"
#include "ingest/open_source.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

struct Pass {
  uint64_t events = 0;
  uint64_t errors = 0;
  double cpu_s = 0;
  double wall_s = 0;
};

Pass read_all(const std::string& format, const std::string& layout, const std::string& path) {
  SymbolTable symbols;
  InputErrors errors;
  std::vector<Event> batch(1024);
  Pass p;
  const double c0 = thread_cpu_s();
  const auto w0 = std::chrono::steady_clock::now();
  auto src = open_source(format, {path}, symbols, errors, layout);
  if (!src.is_ok()) {
    std::fprintf(stderr, "%s\n", src.status().to_string().c_str());
    std::exit(1);
  }
  uint64_t sink = 0;
  for (;;) {
    const size_t n = src.value()->next_batch(batch);
    if (n == 0 && src.value()->done()) break;
    p.events += n;
    for (size_t i = 0; i < n; ++i) sink += static_cast<uint64_t>(batch[i].exch_ts_ns);
  }
  p.cpu_s = thread_cpu_s() - c0;
  p.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  p.errors = errors.total();
  if (sink == 42) std::puts("");  // keep the loop
  return p;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * double(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Rates of many passes: median and the slow tail (P99 of the rate = its 1st percentile).
nlohmann::json summarize(const std::vector<Pass>& passes) {
  std::vector<double> cpu_rate, wall_rate;
  for (const auto& p : passes) {
    cpu_rate.push_back(double(p.events) / p.cpu_s);
    wall_rate.push_back(double(p.events) / p.wall_s);
  }
  return {{"events", passes.front().events},
          {"errors", passes.front().errors},
          {"runs", passes.size()},
          {"events_per_cpu_s_median", percentile(cpu_rate, 0.5)},
          {"events_per_cpu_s_p99_slow", percentile(cpu_rate, 0.01)},
          {"events_per_cpu_s_best", percentile(cpu_rate, 1.0)},
          {"events_per_wall_s_median", percentile(wall_rate, 0.5)}};
}

// Copies the day's three files, decompressed, into `dir`.
void decompress_day(const fs::path& day, const fs::path& dir) {
  fs::create_directories(dir);
  for (const char* name : {"snapshot", "entrust", "trade"}) {
    InputErrors errors;
    auto lines = ingest::LineReader::open((day / (std::string(name) + ".csv.gz")).string(), errors);
    if (!lines.is_ok()) std::exit(1);
    FILE* out = std::fopen((dir / (std::string(name) + ".csv")).c_str(), "wb");
    ingest::Line line;
    while (lines.value()->next(line)) {
      std::fwrite(line.text.data(), 1, line.text.size(), out);
      std::fputc('\n', out);
    }
    std::fclose(out);
  }
}

}  // namespace
}  // namespace ts

int main(int argc, char** argv) {
  using namespace ts;
  int runs = 31;
  std::string out_dir = std::string(TICKSENTRY_SOURCE_DIR) + "/bench/results";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::max(3, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--out")) out_dir = argv[i + 1];
  }
  spdlog::set_level(spdlog::level::warn);
  const char* env = std::getenv("TICKSENTRY_DATA_DIR");
  const fs::path data = env && *env ? fs::path(env) : fs::path(TICKSENTRY_SOURCE_DIR) / ".." / "shared" / "data";
  const fs::path day = data / "sse-l2" / "600519-20230201";
  const fs::path plain = fs::temp_directory_path() / "ticksentry-ingest-mapped-bench" / "600519-20230201";
  decompress_day(day, plain);
  const fs::path szse = data / "szse-l2" / "5stocks-20220601" / "tick.csv.gz";

  nlohmann::json results;
  for (const auto& [input, path] : {std::pair<std::string, fs::path>{"csv.gz", day}, {"csv", plain}}) {
    std::vector<Pass> hand, mapped;
    for (int r = 0; r < runs; ++r) {
      hand.push_back(read_all("sse-l2", "", path.string()));
      mapped.push_back(read_all("mapped", "sse-l2", path.string()));
    }
    nlohmann::json h = summarize(hand), m = summarize(mapped);
    const double ratio = m["events_per_cpu_s_median"].get<double>() / h["events_per_cpu_s_median"].get<double>();
    results["sse_l2_600519_20230201_" + input] = {{"hand_written", h}, {"mapped", m}, {"mapped_over_hand_written", ratio}};
    std::printf("SSE day (%s): hand-written %.2f M events/s per core, mapped %.2f M (%.3f×), median of %d\n",
                input.c_str(), h["events_per_cpu_s_median"].get<double>() / 1e6,
                m["events_per_cpu_s_median"].get<double>() / 1e6, ratio, runs);
  }
  std::error_code ec;
  if (fs::exists(szse, ec)) {
    std::vector<Pass> passes;
    for (int r = 0; r < runs; ++r) passes.push_back(read_all("mapped", "szse-l2", szse.string()));
    results["szse_l2_5stocks_20220601_csv.gz_mapped"] = summarize(passes);
    std::printf("SZSE day (csv.gz), mapped: %.2f M events/s per core\n",
                results["szse_l2_5stocks_20220601_csv.gz_mapped"]["events_per_cpu_s_median"].get<double>() / 1e6);
  }
  fs::remove_all(plain.parent_path(), ec);
  results["note"] =
      "2-core machine shared with 7 other build/test jobs: wall rates are noisy; per-core rate uses thread CPU time. "
      "Readers alternate run by run.";
  const std::string file =
      bench::write_results(out_dir, "ingest-mapped", {bench::command_line(argc, argv), {{"runs", runs}}}, results);
  std::printf("wrote %s\n", file.c_str());
  return 0;
}
