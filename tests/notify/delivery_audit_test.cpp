// Delivery state and latency in the SQLite audit store (notify_deliveries) and in Prometheus: rows
// that never go backwards, an outage recorded attempt by attempt with its last error, the catch-up
// from the outbox after a crash, the per-receiver latency histogram and state counters. (The same
// checks against PostgreSQL: delivery_audit_pg_test.cpp.)
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "audit/audit_store.h"
#include "delivery_audit_checks.h"
#include "notify/delivery_audit.h"
#include "notify_test_util.h"
#include "peer_process.h"
#include "test_data.h"

namespace ts::notify {
namespace {

using testing::PeerProcess;
using testing::wait_for;

TEST(NotifyDeliveryAudit, RowsNeverGoBackwards) {
  auto dir = testing::scratch_dir("notify_audit_rows");
  testing::check_rows_never_go_backwards(sqlite_delivery_audit((dir / "audit.db").string()), "u1", "desk");
}

TEST(NotifyDeliveryAudit, OutageAndRecoveryAreRecordedWithLatencyAndMetrics) {
  auto dir = testing::scratch_dir("notify_audit_outage");
  const int port = testing::free_port();
  NotifyConfig cfg = testing::notify_config(testing::hook_toml(dir.string(), port));
  cfg.audit_db = (dir / "audit.db").string();
  testing::check_outage_and_recovery(cfg, sqlite_delivery_audit(cfg.audit_db), dir, port, "hook");
}

TEST(NotifyDeliveryAudit, RefusedForGoodIsFailedInTheAuditAndTheCounter) {
  auto dir = testing::scratch_dir("notify_audit_failed");
  PeerProcess peer("webhook_peer.py", dir, "web", {"--fail-status", "404"});
  NotifyConfig cfg = testing::notify_config(testing::hook_toml(dir.string(), peer.port()));
  cfg.audit_db = (dir / "audit.db").string();
  Metrics metrics;
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols, &metrics);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();
  ASSERT_TRUE(n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kHighDive, 42)));
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().dead == 1; }));
  n.value()->stop();
  const auto rows = AuditStore::open(cfg.audit_db).value()->deliveries({}).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, "failed");
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_EQ(rows[0].latency_ns, -1);
  EXPECT_NE(rows[0].last_error.find("404"), std::string::npos) << rows[0].last_error;
  EXPECT_EQ(rows[0].alert_ids, (std::vector<uint64_t>{42}));
  EXPECT_NE(metrics.serialize().find("ticksentry_notify_deliveries_total{receiver=\"hook\",state=\"failed\"} 1"),
            std::string::npos);
}

TEST(NotifyDeliveryAudit, CatchesUpFromTheOutboxAfterACrash) {
  // A run without the audit (or one killed before its writer committed): the outbox has the
  // truth; the next start records it.
  auto dir = testing::scratch_dir("notify_audit_catchup");
  auto outbox = Outbox::open((dir / "outbox.db").string()).value();
  std::vector<Notification> ns(3);
  for (int i = 0; i < 3; ++i) {
    ns[size_t(i)].receiver = "hook";
    ns[size_t(i)].group_key = "g" + std::to_string(i);
    NotifyAlert a;
    a.alert_id = uint64_t(10 + i);
    a.alert_unix_ns = 1'000;
    ns[size_t(i)].alerts = {a};
  }
  std::vector<int64_t> ids;
  ASSERT_TRUE(outbox->enqueue(ns, 2'000, &ids).is_ok());
  ASSERT_EQ(ids.size(), 3u);
  ASSERT_TRUE(outbox->mark_delivered(ids[0], 1, 5'000, 4'000).is_ok());
  ASSERT_TRUE(outbox->mark_dead(ids[1], 4, "http 410").is_ok());
  const std::string audit_db = (dir / "audit.db").string();
  {
    auto audit = DeliveryAudit::open(sqlite_delivery_audit(audit_db), *outbox);
    ASSERT_TRUE(audit.is_ok()) << audit.status().to_string();
  }
  auto rows = AuditStore::open(audit_db).value()->deliveries({}).value();
  ASSERT_EQ(rows.size(), 3u);
  std::map<int64_t, DeliveryAuditRecord> by_id;
  for (auto& r : rows) by_id[r.notification_id] = r;
  EXPECT_EQ(by_id[ids[0]].state, "delivered");
  EXPECT_EQ(by_id[ids[0]].latency_ns, 3'000);       // enqueue (2000) → delivered (5000)
  EXPECT_EQ(by_id[ids[0]].alert_latency_ns, 4'000);
  EXPECT_EQ(by_id[ids[1]].state, "failed");
  EXPECT_EQ(by_id[ids[1]].last_error, "http 410");
  EXPECT_EQ(by_id[ids[2]].state, "pending");
  EXPECT_EQ(by_id[ids[2]].alert_ids, (std::vector<uint64_t>{12}));
  // The last one is delivered later, with no audit running; the next open catches up from it.
  ASSERT_TRUE(outbox->mark_delivered(ids[2], 2, 9'000, 8'000).is_ok());
  { ASSERT_TRUE(DeliveryAudit::open(sqlite_delivery_audit(audit_db), *outbox).is_ok()); }
  rows = AuditStore::open(audit_db).value()->deliveries({}).value();
  for (auto& r : rows) by_id[r.notification_id] = r;
  EXPECT_EQ(by_id[ids[2]].state, "delivered");
  EXPECT_EQ(by_id[ids[2]].attempts, 2);
}

}  // namespace
}  // namespace ts::notify
