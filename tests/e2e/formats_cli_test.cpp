// The exchange layouts through the binary: each real dataset replays with 0 errors, `record`
// writes the project CSV that replays to the same alerts, and a file that yields no valid record
// (a wrong --format) is exit 2 with the first error shown, for replay, record, features --export
// and publish alike.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using testing::run_bin;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

struct Dataset {
  const char* format;
  const char* path;  // under the data folder
  uint64_t events;
};

const std::vector<Dataset> kDatasets = {
    {"szse-l2", "szse-l2/5stocks-20220601/tick.csv.gz", 20'980},
    {"szse-trades", "szse-trades/000001-20230201", 133'815 + 14'872},
    {"sse-l3", "sse-l3/20230711-5stocks", 109'771 + 39'588 + 109'616},
};

std::vector<std::string> quiet_outputs(const std::string& summary) {
  return {"--no-stdout", "--http", "off", "--jsonl", "", "--audit-db", "", "--summary-json", summary};
}

TEST(FormatsCli, EachExchangeDatasetReplaysCleanAndItsRecordingReplaysTheSame) {
  for (const auto& d : kDatasets) {
    const fs::path input = testing::data_dir() / d.path;
    TS_REQUIRE_DATA(input);
    const auto dir = testing::scratch_dir(std::string("formats_cli_") + d.format);
    std::vector<std::string> args = {"replay", "--format", d.format, input.string()};
    for (auto& a : quiet_outputs("direct.json")) args.push_back(a);
    auto o = run_bin(args, dir);
    ASSERT_EQ(o.exit_code, 0) << d.format << "\n" << o.err;
    const auto direct = read_json(dir / "direct.json");
    EXPECT_EQ(direct["events"].get<uint64_t>(), d.events) << d.format;
    EXPECT_EQ(direct["errors"].size(), 0u) << d.format << ": " << direct["errors"].dump();

    o = run_bin({"record", "--format", d.format, input.string(), "--out", "rec.csv.gz"}, dir);
    ASSERT_EQ(o.exit_code, 0) << d.format << "\n" << o.err;
    args = {"replay", "--format", "csv", "rec.csv.gz"};
    for (auto& a : quiet_outputs("recorded.json")) args.push_back(a);
    o = run_bin(args, dir);
    ASSERT_EQ(o.exit_code, 0) << d.format << "\n" << o.err;
    const auto recorded = read_json(dir / "recorded.json");
    EXPECT_EQ(recorded["events"], direct["events"]) << d.format;
    EXPECT_EQ(recorded["events_by_kind"], direct["events_by_kind"]) << d.format;
    EXPECT_EQ(recorded["alerts"], direct["alerts"]) << d.format;
    EXPECT_EQ(recorded["errors"], direct["errors"]) << d.format;
  }
}

TEST(FormatsCli, WrongFormatReadsNothingAndExitsTwoShowingTheFirstError) {
  const fs::path tick = testing::data_dir() / "szse-l2/5stocks-20220601/tick.csv.gz";
  TS_REQUIRE_DATA(tick);
  const auto dir = testing::scratch_dir("formats_cli_wrong");
  // Every command that reads an input: replay, record, features --export and publish (which
  // must not need its broker to say so: nothing is sent).
  for (const std::string verb : {"replay", "record", "features", "publish"}) {
    std::vector<std::string> args = {verb, "--format", "csv", tick.string()};
    if (verb == "record") {
      args.insert(args.end(), {"--out", "x.csv"});
    } else if (verb == "features") {
      args.insert(args.end(), {"--export", "export"});
    } else if (verb == "publish") {
      args.insert(args.end(), {"--brokers", "127.0.0.1:9", "--topic", "md"});
    } else {
      for (auto& a : quiet_outputs("s.json")) args.push_back(a);
    }
    auto o = run_bin(args, dir);
    EXPECT_EQ(o.exit_code, 2) << verb << "\n" << o.err;
    EXPECT_NE(o.err.find("no valid record"), std::string::npos) << verb << "\n" << o.err;
    EXPECT_NE(o.err.find("the first: tick.csv.gz:1:"), std::string::npos) << verb << "\n" << o.err;
  }
  // The export wrote no data set (and no temporary window file) from nothing.
  EXPECT_FALSE(fs::exists(dir / "export" / "manifest.json"));
  EXPECT_FALSE(fs::exists(dir / "export" / ".windows.tmp"));
  // A header-only file of a right format: nothing valid either.
  std::string header(4096, '\0');
  FILE* p = popen(("gzip -dc '" + tick.string() + "' | head -1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  header.resize(fread(header.data(), 1, header.size(), p));
  pclose(p);
  ASSERT_GT(header.size(), 100u);
  std::ofstream(dir / "tick.csv") << header;
  auto o = run_bin({"replay", "--format", "szse-l2", "tick.csv", "--no-stdout", "--http", "off", "--jsonl", "",
                    "--audit-db", ""},
                   dir);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("empty_file"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts
