// The delivery audit in PostgreSQL ([sinks] audit_backend = "postgres") against a real server on
// loopback (tests/postgres_server.h; skipped, saying why, only when it cannot start): the SQLite
// backend's checks (delivery_audit_checks.h), the server stopped mid-run (deliveries go on,
// errors counted, every row recorded once it is back), the bounded queue while it is down, and
// `ticksentry audit deliveries` printing the same from both backends.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <libpq-fe.h>

#include "audit/postgres_store.h"
#include "delivery_audit_checks.h"
#include "postgres_server.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts::testing {
namespace {

using notify::DeliveryAudit;
using notify::DeliveryAuditOptions;
using notify::postgres_delivery_audit;
using notify::sqlite_delivery_audit;

class DeliveryAuditPg : public PostgresTest {};

TEST_F(DeliveryAuditPg, RowsNeverGoBackwardsAsInSqlite) {
  check_rows_never_go_backwards(postgres_delivery_audit(server().dsn()), "pg-u1", "pg-rows");
}

TEST_F(DeliveryAuditPg, OutageAndRecoveryAreRecordedWithLatencyAndMetrics) {
  auto dir = scratch_dir("notify_audit_pg_outage");
  const int port = free_port();
  notify::NotifyConfig cfg = notify_config(hook_toml(dir.string(), port, "pg-hook"));
  cfg.audit_postgres_dsn = server().dsn();
  check_outage_and_recovery(cfg, postgres_delivery_audit(server().dsn()), dir, port, "pg-hook");
}

TEST_F(DeliveryAuditPg, AnUnreachableServerAtStartIsAClearError) {
  auto dir = scratch_dir("notify_audit_pg_refused");
  notify::NotifyConfig cfg = notify_config(hook_toml(dir.string(), free_port()));
  cfg.audit_postgres_dsn = "host=127.0.0.1 port=" + std::to_string(free_port()) + " dbname=postgres connect_timeout=5";
  SymbolTable symbols;
  auto n = notify::Notifier::create(cfg, symbols);
  ASSERT_FALSE(n.is_ok());
  EXPECT_NE(n.status().message().find("notify delivery audit"), std::string::npos) << n.status().message();
  EXPECT_NE(n.status().message().find("PQconnectdb"), std::string::npos) << n.status().message();
}

// A row the server refuses while connected (here: a CHECK constraint) costs its batch, counted as
// dropped; the connection stays and later batches are written.
TEST_F(DeliveryAuditPg, ABatchRefusedWhileConnectedIsDroppedAndCountedAndLaterBatchesAreWritten) {
  auto dir = scratch_dir("notify_audit_pg_refused_rows");
  auto outbox = notify::Outbox::open((dir / "outbox.db").string()).value();
  DeliveryAuditOptions o;
  o.flush_ms = 20;
  auto opened = DeliveryAudit::open(postgres_delivery_audit(server().dsn()), *outbox, o);
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  {
    auto conn = pg_open(server().dsn(),
                        "ALTER TABLE notify_deliveries DROP CONSTRAINT IF EXISTS no_refused; "
                        "ALTER TABLE notify_deliveries ADD CONSTRAINT no_refused CHECK (receiver <> 'refused-rx')",
                        "test");
    ASSERT_TRUE(conn.is_ok()) << conn.status().to_string();
    PQfinish(conn.value());
  }
  DeliveryAudit& audit = *opened.value();
  audit.record(audit_row(audit.outbox_uid(), "refused-rx", 1, "pending", 0));
  audit.record(audit_row(audit.outbox_uid(), "refused-ok", 2, "pending", 0));
  audit.start();  // after both: they are one batch
  ASSERT_TRUE(wait_for([&] { return audit.errors() == 1; }));
  EXPECT_EQ(audit.dropped(), 2u) << "the whole batch";
  EXPECT_TRUE(audit.connected());
  audit.record(audit_row(audit.outbox_uid(), "refused-ok", 3, "delivered", 1));
  audit.stop();
  EXPECT_EQ(audit.errors(), 1u);
  auto store = postgres_delivery_audit(server().dsn())();
  ASSERT_TRUE(store.is_ok());
  const auto rows = audit_rows(*store.value(), "refused-ok");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].notification_id, 3);
  EXPECT_TRUE(audit_rows(*store.value(), "refused-rx").empty());
}

// End to end: `ticksentry replay` with [sinks] audit_backend = "postgres" and a [notify] webhook:
// every delivery is in PostgreSQL (no SQLite audit file is made), read back by the CLI.
TEST_F(DeliveryAuditPg, ReplayRecordsEveryDeliveryInPostgres) {
  TS_REQUIRE_DATA(lobster_file("GOOG", "message", 10));
  auto dir = scratch_dir("notify_audit_pg_replay");
  PeerProcess peer("webhook_peer.py", dir, "web");
  {
    std::ofstream cfg(dir / "ticksentry.toml");
    cfg << "[sinks]\naudit_backend = \"postgres\"\npostgres_dsn = \"" << server().dsn() << "\"\n"
        << "[notify]\noutbox_db = \"outbox.db\"\ndrain_ms = 20000\n"
           "[[notify.receivers]]\nname = \"replay-desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:"
        << peer.port() << "/generic\"\nrate_per_s = 1000\nburst = 1000\n"
           "[notify.route]\nreceiver = \"replay-desk\"\ngroup_by = [\"symbol\", \"type\"]\ngroup_wait_ms = 0\n";
  }
  const auto o = run_bin({"replay", "--format", "lobster", lobster_file("GOOG", "message", 10).string(), "--config",
                          "ticksentry.toml", "--no-stdout", "--jsonl", "alerts.jsonl"},
                         dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_FALSE(peer.received().empty()) << "the replay notified nothing";
  EXPECT_FALSE(std::filesystem::exists(dir / "ticksentry-audit.db")) << "PostgreSQL replaces the SQLite audit file";
  const auto json = run_bin({"audit", "deliveries", "--config", "ticksentry.toml", "--receiver", "replay-desk", "--json",
                             "--limit", "100000"},
                            dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::istringstream lines(json.out);
  size_t delivered = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["state"], "delivered") << line;
    EXPECT_GE(j["alert_latency_ns"].get<int64_t>(), 0) << line;
    delivered += j["state"] == "delivered";
  }
  EXPECT_EQ(delivered, peer.received().size());
}

// A server of the test's own, stopped and started again while the notifier runs.
class DeliveryAuditPgOutage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = server_.start(); !why.empty()) GTEST_SKIP() << "PostgreSQL server could not start: " << why;
  }
  PostgresServer server_;
};

TEST_F(DeliveryAuditPgOutage, ServerStoppedMidRunDeliveriesGoOnAndEveryRowIsRecordedOnceBack) {
  auto dir = scratch_dir("notify_audit_pg_down");
  PeerProcess peer("webhook_peer.py", dir, "web");
  notify::NotifyConfig cfg = notify_config(hook_toml(dir.string(), peer.port()));
  cfg.audit_postgres_dsn = server_.dsn();
  Metrics metrics;
  SymbolTable symbols;
  auto n = notify::Notifier::create(cfg, symbols, &metrics);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  n.value()->start();
  auto submit = [&](int from, int count) {
    for (int i = from; i < from + count; ++i) {
      ASSERT_TRUE(n.value()->submit(notify_alert(symbols, "6005" + std::to_string(10 + i) + ".SH", AlertType::kRapidRise,
                                                 uint64_t(200 + i))));
    }
  };
  auto delivered_rows = [&] {
    auto store = postgres_delivery_audit(server_.dsn())();
    if (!store.is_ok()) return size_t(0);
    const auto rows = audit_rows(*store.value(), "hook");
    return size_t(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.state == "delivered"; }));
  };
  submit(0, 3);
  ASSERT_TRUE(wait_for([&] { return delivered_rows() == 3; }));

  ASSERT_TRUE(server_.stop());
  submit(3, 5);
  // Delivery does not wait for the audit store: all 8 reach the webhook while it is down.
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().delivered == 8; }));
  EXPECT_EQ(peer.received().size(), 8u);
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().audit_errors >= 2; }));  // the lost write, then reconnects
  n.value()->publish_metrics(metrics);
  const std::string text = metrics.serialize();
  const size_t at = text.find("\nticksentry_notify_audit_errors_total ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stod(text.substr(at + 38)), 2.0) << text.substr(at, 60);

  ASSERT_TRUE(server_.restart());
  ASSERT_TRUE(wait_for([&] { return delivered_rows() == 8; })) << delivered_rows();
  n.value()->stop();
  const auto stats = n.value()->stats();
  EXPECT_EQ(stats.audit_dropped, 0u);  // held while down (8 × 2 records ≪ max_queued), written when back
  auto store = postgres_delivery_audit(server_.dsn())();
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  const auto rows = audit_rows(*store.value(), "hook");
  ASSERT_EQ(rows.size(), 8u);
  std::set<uint64_t> ids;
  for (const auto& r : rows) {
    EXPECT_EQ(r.state, "delivered");
    EXPECT_EQ(r.attempts, 1);
    EXPECT_GT(r.latency_ns, 0);
    EXPECT_GE(r.alert_latency_ns, 0);
    ids.insert(r.alert_ids.begin(), r.alert_ids.end());
  }
  EXPECT_EQ(ids.size(), 8u);
}

