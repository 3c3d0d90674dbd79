// The PostgreSQL audit backend against a real server (tests/postgres_server.h: initdb + pg_ctl
// on a loopback port). Skipped, saying why, only if the server cannot start.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

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
  b.id = ~uint64_t(0) - 3;  // ids use all 64 bits; BIGINT holds them as signed
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

}  // namespace
}  // namespace ts::testing
