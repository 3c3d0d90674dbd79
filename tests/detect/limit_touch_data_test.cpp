// A real limit touch (issue 22): no dataset here reaches its price limit, so the SSE order-flow day
// (sse-l3, 2023-07-11, which carries no previous close) is replayed with an instruments file whose
// prev_close puts 600761.SH's limit-up exactly at the day's real continuous-trading high: 19.77 ×
// 1.10 = 21.747 → 21.75 (half up). The stock prints 21.75 and never goes beyond it, and never
// seals (there is always an ask), so the rule set must raise exactly one limit_up_touched, at the
// first time the price reached 21.75, in continuous trading — and nothing else that the same day
// without the file does not raise.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> read_jsonl(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

std::string gunzip(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  std::string out;
  if (!f) return out;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  gzclose(f);
  return out;
}

// Shanghai local time of day "HH:MM:SS.mmm" → ms since midnight.
int64_t ms_of_day(const std::string& t) {
  return ((std::stoll(t.substr(0, 2)) * 60 + std::stoll(t.substr(3, 2))) * 60 + std::stoll(t.substr(6, 2))) * 1000 +
         std::stoll(t.substr(9, 3));
}

bool continuous_ms(int64_t ms) {
  return (ms >= 34'200'000 && ms < 41'400'000) || (ms >= 46'800'000 && ms < 53'820'000);
}

// From the trade file itself: 600761.SH's highest continuous-trading print (ticks) and the time
// it was first printed (ms of the Shanghai day).
std::pair<int64_t, int64_t> high_of_day(const fs::path& trades) {
  std::istringstream in(gunzip(trades));
  std::string line;
  std::getline(in, line);  // header: ...,MDTime (1),...,TradePrice (12),...,SecurityID (19)
  int64_t high = 0, at = -1;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() < 20 || f[19].rfind("600761.SH", 0) != 0) continue;
    const int64_t ms = ms_of_day(f[1]);
    if (!continuous_ms(ms)) continue;
    const int64_t ticks = std::llround(std::stod(f[12]) * 100);
    if (ticks > high) high = ticks, at = ms;
  }
  return {high, at};
}

TEST(LimitTouchData, RealHighAtTheLimitRaisesOneTouchAtItsTimeAndNothingElse) {
  const fs::path day = testing::data_dir() / "sse-l3" / "20230711-5stocks";
  TS_REQUIRE_DATA(day);
  const auto [high, high_ms] = high_of_day(day / "SHtrans.csv.gz");
  ASSERT_EQ(high, 2175) << "600761.SH's continuous high on 2023-07-11";
  auto dir = testing::scratch_dir("limit_touch_data");
  std::ofstream(dir / "inst.csv") << "symbol,prev_close\n600761.SH,19.77\n";
  for (const char* name : {"with", "without"}) {
    std::vector<std::string> args{"replay", "--format", "sse-l3", day.string(), "--no-stdout", "--http", "off",
                                  "--audit-db", "", "--jsonl", std::string(name) + ".jsonl"};
    if (std::string(name) == "with") args.insert(args.end(), {"--instruments", "inst.csv"});
    auto o = testing::run_bin(args, dir);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  const auto with = read_jsonl(dir / "with.jsonl");
  const auto without = read_jsonl(dir / "without.jsonl");
  using Key = std::tuple<std::string, std::string, std::string>;
  const auto key = [](const nlohmann::json& a) {
    return Key{a["type"].get<std::string>(), a["symbol"].get<std::string>(), a["exch_ts_ns"].get<std::string>()};
  };
  std::multiset<Key> base;
  for (const auto& a : without) base.insert(key(a));
  int touches = 0;
  for (const auto& a : with) {
    const std::string type = a["type"].get<std::string>();
    if (type.rfind("limit_", 0) == 0) {
      EXPECT_EQ(type, "limit_up_touched") << a.dump();
      EXPECT_EQ(a["symbol"].get<std::string>(), "600761.SH");
      const int64_t ns = std::stoll(a["exch_ts_ns"].get<std::string>());
      const int64_t ms = (ns / 1'000'000 + 8 * 3'600'000) % 86'400'000;
      EXPECT_EQ(ms, high_ms) << "the touch is the first time the price reached 21.75";
      EXPECT_TRUE(continuous_ms(ms)) << "in continuous trading";
      EXPECT_EQ(a["price_ticks"].get<int64_t>(), 2175);
      ++touches;
      continue;
    }
    auto it = base.find(key(a));
    EXPECT_NE(it, base.end()) << "new with the limit: " << a.dump();
    if (it != base.end()) base.erase(it);
  }
  EXPECT_EQ(touches, 1);
  EXPECT_TRUE(base.empty()) << base.size() << " alerts of the day without the limit are gone";
}

}  // namespace
}  // namespace ts
