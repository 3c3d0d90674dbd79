// The JSONL sink after an interrupted run (torn last line, re-run over the same input), and alert
// identity across sinks: the JSONL line read as jq reads it (numbers as doubles) names the same
// alert, with the same exchange time, as the SQLite row.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "audit/audit_store.h"
#include "audit/audit_test_util.h"
#include "audit/jsonl_sink.h"
#include "test_data.h"

namespace ts::testing {
namespace {

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// An alert with its real id (a hash of its identity, as the rule engine makes it).
Alert real_alert(SymbolId sym, uint64_t k) {
  Alert a = make_alert(sym, k);
  a.exch_ts_ns += int64_t(k) * 1'000'003;  // not a multiple of 256 ns: a double would round it
  a.id = alert_id("600519.SH", a.type, a.exch_ts_ns, a.event_seq);
  return a;
}

TEST(JsonlResume, TornLastLineIsCutAndAlertsAlreadyThereAreNotWrittenAgain) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const auto path = scratch_dir("jsonl_resume") / "alerts.jsonl";
  {
    auto sink = JsonlSink::open(path.string(), false);
    ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
    for (uint64_t k = 0; k < 3; ++k) ASSERT_TRUE(sink.value()->write(real_alert(sym, k), symbols).is_ok());
    ASSERT_TRUE(sink.value()->close().is_ok());
  }
  // A kill -9 in the middle of the fourth line.
  const std::string whole = slurp(path);
  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << R"({"event_seq":1003,"exch_ts_ns":"16752)";
  }
  // The re-run over the same input raises alerts 0..4 again.
  auto sink = JsonlSink::open(path.string(), true);
  ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
  EXPECT_EQ(sink.value()->previous_alerts(), 3u);
  EXPECT_GT(sink.value()->repaired_bytes(), 0u);
  EXPECT_EQ(slurp(path), whole) << "the torn line is cut at open, before anything is written";
  for (uint64_t k = 0; k < 5; ++k) ASSERT_TRUE(sink.value()->write(real_alert(sym, k), symbols).is_ok());
  ASSERT_TRUE(sink.value()->close().is_ok());
  EXPECT_EQ(sink.value()->written(), 2u);
  EXPECT_EQ(sink.value()->skipped_present(), 3u);

  std::multiset<uint64_t> ids;
  for (const auto& line : lines_of(path)) ids.insert(nlohmann::json::parse(line).at("id").get<uint64_t>());
  std::multiset<uint64_t> want;
  for (uint64_t k = 0; k < 5; ++k) want.insert(real_alert(sym, k).id);
  EXPECT_EQ(ids, want) << "every alert once, every line whole";
}

TEST(JsonlResume, APreviousRunsFileIsRefusedWithoutAppendAndLeftAsItIs) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const auto path = scratch_dir("jsonl_refuse") / "alerts.jsonl";
  {
    auto sink = JsonlSink::open(path.string(), false);
    ASSERT_TRUE(sink.is_ok());
    ASSERT_TRUE(sink.value()->write(real_alert(sym, 1), symbols).is_ok());
  }
  const std::string before = slurp(path);
  auto again = JsonlSink::open(path.string(), false);
  ASSERT_FALSE(again.is_ok());
  EXPECT_NE(again.status().message().find("already holds 1 alerts"), std::string::npos) << again.status().message();
  EXPECT_NE(again.status().message().find("--append"), std::string::npos);
  EXPECT_EQ(slurp(path), before);
  // An empty file is not a previous run.
  std::ofstream(path, std::ios::trunc).close();
  EXPECT_TRUE(JsonlSink::open(path.string(), false).is_ok());
}

// --jsonl /dev/stdout (piping alerts into jq) or a FIFO: nothing is read back from it, so opening
// it neither blocks nor refuses.
TEST(JsonlResume, ANonRegularFileIsWrittenAsItIs) {
  const auto dir = scratch_dir("jsonl_fifo");
  const auto fifo = dir / "alerts.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto c = jsonl_read_contents(fifo.string());
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c.value().alerts, 0u);
  auto dev_null = JsonlSink::open("/dev/null", false);
  ASSERT_TRUE(dev_null.is_ok()) << dev_null.status().to_string();
  SymbolTable symbols;
  EXPECT_TRUE(dev_null.value()->write(real_alert(symbols.intern("600519.SH"), 1), symbols).is_ok());
}

TEST(AlertIdentity, JsonlReadAsDoublesMatchesTheSqliteRow) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const auto dir = scratch_dir("alert_identity");
  std::vector<Alert> alerts;
  for (uint64_t k = 0; k < 64; ++k) alerts.push_back(real_alert(sym, k));
  {
    auto jsonl = JsonlSink::open((dir / "alerts.jsonl").string(), false);
    auto store = AuditStore::open((dir / "audit.db").string());
    ASSERT_TRUE(jsonl.is_ok() && store.is_ok());
    for (const Alert& a : alerts) {
      ASSERT_TRUE(jsonl.value()->write(a, symbols).is_ok());
      ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    }
    ASSERT_TRUE(jsonl.value()->close().is_ok());
    ASSERT_TRUE(store.value()->close().is_ok());
  }
  // The SQLite rows as the sqlite3 shell shows them: signed 64-bit integers.
  std::map<int64_t, int64_t> rows;  // alert_id → exch_ts_ns
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir / "audit.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT alert_id, exch_ts_ns FROM alerts", -1, &q, nullptr), SQLITE_OK);
  while (sqlite3_step(q) == SQLITE_ROW) rows[sqlite3_column_int64(q, 0)] = sqlite3_column_int64(q, 1);
  sqlite3_finalize(q);
  sqlite3_close(db);
  ASSERT_EQ(rows.size(), alerts.size());

  size_t matched = 0;
  for (const auto& line : lines_of(dir / "alerts.jsonl")) {
    // jq 1.6 and JavaScript parse every number as a double.
    const auto j = nlohmann::json::parse(line, nullptr, true, false);
    const double id_as_jq_reads_it = nlohmann::json::parse(j.at("id").dump()).get<double>();
    ASSERT_LT(id_as_jq_reads_it, 9.2e18) << "id " << j.at("id").dump() << " is negative in SQLite";
    const int64_t id = int64_t(id_as_jq_reads_it);
    ASSERT_TRUE(rows.count(id)) << "id " << j.at("id").dump() << " read as " << std::fixed << id_as_jq_reads_it
                                << " is not a row of the audit store";
    ASSERT_TRUE(j.at("exch_ts_ns").is_string()) << "a 64-bit timestamp as a JSON number is rounded by jq";
    EXPECT_EQ(std::stoll(j.at("exch_ts_ns").get<std::string>()), rows[id]);
    ++matched;
  }
  EXPECT_EQ(matched, alerts.size());
}

}  // namespace
}  // namespace ts::testing
