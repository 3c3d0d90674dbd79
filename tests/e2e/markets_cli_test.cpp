// The markets of a run through the CLI (docs/instruments.md, docs/features.md): phases counted
// in the summary, the volume-profile state written and read back, bad state files and instrument
// files refused or counted by name, bare tickers counted as unknown_symbol.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using testing::run_bin;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

std::string calendars_config() {
  return "[calendars]\ndir = \"" + std::string(TICKSENTRY_SOURCE_DIR) + "/config/calendars\"\n";
}

TEST(MarketsCli, SseDayCountsPhasesAndCarriesTheProfile) {
  TS_REQUIRE_DATA(testing::sse_day_dir());
  auto dir = testing::scratch_dir("markets_sse");
  std::ofstream(dir / "c.toml") << calendars_config();
  const std::string day = testing::sse_day_dir().string();
  auto o = run_bin({"replay", "--config", "c.toml", "--format", "sse-l2", day, "--no-stdout", "--jsonl", "",
                    "--audit-db", "", "--summary-json", "s1.json", "--state-out", "state.txt"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "s1.json");
  // SSE says TRADE through the 09:25 pause and the lunch break (refined), OCALL a minute early.
  EXPECT_EQ(j["phases"]["refinements"].get<int>(), 2) << j["phases"].dump();
  EXPECT_GE(j["phases"]["disagreements"].get<int>(), 1) << j["phases"].dump();
  EXPECT_EQ(j["phases"]["no_schedule"].get<int>(), 0);
  EXPECT_EQ(j["instruments"]["unknown_symbol"].get<int>(), 0);
  std::ifstream st(dir / "state.txt");
  std::string first;
  std::getline(st, first);
  EXPECT_EQ(first, "ticksentry-state 1");
  // The next run starts from the learned profile and leaves it (plus what it learned) behind.
  o = run_bin({"replay", "--config", "c.toml", "--format", "sse-l2", day, "--no-stdout", "--jsonl", "", "--audit-db",
               "", "--summary-json", "s2.json", "--state-in", "state.txt", "--state-out", "state2.txt"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("1 volume profiles from state.txt"), std::string::npos) << o.err;
  auto j2 = read_json(dir / "s2.json");
  EXPECT_LE(j2["alerts"].value("volume_burst", 0), j["alerts"].value("volume_burst", 0));
  EXPECT_TRUE(fs::exists(dir / "state2.txt"));
}

// The real SSE day at the defaults: the 09:25 auction match, the 09:30 open measured against it,
// and the 13:00 reopen raise nothing by themselves (no alert from 09:25 to 09:31 or 13:00 to
// 13:01 Shanghai time; before issue 22 this day raised critical volume_burst and rapid_rise
// there, and a spread_widening at 09:30:13 against a typical spread learned over 13 s).
TEST(MarketsCli, SseAuctionMatchOpenAndReopenRaiseNothingByThemselves) {
  TS_REQUIRE_DATA(testing::sse_day_dir());
  auto dir = testing::scratch_dir("markets_sse_open");
  std::ofstream(dir / "c.toml") << calendars_config();
  auto o = run_bin({"replay", "--config", "c.toml", "--format", "sse-l2", testing::sse_day_dir().string(),
                    "--no-stdout", "--jsonl", "a.jsonl", "--audit-db", "", "--http", "off"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream in(dir / "a.jsonl");
  std::string line;
  int total = 0;
  for (; std::getline(in, line); ++total) {
    const auto a = nlohmann::json::parse(line);
    const int64_t s = (std::stoll(a["exch_ts_ns"].get<std::string>()) / 1'000'000'000 + 8 * 3600) % 86400;
    const bool open = s >= (9 * 3600 + 25 * 60) && s < (9 * 3600 + 31 * 60);
    const bool reopen = s >= 13 * 3600 && s < 13 * 3600 + 60;
    EXPECT_FALSE(open || reopen) << "alert at " << s / 3600 << ":" << s / 60 % 60 << ":" << s % 60 << " " << line;
  }
  std::printf("SSE 600519 2023-02-01: %d alerts all day at the defaults\n", total);
}

TEST(MarketsCli, BadStateFileIsExitTwoNamingIt) {
  TS_REQUIRE_DATA(testing::sse_day_dir());
  auto dir = testing::scratch_dir("markets_bad_state");
  std::ofstream(dir / "old.txt") << "ticksentry-state 0\n";
  std::ofstream(dir / "bad.txt") << "ticksentry-state 1\nbin_seconds 300\nbin 1 2 3 4 5 6\n";
  for (const char* f : {"old.txt", "bad.txt", "absent.txt"}) {
    auto o = run_bin({"replay", "--format", "sse-l2", testing::sse_day_dir().string(), "--no-stdout", "--jsonl", "",
                      "--audit-db", "", "--state-in", f},
                     dir);
    EXPECT_EQ(o.exit_code, 2) << f;
    EXPECT_NE(o.err.find(std::string("state file ") + f), std::string::npos) << o.err;
  }
}

TEST(MarketsCli, BareTickersAndInstrumentFile) {
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  auto dir = testing::scratch_dir("markets_instruments");
  // Without a default market the bare ticker is counted, and its events still run.
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--no-stdout", "--jsonl", "", "--audit-db", "",
                    "--summary-json", "s.json"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "s.json");
  EXPECT_EQ(j["instruments"]["unknown_symbol"].get<int>(), 1);
  EXPECT_NE(o.err.find("unknown_symbol: \"GOOG\""), std::string::npos) << o.err;
  EXPECT_EQ(j["events"].get<uint64_t>(), 192368u);
  // default_market = "us" and a reference file with one bad row: the row is counted and named.
  std::ofstream(dir / "c.toml") << calendars_config() << "[instruments]\ndefault_market = \"us\"\n";
  std::ofstream(dir / "ref.csv") << "symbol,tick_size\nGOOG,0.01\nAAPL,-1\n";
  o = run_bin({"replay", "--config", "c.toml", "--instruments", "ref.csv", "--format", "lobster", goog.string(),
               "--no-stdout", "--jsonl", "", "--audit-db", "", "--summary-json", "s2.json"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j2 = read_json(dir / "s2.json");
  EXPECT_EQ(j2["instruments"]["unknown_symbol"].get<int>(), 0);
  EXPECT_EQ(j2["instruments"]["reference_rows"].get<int>(), 1);
  EXPECT_EQ(j2["phases"]["no_schedule"].get<int>(), 0);  // a US schedule now
  EXPECT_GT(j2["alerts_total"].get<int>(), 0);            // 09:30-16:00 New York is continuous
  EXPECT_EQ(j2["errors"].value("malformed_line", 0), 1) << j2["errors"].dump();
  EXPECT_NE(o.err.find("ref.csv:3"), std::string::npos) << o.err;
  // A bad default market is exit 2 naming the key.
  std::ofstream(dir / "bad.toml") << "[instruments]\ndefault_market = \"mars\"\n";
  o = run_bin({"replay", "--config", "bad.toml", "--format", "lobster", goog.string(), "--no-stdout"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("instruments.default_market"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts
