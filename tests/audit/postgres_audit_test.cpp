// The PostgreSQL audit backend against a real server (tests/postgres_server.h: initdb + pg_ctl
// on a loopback port). Skipped, saying why, only if the server cannot start.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <libpq-fe.h>

#include "audit/audit_test_util.h"
#include "audit/postgres_store.h"
#include "kafka/kafka_test_util.h"
#include "postgres_server.h"
#include "test_data.h"

namespace ts::testing {
namespace {

class PostgresAudit : public PostgresTest {};

TEST_F(PostgresAudit, AnAlertIdIsStoredOnceAcrossConnections) {
  SymbolTable symbols;
  Alert a;
  a.symbol = symbols.intern("600519.SH");
  a.type = AlertType::kLargeSell;
  a.exch_ts_ns = 1'675'213'867'120'000'000;
  a.event_seq = 5;
  a.price = 185012;
  a.add_value("qty", 90000, 50000, Cmp::kGe);
  a.id = alert_id("600519.SH", a.type, a.exch_ts_ns, a.event_seq);
  Alert b = a;
  b.event_seq = 6;
  b.id = ~uint64_t(0) - 3;  // the store takes any 64-bit id (alert_id() makes 53-bit ones)
  for (int round = 0; round < 2; ++round) {
    auto store = PostgresStore::open(server().dsn());
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(b, symbols).is_ok());
    ASSERT_TRUE(store.value()->flush().is_ok());
    EXPECT_EQ(store.value()->count().value(), 2) << "round " << round;
    EXPECT_EQ(store.value()->distinct_ids().value(), 2);
  }
}

// A model alert's score is kept (model_json) beside the rule alerts; a database made before the
// column existed gains it at connect, its old rows without a score.
TEST_F(PostgresAudit, KeepsTheModelScoreAndMigratesOlderDatabases) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  {  // an older database: the table without model_json, one row in it
    auto store = PostgresStore::open(server().dsn());
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    Alert old = make_alert(sym, 9'000'001);
    old.type = AlertType::kLargeBuy;
    ASSERT_TRUE(store.value()->write(old, symbols).is_ok());
    ASSERT_TRUE(store.value()->flush().is_ok());
    PGconn* raw = PQconnectdb(server().dsn().c_str());
    ASSERT_EQ(PQstatus(raw), CONNECTION_OK) << PQerrorMessage(raw);
    PGresult* r = PQexec(raw, "ALTER TABLE alerts DROP COLUMN model_json");
    EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQerrorMessage(raw);
    PQclear(r);
    PQfinish(raw);
  }
  auto store = PostgresStore::open(server().dsn());
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  ASSERT_TRUE(store.value()->write(make_model_alert(sym, 9'000'002, "desk-gru", 3, 0.8725f), symbols).is_ok());
  ASSERT_TRUE(store.value()->flush().is_ok());
  AlertQuery q;
  q.alert_id = 9'000'002;
  auto rows = store.value()->query(q);
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_EQ(rows.value().size(), 1u);
  expect_desk_gru_score(rows.value()[0].model);
  q.alert_id = 9'000'001;
  rows = store.value()->query(q);
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_EQ(rows.value().size(), 1u);
  EXPECT_EQ(rows.value()[0].type, "large_buy");
  EXPECT_FALSE(rows.value()[0].model.present) << "the old row reads as before, without a score";
}

TEST_F(PostgresAudit, BadDsnIsAClearError) {
  auto store = PostgresStore::open("host=127.0.0.1 port=1 dbname=postgres connect_timeout=5");
  ASSERT_FALSE(store.is_ok());
  EXPECT_NE(store.status().message().find("PQconnectdb"), std::string::npos) << store.status().message();
}

// Two instances at once, sharing the store chosen in config: every alert stored exactly once.
TEST_F(PostgresAudit, TwoInstancesShareOneStoreWithoutDuplicates) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const auto dir = scratch_dir("postgres_audit");
  {
    std::ofstream cfg(dir / "pg.toml");
    cfg << "[sinks]\naudit_backend = \"postgres\"\npostgres_dsn = \"" << server().dsn() << "\"\n";
  }
  const std::string data = lobster_file("GOOG", "message", 10).string();
  int64_t before = 0;
  {
    auto store = PostgresStore::open(server().dsn());
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    before = store.value()->count().value();
  }
  Child one = spawn({"replay", "--format", "lobster", data, "--config", "pg.toml", "--no-stdout", "--jsonl", "one.jsonl"},
                    dir, "one");
  Child two = spawn({"replay", "--format", "lobster", data, "--config", "pg.toml", "--no-stdout", "--jsonl", "two.jsonl"},
                    dir, "two");
  ASSERT_EQ(wait_child(one, 300), 0) << slurp(one.err);
  ASSERT_EQ(wait_child(two, 300), 0) << slurp(two.err);
  const auto alerts = jsonl_alert_keys(dir / "one.jsonl");
  ASSERT_FALSE(alerts.empty());
  EXPECT_EQ(jsonl_alert_keys(dir / "two.jsonl"), alerts);
  EXPECT_FALSE(std::filesystem::exists(dir / "ticksentry-audit.db")) << "postgres replaces the SQLite store";
  auto store = PostgresStore::open(server().dsn());
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  EXPECT_EQ(store.value()->count().value(), before + int64_t(alerts.size()));
  EXPECT_EQ(store.value()->distinct_ids().value(), store.value()->count().value());
}

