// The `ticksentry` binary as a user runs it: exit codes, the summary JSON, and that every alert
// reaches stdout, the JSONL file and the SQLite audit store — also when stopped by SIGINT.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

using testing::Outcome;
using testing::run_bin;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

int count_lines(const fs::path& p) {
  std::ifstream f(p);
  int n = 0;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty()) {
      EXPECT_TRUE(nlohmann::json::accept(line)) << "not one JSON object: " << line;
      ++n;
    }
  }
  return n;
}

int64_t count_audit_rows(const fs::path& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_stmt* st = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM alerts", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    n = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

TEST(Cli, UnknownFormatAndMissingFileExitTwo) {
  auto dir = testing::scratch_dir("cli_errors");
  auto o = run_bin({"replay", "--format", "nasdaq-itch9", "x.bin"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("nasdaq-itch9"), std::string::npos) << o.err;
  o = run_bin({"replay", "--format", "lobster", "/nonexistent/GOOG_message_10.csv.gz"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("/nonexistent/GOOG_message_10.csv.gz"), std::string::npos) << o.err;
  o = run_bin({"replay", "--format", "sse-l2", "/nonexistent/day"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  o = run_bin({"frobnicate"}, dir);
  EXPECT_EQ(o.exit_code, 2);
}

TEST(Cli, ConfigTypoIsAClearError) {
  auto dir = testing::scratch_dir("cli_config");
  std::ofstream(dir / "bad.toml") << "[sim]\nsymbolz = 10\n";
  auto o = run_bin({"run", "--config", "bad.toml", "--duration", "1"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("sim.symbolz"), std::string::npos) << o.err;
}

// [http] port = 70000 used to bind port 4464 (70000 cut to 16 bits) while logging 70000.
TEST(Cli, HttpPortOutOfRangeIsAClearError) {
  auto dir = testing::scratch_dir("cli_http_port");
  std::ofstream(dir / "port.toml") << "[http]\nport = 70000\n";
  auto o = run_bin({"run", "--config", "port.toml", "--duration", "1", "--symbols", "5", "--no-stdout"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("http.port"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("70000"), std::string::npos) << o.err;
}

// Out-of-range values stop every command at start with exit 2 and the key's name — before the
// fix `event_ring = -1` spun forever in the ring's rounding loop and `shards = 100000` started
// 100,000 threads.
TEST(Cli, OutOfRangeConfigValuesExitTwoNamingTheKey) {
  auto dir = testing::scratch_dir("cli_config_ranges");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[pipeline]\nevent_ring = -1\n", "pipeline.event_ring"},
      {"[pipeline]\nalert_ring = -1\n", "pipeline.alert_ring"},
      {"[pipeline]\nshards = 100000\n", "pipeline.shards"},
      {"[sim]\nsymbols = 4294967297\n", "sim.symbols"},
      {"[pipeline]\nspeed = nan\n", "pipeline.speed"},
      {"[kafka]\neof_idle_ms = -5\n", "kafka.eof_idle_ms"},
  };
  for (const auto& [toml, key] : bad) {
    std::ofstream(dir / "bad.toml") << toml;
    const std::vector<std::vector<std::string>> commands = {
        {"run", "--config", "bad.toml", "--sim-seconds", "1", "--no-stdout", "--jsonl", "", "--audit-db", ""},
        {"run", "--source", "kafka", "--brokers", "127.0.0.1:1", "--topic", "md", "--config", "bad.toml",
         "--no-stdout", "--jsonl", "", "--audit-db", ""},
    };
    for (const auto& args : commands) {
      const auto o = run_bin(args, dir);
      EXPECT_EQ(o.exit_code, 2) << toml << args[1] << "\n" << o.err;
      EXPECT_NE(o.err.find(key), std::string::npos) << toml << o.err;
    }
  }
}

TEST(Cli, ReplayLobsterWritesSummaryJson) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  auto dir = testing::scratch_dir("cli_lobster");
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--summary-json", "summary.json", "--no-stdout",
                    "--jsonl", "alerts.jsonl", "--audit-db", "audit.db"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "summary.json");
  // One event per message row (147,916), plus the opening book and the 44,451 resync snapshots
  // taken from the vendor's order-book file where messages alone cannot explain the book
  // (docs/formats.md).
  EXPECT_EQ(j["events"].get<uint64_t>(), 192368u);
  EXPECT_EQ(j["events_by_kind"]["snapshot"].get<uint64_t>(), 44452u);
  EXPECT_EQ(j["errors"].size(), 0u) << j["errors"].dump();
  EXPECT_GT(j["events_per_s"].get<double>(), 0.0);
  ASSERT_TRUE(j["alerts"].is_object());
  ASSERT_TRUE(j["errors"].is_object());
  for (const char* k : {"p50", "p99", "p999"}) EXPECT_TRUE(j["latency_us"][k].is_number()) << k;
  // Unpaced: the receive→alert figures are queueing behind the file, and both outputs say so.
  EXPECT_TRUE(j["latency_includes_queueing"].get<bool>());
  EXPECT_NE(o.err.find("unpaced replay: receive→alert includes queueing"), std::string::npos) << o.err;
  EXPECT_EQ(count_lines(dir / "alerts.jsonl"), j["alerts_total"].get<int>());
  EXPECT_EQ(count_audit_rows(dir / "audit.db"), j["alerts_total"].get<int64_t>());
}

TEST(Cli, RunStoppedBySigintLosesNoAlert) {
  auto dir = testing::scratch_dir("cli_sigint");
  // Fast-forward the simulator so that alerts are plentiful, then interrupt it mid-run, 1 s after
  // the first alert reached the JSONL file (a fixed 4 s once saw no alert at all on a loaded CI machine).
  auto o = run_bin({"run", "--symbols", "500", "--speed", "200", "--summary-json", "summary.json", "--jsonl", "alerts.jsonl",
                    "--audit-db", "audit.db"},
                   dir, /*sigint_after_ms=*/1000, /*cwd_in_dir=*/true, dir / "alerts.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "summary.json");
  EXPECT_TRUE(j["interrupted"].get<bool>());
  const int total = j["alerts_total"].get<int>();
  EXPECT_GT(total, 0) << "interrupted 1 s after the first alert reached the JSONL file";
  EXPECT_EQ(count_lines(dir / "alerts.jsonl"), total);
  EXPECT_EQ(count_audit_rows(dir / "audit.db"), total);
  // Human-readable lines on stdout: one per alert.
  int stdout_lines = 0;
  for (char c : o.out) stdout_lines += c == '\n';
  EXPECT_EQ(stdout_lines, total);
}

TEST(Cli, RunWithDurationStopsOnTime) {
  auto dir = testing::scratch_dir("cli_duration");
  const auto t0 = std::chrono::steady_clock::now();
  auto o = run_bin({"run", "--duration", "2", "--symbols", "100", "--no-stdout", "--summary-json", "s.json"}, dir);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_LT(s, 10.0);
  auto j = read_json(dir / "s.json");
  EXPECT_GT(j["events"].get<uint64_t>(), 1000u) << "real-time simulator produces events";
}

// Paced replay of a real day: the first events of a trading day are minutes apart (the call
// auction, then the open), and --duration used to wait for the next one (--duration 6 ran 57 s).
TEST(Cli, PacedReplayWithDurationStopsOnTime) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  auto dir = testing::scratch_dir("cli_paced_duration");
  const auto t0 = std::chrono::steady_clock::now();
  auto o = run_bin({"replay", "--format", "sse-l2", testing::sse_day_dir().string(), "--speed", "1", "--duration", "3",
                    "--no-stdout", "--summary-json", "s.json"},
                   dir);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_LT(s, 3.0 + 5.0) << "--duration 3 ran " << s << " s";
  auto j = read_json(dir / "s.json");
  EXPECT_TRUE(j["interrupted"].get<bool>());
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// The shipped example config names only real keys (unknown keys are refused) and, being all
// defaults, runs.
TEST(Cli, ExampleConfigIsAcceptedByRunAndReplay) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  auto dir = testing::scratch_dir("cli_example_config");
  const std::string cfg = std::string(TICKSENTRY_SOURCE_DIR) + "/config/ticksentry.example.toml";
  auto o = run_bin({"run", "--config", cfg, "--duration", "1", "--symbols", "50", "--no-stdout", "--out-dir", "run"}, dir);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const auto sse = testing::sse_day_dir();
  // Its own folder: the run's files hold alerts, and a second run refuses to mix its own in.
  o = run_bin({"replay", "--format", "sse-l2", sse.string(), "--config", cfg, "--no-stdout", "--out-dir", "replay"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "replay" / "summary.json");
  EXPECT_EQ(j["events"].get<uint64_t>(), 86979u);
}

}  // namespace
}  // namespace ts

namespace ts {
namespace {

// A recorded day with bad lines spliced in: every bad line is counted by kind, the run exits 0,
// and every good line still arrives.
TEST(Cli, BadLinesAreCountedAndNothingElseIsLost) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  auto dir = testing::scratch_dir("cli_bad_input");
  auto o = run_bin({"record", "--format", "sse-l2", testing::sse_day_dir().string(), "--out", "day.csv"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream in(dir / "day.csv");
  std::ofstream out(dir / "bad.csv");
  std::string line, last_trade;
  int n = 0, good = 0;
  while (std::getline(in, line)) {
    out << line << "\n";
    if (n++ == 0) continue;  // header
    ++good;
    if (line.rfind("trade,", 0) == 0) last_trade = line;
    if (good == 1000) {
      out << "this is not a record\n";                                       // malformed
      out << "trade,600519.SH,1675213200000000000,1\n";                      // wrong column count
      out << "trade,NOT A SYMBOL,1675213200000000000,1,180000,100,B,1,2\n";  // unknown symbol
      out << std::string("\x01\x02\xff\xfe garbage\x7f", 14) << "\n";        // binary garbage
    }
    if (good == 20000 && !last_trade.empty()) {
      // The last trade again with a NaN price, then with a negative size.
      auto f = last_trade;
      auto c4 = f.find(',', f.find(',', f.find(',', f.find(',') + 1) + 1) + 1);
      auto c5 = f.find(',', c4 + 1);
      out << f.substr(0, c4 + 1) << "nan" << f.substr(c5) << "\n";
      auto c6 = f.find(',', c5 + 1);
      out << f.substr(0, c5 + 1) << "-100" << f.substr(c6) << "\n";
    }
  }
  out.close();
  o = run_bin({"replay", "--format", "csv", "bad.csv", "--no-stdout", "--summary-json", "s.json"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "s.json");
  EXPECT_EQ(j["events"].get<int>(), good) << "every good line arrives";
  auto e = j["errors"];
  EXPECT_EQ(e.value("malformed_line", 0), 1) << e.dump();
  EXPECT_EQ(e.value("wrong_column_count", 0), 1) << e.dump();
  EXPECT_EQ(e.value("unknown_symbol", 0), 1) << e.dump();
  EXPECT_EQ(e.value("binary_garbage", 0), 1) << e.dump();
  EXPECT_EQ(e.value("not_a_number", 0), 1) << e.dump();
  EXPECT_EQ(e.value("bad_size", 0), 1) << e.dump();
  // Reported with file and line.
  EXPECT_NE(o.err.find("bad.csv:1002"), std::string::npos) << o.err.substr(0, 2000);
}

}  // namespace
}  // namespace ts
