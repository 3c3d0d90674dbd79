// Crypto captures through the CLI: `replay --format <venue>` reads a capture with 0 errors,
// `record` writes the project csv and that csv replays to the same events (recorded again, it is
// byte-identical), and a file of no known venue is exit 2 naming what to give.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
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

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(CryptoCli, RecordedCaptureReplaysIdentically) {
  const auto ws = testing::data_dir() / "crypto" / "BINANCE.ws.1.0";
  const auto http = testing::data_dir() / "crypto" / "BINANCE.http.0.0";
  TS_REQUIRE_DATA(ws);
  TS_REQUIRE_DATA(http);
  auto dir = testing::scratch_dir("crypto_cli_record");
  auto o = run_bin({"replay", "--format", "binance-json", ws.string(), http.string(), "--no-stdout", "--jsonl", "",
                    "--audit-db", "", "--summary-json", "direct.json"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto direct = read_json(dir / "direct.json");
  EXPECT_GT(direct["events"].get<int>(), 100);
  EXPECT_TRUE(direct["errors"].empty()) << direct["errors"].dump();

  o = run_bin({"record", "--format", "binance-json", ws.string(), http.string(), "--out", "b.csv"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run_bin({"replay", "--format", "csv", "b.csv", "--no-stdout", "--jsonl", "", "--audit-db", "",
               "--summary-json", "csv.json"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto csv = read_json(dir / "csv.json");
  EXPECT_EQ(csv["events"], direct["events"]);
  EXPECT_TRUE(csv["errors"].empty()) << csv["errors"].dump();
  EXPECT_EQ(csv["alerts"], direct["alerts"]);
  // The csv read back and written again is the same file: every event survived exactly.
  o = run_bin({"record", "--format", "csv", "b.csv", "--out", "b2.csv"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string a = slurp(dir / "b.csv"), b = slurp(dir / "b2.csv");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "b.csv " << a.size() << " bytes, b2.csv " << b.size() << " bytes";
  EXPECT_NE(a.find("BINANCE:NKNUSDT"), std::string::npos);
}

TEST(CryptoCli, EveryCaptureReplaysWithoutErrors) {
  const auto d = testing::data_dir() / "crypto";
  TS_REQUIRE_DATA(d / "KRAKEN.ws.50.0");
  auto dir = testing::scratch_dir("crypto_cli_all");
  const std::vector<std::vector<std::string>> runs = {
      {"crypto", (d / "COINBASE.ws.28.0").string()},
      {"kraken-json", (d / "KRAKEN.ws.50.0").string()},
      {"bitstamp-json", (d / "BITSTAMP.ws.1.0").string(), (d / "BITSTAMP.http.0.0").string()},
  };
  for (const auto& r : runs) {
    std::vector<std::string> args = {"replay", "--format"};
    args.insert(args.end(), r.begin(), r.end());
    for (const char* a : {"--no-stdout", "--jsonl", "", "--audit-db", "", "--summary-json", "s.json"}) args.push_back(a);
    auto o = run_bin(args, dir);
    ASSERT_EQ(o.exit_code, 0) << r[1] << ": " << o.err;
    auto j = read_json(dir / "s.json");
    EXPECT_GT(j["events"].get<int>(), 50) << r[1];
    EXPECT_TRUE(j["errors"].empty()) << r[1] << ": " << j["errors"].dump();
  }
  // Not a capture of any venue: exit 2, and the message names the formats to give.
  std::ofstream(dir / "x.txt") << "hello\nworld\n";
  auto o = run_bin({"replay", "--format", "crypto", "x.txt", "--no-stdout"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("binance-json"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts
