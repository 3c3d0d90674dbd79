// Delivery state and latency in the audit store (notify_deliveries) and in Prometheus: rows that
// never go backwards, an outage recorded attempt by attempt with its last error, the catch-up
// from the outbox after a crash, the per-receiver latency histogram and state counters.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "audit/audit_store.h"
#include "notify/delivery_audit.h"
#include "notify_test_util.h"
#include "peer_process.h"
#include "test_data.h"

namespace ts::notify {
namespace {

using testing::PeerProcess;
using testing::wait_for;

DeliveryAuditRecord row(int64_t id, const std::string& state, int attempts, const std::string& error = "") {
  DeliveryAuditRecord r;
  r.outbox_uid = "u1";
  r.notification_id = id;
  r.receiver = "desk";
  r.group_key = "root{symbol=\"600519.SH\"}";
  r.status = "firing";
  r.alert_ids = {7, 8};
  r.state = state;
  r.attempts = attempts;
  r.enqueued_unix_ns = 1000 + id;
  r.alert_unix_ns = 900;
  if (state == "delivered") {
    r.delivered_unix_ns = 5000;
    r.latency_ns = 5000 - r.enqueued_unix_ns;
    r.alert_latency_ns = 4100;
  }
  r.last_error = error;
  return r;
}

TEST(NotifyDeliveryAudit, RowsNeverGoBackwards) {
  auto dir = testing::scratch_dir("notify_audit_rows");
  auto store = AuditStore::open((dir / "audit.db").string()).value();
  ASSERT_TRUE(store->write_delivery(row(1, "pending", 0)).is_ok());
  ASSERT_TRUE(store->write_delivery(row(1, "pending", 2, "http 503")).is_ok());
  ASSERT_TRUE(store->write_delivery(row(1, "delivered", 3)).is_ok());
  ASSERT_TRUE(store->write_delivery(row(1, "pending", 0)).is_ok());           // late "pending": ignored
  ASSERT_TRUE(store->write_delivery(row(2, "delivered", 1)).is_ok());        // outcome before "pending"
  ASSERT_TRUE(store->write_delivery(row(2, "pending", 0)).is_ok());
  ASSERT_TRUE(store->write_delivery(row(3, "failed", 5, "http 404")).is_ok());
  ASSERT_TRUE(store->write_delivery(row(4, "pending", 1, "timeout")).is_ok());
  ASSERT_TRUE(store->flush().is_ok());
  auto all = store->deliveries({}).value();
  ASSERT_EQ(all.size(), 4u);
  std::map<int64_t, DeliveryAuditRecord> by_id;
  for (auto& r : all) by_id[r.notification_id] = r;
  EXPECT_EQ(by_id[1].state, "delivered");
  EXPECT_EQ(by_id[1].attempts, 3);
  EXPECT_EQ(by_id[1].last_error, "http 503");  // a delivery keeps the last failure's message
  EXPECT_EQ(by_id[1].alert_latency_ns, 4100);
  EXPECT_EQ(by_id[1].latency_ns, 5000 - 1001);
  EXPECT_EQ(by_id[1].alert_ids, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(by_id[2].state, "delivered");
  EXPECT_EQ(by_id[3].state, "failed");
  EXPECT_EQ(by_id[4].latency_ns, -1);
  EXPECT_EQ(all.front().notification_id, 4);  // newest first
  DeliveryQuery failed;
  failed.state = "failed";
  EXPECT_EQ(store->deliveries(failed).value().size(), 1u);
  DeliveryQuery other;
  other.receiver = "nobody";
  EXPECT_TRUE(store->deliveries(other).value().empty());
  EXPECT_EQ(store->delivery_resume_id("u1").value(), 4);   // the lowest pending
  EXPECT_EQ(store->delivery_resume_id("u2").value(), 1);   // an outbox it has not seen
  ASSERT_TRUE(store->close().is_ok());
  // Reopening keeps the table (the schema is idempotent).
  EXPECT_EQ(AuditStore::open((dir / "audit.db").string()).value()->deliveries({}).value().size(), 4u);
}

std::string hook_toml(const std::string& dir, int port) {
  return "[notify]\noutbox_db = \"" + dir + "/outbox.db\"\ndrain_ms = 0\n"
         "[[notify.receivers]]\nname = \"hook\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:" + std::to_string(port) +
         "/generic\"\nrate_per_s = 1000\nburst = 1000\ntimeout_ms = 2000\n"
         "[notify.route]\nreceiver = \"hook\"\ngroup_by = [\"symbol\"]\ngroup_wait_ms = 0\n"
         "[notify.retry]\ninitial_backoff_ms = 20\nmax_backoff_ms = 100\n";
}

TEST(NotifyDeliveryAudit, OutageAndRecoveryAreRecordedWithLatencyAndMetrics) {
  auto dir = testing::scratch_dir("notify_audit_outage");
  const int port = testing::free_port();
  NotifyConfig cfg = testing::notify_config(hook_toml(dir.string(), port));
  cfg.audit_db = (dir / "audit.db").string();
  Metrics metrics;
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols, &metrics);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  n.value()->start();
  const int kAlerts = 6;
  for (int i = 0; i < kAlerts; ++i) {
    ASSERT_TRUE(n.value()->submit(testing::notify_alert(symbols, "60051" + std::to_string(i) + ".SH",
                                                        AlertType::kRapidRise, uint64_t(100 + i))));
  }
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().failed_attempts >= 2 * kAlerts; }));
  {
    // While the receiver is down the audit store shows them pending, with attempts and the error.
    auto mid = AuditStore::open(cfg.audit_db).value();
    ASSERT_TRUE(wait_for([&] {
      auto rows = mid->deliveries({}).value();
      return rows.size() == size_t(kAlerts) &&
             std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.state == "pending" && r.attempts >= 1; });
    }));
    const auto rows = mid->deliveries({}).value();
    EXPECT_NE(rows[0].last_error.find("http://127.0.0.1:" + std::to_string(port)), std::string::npos) << rows[0].last_error;
  }
  PeerProcess peer("webhook_peer.py", dir, "web", {"--port", std::to_string(port)});
  ASSERT_TRUE(wait_for([&] { return n.value()->outbox().counts().value().pending == 0; }));
  n.value()->stop();

  auto store = AuditStore::open(cfg.audit_db).value();
  const auto rows = store->deliveries({}).value();
  ASSERT_EQ(rows.size(), size_t(kAlerts));
  std::set<uint64_t> ids;
  for (const auto& r : rows) {
    EXPECT_EQ(r.state, "delivered");
    EXPECT_EQ(r.receiver, "hook");
    EXPECT_EQ(r.outbox_uid, n.value()->outbox().uid());
    EXPECT_GE(r.attempts, 2);
    EXPECT_GT(r.latency_ns, 0);
    EXPECT_GE(r.alert_latency_ns, r.latency_ns - 1'000'000);  // the alert came before its enqueue (±1 ms clocks)
    EXPECT_EQ(r.delivered_unix_ns - r.enqueued_unix_ns, r.latency_ns);
    EXPECT_FALSE(r.last_error.empty());
    ids.insert(r.alert_ids.begin(), r.alert_ids.end());
  }
  EXPECT_EQ(ids, (std::set<uint64_t>{100, 101, 102, 103, 104, 105}));
  // The same numbers in the outbox's record.
  const auto outbox_rows = n.value()->outbox().records().value();
  for (const auto& o : outbox_rows) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.notification_id == o.id; });
    ASSERT_NE(it, rows.end());
    EXPECT_EQ(it->attempts, o.attempts);
    EXPECT_EQ(it->alert_latency_ns, o.latency_ns);
  }

  const std::string text = metrics.serialize();
  EXPECT_NE(text.find("ticksentry_notify_delivery_latency_seconds_count{receiver=\"hook\"} 6"), std::string::npos) << text;
  EXPECT_NE(text.find("ticksentry_notify_deliveries_total{receiver=\"hook\",state=\"delivered\"} 6"), std::string::npos);
  EXPECT_NE(text.find("ticksentry_notify_deliveries_total{receiver=\"hook\",state=\"failed\"} 0"), std::string::npos);
  EXPECT_NE(text.find("ticksentry_notify_delivery_attempts_total{receiver=\"hook\",result=\"ok\"} 6"), std::string::npos);
  EXPECT_EQ(text.find("ticksentry_notify_delivery_attempts_total{receiver=\"hook\",result=\"error\"} 0"), std::string::npos);
  // Every delivery waited out the outage (>= 20 ms): none in the 1 ms and 2 ms buckets.
  EXPECT_NE(text.find("ticksentry_notify_delivery_latency_seconds_bucket{receiver=\"hook\",le=\"0.002\"} 0"), std::string::npos);
}

TEST(NotifyDeliveryAudit, RefusedForGoodIsFailedInTheAuditAndTheCounter) {
  auto dir = testing::scratch_dir("notify_audit_failed");
  PeerProcess peer("webhook_peer.py", dir, "web", {"--fail-status", "404"});
  NotifyConfig cfg = testing::notify_config(hook_toml(dir.string(), peer.port()));
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
    auto audit = DeliveryAudit::open(audit_db, *outbox);
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
  { ASSERT_TRUE(DeliveryAudit::open(audit_db, *outbox).is_ok()); }
  rows = AuditStore::open(audit_db).value()->deliveries({}).value();
  for (auto& r : rows) by_id[r.notification_id] = r;
  EXPECT_EQ(by_id[ids[2]].state, "delivered");
  EXPECT_EQ(by_id[ids[2]].attempts, 2);
}

}  // namespace
}  // namespace ts::notify
