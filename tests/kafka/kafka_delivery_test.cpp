// At-least-once delivery without duplicates downstream: alert ids are deterministic, the audit
// store writes an id once, offsets are committed only after the run's alerts are durable, and a
// restart that re-reads the topic adds no alert to the audit store.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "audit/audit_store.h"
#include "detect/alert.h"
#include "kafka/kafka_mock.h"
#include "kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

TEST(AlertId, SameAlertSameIdAnyFieldChangesIt) {
  const uint64_t id = alert_id("GOOG", AlertType::kVolumeBurst, 1'340'285'400'012'000'000, 4711);
  EXPECT_EQ(id, alert_id("GOOG", AlertType::kVolumeBurst, 1'340'285'400'012'000'000, 4711));
  std::set<uint64_t> ids = {id, alert_id("GOOGL", AlertType::kVolumeBurst, 1'340'285'400'012'000'000, 4711),
                            alert_id("GOOG", AlertType::kBookImbalance, 1'340'285'400'012'000'000, 4711),
                            alert_id("GOOG", AlertType::kVolumeBurst, 1'340'285'400'012'000'001, 4711),
                            alert_id("GOOG", AlertType::kVolumeBurst, 1'340'285'400'012'000'000, 4712)};
  EXPECT_EQ(ids.size(), 5u);
}

TEST(AuditStoreIdempotence, AnAlertIdIsStoredOnceAlsoAcrossReopen) {
  const auto dir = scratch_dir("kafka_audit_idempotent");
  SymbolTable symbols;
  Alert a;
  a.symbol = symbols.intern("600519.SH");
  a.type = AlertType::kLargeBuy;
  a.exch_ts_ns = 1'675'213'867'120'000'000;
  a.event_seq = 77;
  a.id = alert_id("600519.SH", a.type, a.exch_ts_ns, a.event_seq);
  Alert b = a;
  b.event_seq = 78;
  b.id = alert_id("600519.SH", b.type, b.exch_ts_ns, b.event_seq);
  for (int round = 0; round < 2; ++round) {
    auto store = AuditStore::open((dir / "audit.db").string());
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(b, symbols).is_ok());
    ASSERT_TRUE(store.value()->flush().is_ok());
    EXPECT_EQ(store.value()->count().value(), 2) << "round " << round;
  }
}

TEST(KafkaDelivery, ReReadingTheTopicAddsNoAlertAndCommittedOffsetsAreNotReRead) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const auto dir = scratch_dir("kafka_delivery");
  const Child rec = run_child(
      {"record", "--format", "lobster", lobster_file("GOOG", "message", 10).string(), "--out", "goog.csv"}, dir, "record");
  ASSERT_EQ(rec.exit_code, 0) << slurp(rec.err);
  {
    std::ifstream in(dir / "goog.csv");
    std::ofstream out(dir / "goog20k.csv");
    std::string line;
    for (int i = 0; i <= 20000 && std::getline(in, line); ++i) out << line << '\n';
    std::ofstream cfg(dir / "kafka.toml");
    // Absolute thresholds low enough that these 20,000 GOOG events raise alerts (the relative
    // defaults need minutes of history and raise none here).
    cfg << "[kafka]\neof_idle_ms = 3000\n[rules]\nrelative = false\n[rules.large_trade]\nmin_notional = 100000\n";
  }
  auto cluster = KafkaMockCluster::start(3);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("md", 4).is_ok());
  const Child pub =
      run_child({"publish", "--format", "csv", "goog20k.csv", "--brokers", brokers, "--topic", "md"}, dir, "publish");
  ASSERT_EQ(pub.exit_code, 0) << slurp(pub.err);

  auto run = [&](const std::string& group, const std::string& name) {
    Child c = run_child(
        {"run", "--source", "kafka", "--brokers", brokers, "--topic", "md", "--group", group, "--exit-at-eof", "--config",
         "kafka.toml", "--alerts-topic", "alerts", "--no-stdout", "--jsonl", name + ".jsonl", "--audit-db", "audit.db",
         "--append"},  // both runs add to one audit store: the second's alerts are there already
        dir, name, 180);
    EXPECT_EQ(c.exit_code, 0) << slurp(c.err);
    return slurp(c.err);
  };
  auto stored = [&] {
    auto store = AuditStore::open((dir / "audit.db").string());
    return store.is_ok() ? store.value()->count().value() : -1;
  };
  const std::string first = run("desk-a", "first");
  EXPECT_NE(first.find("kafka: 20000 messages"), std::string::npos) << first;
  const int64_t n = stored();
  ASSERT_GT(n, 0);
  EXPECT_EQ(int64_t(jsonl_alert_keys(dir / "first.jsonl").size()), n);

  // Another group re-reads everything (as a restart that lost its offsets would): the same
  // alerts are raised again with the same ids, and the audit store keeps one of each.
  const std::string again = run("desk-b", "again");
  EXPECT_NE(again.find("kafka: 20000 messages"), std::string::npos) << again;
  EXPECT_EQ(jsonl_alert_keys(dir / "again.jsonl"), jsonl_alert_keys(dir / "first.jsonl"));
  EXPECT_EQ(stored(), n);

  // The alerts topic got every alert twice; deduplicated by id it holds each once.
  std::multiset<uint64_t> ids;
  for (const auto& m : read_topic(brokers, "alerts")) ids.insert(nlohmann::json::parse(m.value).at("id").get<uint64_t>());
  EXPECT_EQ(int64_t(ids.size()), 2 * n);
  EXPECT_EQ(int64_t(std::set<uint64_t>(ids.begin(), ids.end()).size()), n);

  // desk-a committed its offsets after its alerts were durable: a restart reads nothing again.
  const std::string restart = run("desk-a", "restart");
  EXPECT_NE(restart.find("kafka: 0 messages"), std::string::npos) << restart;
  EXPECT_EQ(stored(), n);
}

}  // namespace
}  // namespace ts::testing