// `audit alerts` and `explain` answer the same from PostgreSQL as from SQLite for the same day.
TEST_F(PostgresAudit, AuditAlertsAndExplainMatchTheSqliteStore) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const auto dir = scratch_dir("postgres_audit_cli");
  {
    std::ofstream cfg(dir / "pg.toml");
    cfg << "[sinks]\naudit_backend = \"postgres\"\npostgres_dsn = \"" << server().dsn() << "\"\n";
  }
  const std::string data = lobster_file("GOOG", "message", 10).string();
  Child pg = run_child({"replay", "--format", "lobster", data, "--config", "pg.toml", "--no-stdout", "--jsonl", "",
                        "--http", "off"},
                       dir, "pg");
  ASSERT_EQ(pg.exit_code, 0) << slurp(pg.err);
  Child lite = run_child({"replay", "--format", "lobster", data, "--audit-db", "a.db", "--no-stdout", "--jsonl",
                          "a.jsonl", "--http", "off"},
                         dir, "lite");
  ASSERT_EQ(lite.exit_code, 0) << slurp(lite.err);
  const std::vector<std::string> list = {"audit", "alerts", "--symbol", "GOOG", "--since", "2012-06-21T09:30:00-04:00",
                                         "--until", "2012-06-21T16:00:00-04:00", "--limit", "100000", "--json"};
  auto from = [&](const std::string& name, std::vector<std::string> args, std::vector<std::string> store) {
    args.insert(args.end(), store.begin(), store.end());
    Child c = run_child(args, dir, name);
    EXPECT_EQ(c.exit_code, 0) << slurp(c.err);
    return slurp(c.out);
  };
  const std::string sqlite_list = from("list_lite", list, {"--audit-db", "a.db"});
  const std::string pg_list = from("list_pg", list, {"--postgres-dsn", server().dsn()});
  ASSERT_FALSE(sqlite_list.empty());
  EXPECT_EQ(std::count(sqlite_list.begin(), sqlite_list.end(), '\n'), int64_t(jsonl_alert_keys(dir / "a.jsonl").size()));
  // Two runs: everything equal but the stage timings, and the price in currency to the last
  // binary digit (SQLite keeps ticks × tick size as computed, 570.4300000000001; PostgreSQL the
  // 6-decimal text it was sent, 570.43); price_ticks is exact in both.
  auto untimed = [](const std::string& text) {
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      j.erase("stage_ns");
      j.erase("latency_ns");
      j["price"] = std::round(j["price"].get<double>() * 1e6) / 1e6;
      out.push_back(std::move(j));
    }
    return out;
  };
  const auto from_pg = untimed(pg_list), from_sqlite = untimed(sqlite_list);
  ASSERT_EQ(from_pg.size(), from_sqlite.size());
  for (size_t i = 0; i < from_pg.size(); ++i) {
    ASSERT_EQ(from_pg[i], from_sqlite[i]) << "row " << i << ": " << nlohmann::json::diff(from_sqlite[i], from_pg[i]).dump();
  }
  const std::string id = std::to_string(nlohmann::json::parse(sqlite_list.substr(0, sqlite_list.find('\n')))["id"].get<uint64_t>());
  auto without_stages = [](std::string text) {
    const size_t at = text.find("  stages (us)");
    if (at != std::string::npos) text.erase(at, text.find('\n', at) - at);
    return text;
  };
  const std::string explained = from("explain_lite", {"explain", id}, {"--audit-db", "a.db"});
  EXPECT_NE(explained.find("alert " + id + ": GOOG"), std::string::npos) << explained;
  EXPECT_EQ(without_stages(from("explain_pg", {"explain", id}, {"--config", "pg.toml"})), without_stages(explained));
}

}  // namespace
}  // namespace ts::testing