TEST_F(DeliveryAuditPgOutage, WhileDownRowsBeyondTheBoundAreDroppedCountedAndRecoveredFromTheOutbox) {
  auto dir = scratch_dir("notify_audit_pg_bound");
  auto outbox = notify::Outbox::open((dir / "outbox.db").string()).value();
  DeliveryAuditOptions o;
  o.max_queued = 4;
  o.reconnect_min_ms = 50;
  o.reconnect_max_ms = 200;
  auto opened = DeliveryAudit::open(postgres_delivery_audit(server_.dsn()), *outbox, o);
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  DeliveryAudit& audit = *opened.value();
  audit.start();
  ASSERT_TRUE(server_.stop());
  // Ten notifications enqueued and delivered while the server is down: 20 records, 4 held.
  std::vector<notify::Notification> ns(10);
  for (int i = 0; i < 10; ++i) {
    ns[size_t(i)].receiver = "bounded";
    ns[size_t(i)].group_key = "g" + std::to_string(i);
    notify::NotifyAlert a;
    a.alert_id = uint64_t(300 + i);
    a.alert_unix_ns = 1'000;
    ns[size_t(i)].alerts = {a};
  }
  std::vector<int64_t> ids;
  ASSERT_TRUE(outbox->enqueue(ns, 2'000, &ids).is_ok());
  for (int i = 0; i < 10; ++i) {
    auto r = notify::delivery_audit_record(audit.outbox_uid(), ids[size_t(i)], ns[size_t(i)], "pending");
    r.enqueued_unix_ns = r.updated_unix_ns = 2'000;  // as the notifier's commit() sets them
    audit.record(std::move(r));
  }
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(outbox->mark_delivered(ids[size_t(i)], 1, 5'000 + i, 4'000 + i).is_ok());
    auto r = notify::delivery_audit_record(audit.outbox_uid(), ids[size_t(i)], ns[size_t(i)], "delivered");
    r.attempts = 1;
    audit.record(std::move(r));
  }
  ASSERT_TRUE(wait_for([&] { return audit.errors() >= 1 && !audit.connected(); }));
  EXPECT_EQ(audit.dropped(), 16u);  // 4 held (the oldest), the rest counted

  ASSERT_TRUE(server_.restart());
  ASSERT_TRUE(wait_for([&] { return audit.connected(); }));
  auto delivered = [&] {
    auto store = postgres_delivery_audit(server_.dsn())();
    if (!store.is_ok()) return std::vector<DeliveryAuditRecord>{};
    return audit_rows(*store.value(), "bounded");
  };
  // The outbox catch-up after the reconnect records the dropped ones: all ten, delivered.
  ASSERT_TRUE(wait_for([&] {
    const auto rows = delivered();
    return rows.size() == 10 && std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.state == "delivered"; });
  }));
  audit.stop();
  const auto rows = delivered();
  for (const auto& r : rows) {
    EXPECT_EQ(r.enqueued_unix_ns, 2'000);
    EXPECT_EQ(r.latency_ns, r.delivered_unix_ns - 2'000);
    EXPECT_EQ(r.alert_latency_ns, r.delivered_unix_ns - 1'000) << r.notification_id;  // mark_delivered's latency
  }
}

// The CLI prints the same table and JSON from PostgreSQL as from SQLite.
TEST_F(DeliveryAuditPg, AuditDeliveriesPrintsTheSameFromBothBackends) {
  const auto dir = scratch_dir("notify_audit_pg_cli");
  const std::string db = (dir / "audit.db").string();
  auto sqlite = sqlite_delivery_audit(db)();
  auto pg = postgres_delivery_audit(server().dsn())();
  ASSERT_TRUE(sqlite.is_ok() && pg.is_ok()) << pg.status().to_string();
  for (auto* store : {sqlite.value().get(), pg.value().get()}) {
    for (const auto& r : {audit_row("cli-u", "cli-desk", 1, "delivered", 2, "http 503"),
                          audit_row("cli-u", "cli-desk", 2, "failed", 5, "http 404"),
                          audit_row("cli-u", "cli-desk", 3, "pending", 1, "timeout")}) {
      ASSERT_TRUE(store->write(r).is_ok());
    }
    ASSERT_TRUE(store->commit().is_ok());
  }
  sqlite.value().reset();
  pg.value().reset();
  {
    std::ofstream cfg(dir / "pg.toml");
    cfg << "[sinks]\naudit_backend = \"postgres\"\npostgres_dsn = \"" << server().dsn() << "\"\n";
  }
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, {"--json"}, {"--state", "failed"}}) {
    std::vector<std::string> base{"audit", "deliveries", "--receiver", "cli-desk"};
    base.insert(base.end(), extra.begin(), extra.end());
    auto with = [&](std::vector<std::string> args) {
      args.insert(args.begin(), base.begin(), base.end());
      return run_bin(args, dir);
    };
    const auto from_sqlite = with({"--audit-db", db});
    const auto from_pg = with({"--postgres-dsn", server().dsn()});
    const auto from_config = with({"--config", "pg.toml"});
    ASSERT_EQ(from_sqlite.exit_code, 0) << from_sqlite.err;
    ASSERT_EQ(from_pg.exit_code, 0) << from_pg.err;
    ASSERT_EQ(from_config.exit_code, 0) << from_config.err;
    EXPECT_FALSE(from_sqlite.out.empty());
    EXPECT_EQ(from_pg.out, from_sqlite.out);
    EXPECT_EQ(from_config.out, from_sqlite.out);
  }
  const auto table = run_bin({"audit", "deliveries", "--receiver", "cli-desk", "--postgres-dsn", server().dsn()}, dir);
  EXPECT_NE(table.out.find("cli-desk: 1 delivered, 1 failed, 1 pending; alert → delivered p50 0.004 ms"), std::string::npos)
      << table.out;
  const auto none = run_bin({"audit", "deliveries", "--receiver", "nobody", "--postgres-dsn", server().dsn()}, dir);
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.out.find("(no deliveries recorded in PostgreSQL database postgres on 127.0.0.1:"), std::string::npos)
      << none.out;
  const auto down = run_bin({"audit", "deliveries", "--postgres-dsn",
                             "host=127.0.0.1 port=" + std::to_string(free_port()) + " dbname=postgres connect_timeout=5"},
                            dir);
  EXPECT_EQ(down.exit_code, 2);
  EXPECT_NE(down.err.find("PQconnectdb"), std::string::npos) << down.err;
  const auto both = run_bin({"audit", "deliveries", "--audit-db", db, "--postgres-dsn", server().dsn()}, dir);
  EXPECT_EQ(both.exit_code, 2) << "--audit-db and --postgres-dsn exclude each other";
}

}  // namespace
}  // namespace ts::testing
