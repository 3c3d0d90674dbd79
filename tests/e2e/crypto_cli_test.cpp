// Crypto captures through the CLI: `replay --format <venue>` reads a capture with 0 errors,
// `record` writes the project csv and that csv replays to the same events (recorded again, it is
// byte-identical) and the same alerts, prices and sizes included, with no --instruments (the csv
// carries each symbol's units), the decoder's counters are in --summary-json, and a file of no
// known venue is exit 2 naming what to give.
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

// What a person reads in an alert, per alert in order: no timing fields.
std::vector<std::string> alert_texts(const fs::path& jsonl) {
  std::vector<std::string> out;
  std::ifstream f(jsonl);
  for (std::string line; std::getline(f, line);) {
    if (line.empty()) continue;
    const auto a = nlohmann::json::parse(line);
    nlohmann::json kept;
    for (const char* k : {"id", "symbol", "type", "severity", "exch_ts_ns", "event_seq", "price_text", "values"}) {
      if (a.contains(k)) kept[k] = a[k];
    }
    out.push_back(kept.dump());
  }
  return out;
}

// The decoders fit a symbol's units to the digits the venue writes (Bitstamp 2015 sizes in 1e-8
// BTC, NKNUSDT prices in 1e-5); the recorded csv must replay to the same alerts — the same
// prices and sizes in every alert's text — without an --instruments row for them.
TEST(CryptoCli, RecordedCaptureReplaysToTheSameAlertsWithoutInstruments) {
  const auto d = testing::data_dir() / "crypto";
  const auto l3 = d / "bitstamp-l3-20150501" / "2015-05-01.log.gz";
  TS_REQUIRE_DATA(l3);
  TS_REQUIRE_DATA(d / "BINANCE.ws.1.0");
  struct Capture {
    std::string name, format;
    std::vector<std::string> paths;
    std::string units_line;  // the csv says the units the feed was read in
    bool has_alerts;
  };
  const std::vector<Capture> captures = {
      {"bitstamp-l3", "bitstamp-l3", {l3.string()}, "\nunits,BITSTAMP:BTCUSD,0.01,0.00000001\n", true},
      {"binance", "binance-json", {(d / "BINANCE.ws.1.0").string(), (d / "BINANCE.http.0.0").string()},
       "\nunits,BINANCE:NKNUSDT,", false},
  };
  for (const auto& c : captures) {
    auto dir = testing::scratch_dir("crypto_cli_units_" + c.name);
    std::vector<std::string> args = {"replay", "--format", c.format};
    args.insert(args.end(), c.paths.begin(), c.paths.end());
    for (const char* a : {"--no-stdout", "--jsonl", "direct.jsonl", "--audit-db", "", "--summary-json", "direct.json"}) {
      args.push_back(a);
    }
    auto o = run_bin(args, dir);
    ASSERT_EQ(o.exit_code, 0) << c.name << ": " << o.err;
    args = {"record", "--format", c.format};
    args.insert(args.end(), c.paths.begin(), c.paths.end());
    args.insert(args.end(), {"--out", "rec.csv.gz"});
    o = run_bin(args, dir);
    ASSERT_EQ(o.exit_code, 0) << c.name << ": " << o.err;
    o = run_bin({"replay", "--format", "csv", "rec.csv.gz", "--no-stdout", "--jsonl", "csv.jsonl", "--audit-db", "",
                 "--summary-json", "csv.json"},
                dir);
    ASSERT_EQ(o.exit_code, 0) << c.name << ": " << o.err;
    const auto direct = read_json(dir / "direct.json"), csv = read_json(dir / "csv.json");
    EXPECT_EQ(csv["events"], direct["events"]) << c.name;
    EXPECT_EQ(csv["alerts"], direct["alerts"]) << c.name;
    EXPECT_TRUE(csv["errors"].empty()) << c.name << ": " << csv["errors"].dump();
    const auto want = alert_texts(dir / "direct.jsonl"), got = alert_texts(dir / "csv.jsonl");
    if (c.has_alerts) {
      EXPECT_GT(want.size(), 5u) << c.name;
    }
    ASSERT_EQ(got.size(), want.size()) << c.name;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << c.name << " alert " << i;
    o = run_bin({"record", "--format", "csv", "rec.csv.gz", "--out", "plain.csv"}, dir);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(slurp(dir / "plain.csv").find(c.units_line), std::string::npos) << c.name;
  }
}

TEST(CryptoCli, DecoderCountersAreInTheSummary) {
  const auto d = testing::data_dir() / "crypto";
  TS_REQUIRE_DATA(d / "KRAKEN.ws.50.0");
  TS_REQUIRE_DATA(d / "BINANCE.ws.1.0");
  auto dir = testing::scratch_dir("crypto_cli_counters");
  auto o = run_bin({"replay", "--format", "kraken-json", (d / "KRAKEN.ws.50.0").string(), "--no-stdout", "--jsonl", "",
                    "--audit-db", "", "--summary-json", "kraken.json"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = read_json(dir / "kraken.json");
  // Every Kraken update's CRC32 verified (4,269 in this capture), none wrong.
  EXPECT_EQ(j["feed"]["kraken"]["checksums_verified"], 4269) << j["feed"].dump();
  EXPECT_EQ(j["feed"]["kraken"]["checksum_mismatch"], 0);
  EXPECT_EQ(j["feed"]["kraken"]["bad_messages"], 0);
  EXPECT_GT(j["feed"]["kraken"]["messages"].get<uint64_t>(), 4269u);
  // One NKNUSDT diff taken out of the Binance capture: a sequence gap, the book stale, counted.
  std::ifstream in(d / "BINANCE.ws.1.0");
  std::ofstream cut(dir / "BINANCE.cut");
  int line_no = 0, dropped = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const bool diff = line.find("depthUpdate") != std::string::npos && line.find("nknusdt") != std::string::npos;
    if (diff && line_no > 120 && dropped < 1) {
      ++dropped;
      continue;
    }
    cut << line << '\n';
  }
  ASSERT_EQ(dropped, 1);
  o = run_bin({"replay", "--format", "binance-json", (dir / "BINANCE.cut").string(), (d / "BINANCE.http.0.0").string(),
               "--no-stdout", "--jsonl", "", "--audit-db", "", "--summary-json", "binance.json"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  j = read_json(dir / "binance.json");
  EXPECT_EQ(j["feed"]["binance"]["sequence_gap"], 1) << j["feed"].dump();
  EXPECT_EQ(j["feed"]["binance"]["stale_books"], 1);
  EXPECT_TRUE(j["errors"].empty()) << j["errors"].dump();  // a gap is feed health, not bad input
  EXPECT_NE(o.err.find("sequence_gap=1"), std::string::npos) << o.err;  // the printed summary
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
