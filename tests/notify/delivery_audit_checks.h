#pragma once
// The delivery audit's checks, run against each backend (delivery_audit_test.cpp: SQLite;
// delivery_audit_pg_test.cpp: PostgreSQL), so both are held to the same rules and numbers.
// Rows are scoped by receiver and outbox uid: the PostgreSQL suites share one database.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/metrics.h"
#include "notify/delivery_audit.h"
#include "notify/delivery_audit_store.h"
#include "notify_test_util.h"
#include "peer_process.h"

namespace ts::testing {

inline DeliveryAuditRecord audit_row(const std::string& uid, const std::string& receiver, int64_t id,
                                     const std::string& state, int attempts, const std::string& error = "") {
  DeliveryAuditRecord r;
  r.outbox_uid = uid;
  r.notification_id = id;
  r.receiver = receiver;
  r.group_key = "root{symbol=\"600519.SH\"}";
  r.status = "firing";
  r.alert_ids = {7, 8, ~uint64_t(0) - 1};  // ids use all 64 bits
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
  r.updated_unix_ns = 6000 + attempts;
  return r;
}

inline std::vector<DeliveryAuditRecord> audit_rows(notify::DeliveryAuditStore& store, const std::string& receiver,
                                                   int limit = 1000) {
  DeliveryQuery q;
  q.receiver = receiver;
  q.limit = limit;
  auto rows = store.deliveries(q);
  EXPECT_TRUE(rows.is_ok()) << rows.status().to_string();
  return rows.is_ok() ? rows.value() : std::vector<DeliveryAuditRecord>{};
}

// Upserts out of order and twice: rows never go back; a delivery keeps the last failure's message.
inline void check_rows_never_go_backwards(const notify::DeliveryAuditOpener& open, const std::string& uid,
                                          const std::string& receiver) {
  {
    auto opened = open();
    ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
    notify::DeliveryAuditStore& store = *opened.value();
    for (const auto& r : {audit_row(uid, receiver, 1, "pending", 0), audit_row(uid, receiver, 1, "pending", 2, "http 503"),
                          audit_row(uid, receiver, 1, "delivered", 3),
                          audit_row(uid, receiver, 1, "pending", 0),  // late "pending": ignored
                          audit_row(uid, receiver, 2, "delivered", 1),  // outcome before "pending"
                          audit_row(uid, receiver, 2, "pending", 0), audit_row(uid, receiver, 3, "failed", 5, "http 404"),
                          audit_row(uid, receiver, 4, "pending", 1, "timeout \xff\xfe bytes")}) {
      ASSERT_TRUE(store.write(r).is_ok());
    }
    ASSERT_TRUE(store.commit().is_ok());
    auto all = audit_rows(store, receiver);
    ASSERT_EQ(all.size(), 4u);
    std::map<int64_t, DeliveryAuditRecord> by_id;
    for (auto& r : all) by_id[r.notification_id] = r;
    EXPECT_EQ(by_id[1].state, "delivered");
    EXPECT_EQ(by_id[1].attempts, 3);
    EXPECT_EQ(by_id[1].last_error, "http 503");
    EXPECT_EQ(by_id[1].alert_latency_ns, 4100);
    EXPECT_EQ(by_id[1].latency_ns, 5000 - 1001);
    EXPECT_EQ(by_id[1].delivered_unix_ns, 5000);
    EXPECT_EQ(by_id[1].enqueued_unix_ns, 1001);
    EXPECT_EQ(by_id[1].updated_unix_ns, 6003);
    EXPECT_EQ(by_id[1].alert_ids, (std::vector<uint64_t>{7, 8, ~uint64_t(0) - 1}));
    EXPECT_EQ(by_id[1].group_key, "root{symbol=\"600519.SH\"}");
    EXPECT_EQ(by_id[1].status, "firing");
    EXPECT_EQ(by_id[2].state, "delivered");
    EXPECT_EQ(by_id[3].state, "failed");
    EXPECT_EQ(by_id[3].last_error, "http 404");
    EXPECT_EQ(by_id[4].latency_ns, -1);
    EXPECT_EQ(by_id[4].delivered_unix_ns, 0);
    EXPECT_EQ(by_id[4].last_error.substr(0, 8), "timeout ");  // invalid UTF-8 kept or replaced, never refused
    EXPECT_EQ(all.front().notification_id, 4);  // newest first
    DeliveryQuery failed;
    failed.receiver = receiver;
    failed.state = "failed";
    EXPECT_EQ(store.deliveries(failed).value().size(), 1u);
    DeliveryQuery one;
    one.receiver = receiver;
    one.limit = 1;
    EXPECT_EQ(store.deliveries(one).value().size(), 1u);
    EXPECT_TRUE(audit_rows(store, receiver + "-nobody").empty());
    EXPECT_EQ(store.resume_id(uid).value(), 4);                // the lowest pending
    EXPECT_EQ(store.resume_id(uid + "-unseen").value(), 1);    // an outbox it has not seen
  }
  // Opening again keeps the table (the schema is idempotent).
  auto again = open();
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(audit_rows(*again.value(), receiver).size(), 4u);
}

inline std::string hook_toml(const std::string& dir, int port, const std::string& receiver = "hook") {
  return "[notify]\noutbox_db = \"" + dir + "/outbox.db\"\ndrain_ms = 0\n"
         "[[notify.receivers]]\nname = \"" + receiver + "\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:" +
         std::to_string(port) + "/generic\"\nrate_per_s = 1000\nburst = 1000\ntimeout_ms = 2000\n"
         "[notify.route]\nreceiver = \"" + receiver + "\"\ngroup_by = [\"symbol\"]\ngroup_wait_ms = 0\n"
         "[notify.retry]\ninitial_backoff_ms = 20\nmax_backoff_ms = 100\n";
}

// A receiver down, then up: `cfg` (its audit store set, its receiver `receiver` at `port`,
// nothing listening yet) shows every notification pending with attempts and the error while
// down, then delivered with its attempts and latencies, agreeing with the outbox and the metrics.
inline void check_outage_and_recovery(notify::NotifyConfig cfg, const notify::DeliveryAuditOpener& open,
                                      const std::filesystem::path& dir, int port, const std::string& receiver) {
  Metrics metrics;
  SymbolTable symbols;
  auto n = notify::Notifier::create(cfg, symbols, &metrics);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  n.value()->start();
  const int kAlerts = 6;
  for (int i = 0; i < kAlerts; ++i) {
    ASSERT_TRUE(n.value()->submit(notify_alert(symbols, "60051" + std::to_string(i) + ".SH", AlertType::kRapidRise,
                                               uint64_t(100 + i))));
  }
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().failed_attempts >= 2 * kAlerts; }));
  {
    // While the receiver is down the audit store shows them pending, with attempts and the error.
    auto mid = open();
    ASSERT_TRUE(mid.is_ok()) << mid.status().to_string();
    ASSERT_TRUE(wait_for([&] {
      auto rows = audit_rows(*mid.value(), receiver);
      return rows.size() == size_t(kAlerts) &&
             std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.state == "pending" && r.attempts >= 1; });
    }));
    const auto rows = audit_rows(*mid.value(), receiver);
    EXPECT_NE(rows[0].last_error.find("http://127.0.0.1:" + std::to_string(port)), std::string::npos) << rows[0].last_error;
  }
  PeerProcess peer("webhook_peer.py", dir, "web", {"--port", std::to_string(port)});
  ASSERT_TRUE(wait_for([&] { return n.value()->outbox().counts().value().pending == 0; }));
  n.value()->stop();
  EXPECT_EQ(n.value()->stats().audit_errors, 0u);
  EXPECT_EQ(n.value()->stats().audit_dropped, 0u);

  auto store = open();
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  const auto rows = audit_rows(*store.value(), receiver);
  ASSERT_EQ(rows.size(), size_t(kAlerts));
  std::set<uint64_t> ids;
  for (const auto& r : rows) {
    EXPECT_EQ(r.state, "delivered");
    EXPECT_EQ(r.receiver, receiver);
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
  ASSERT_EQ(outbox_rows.size(), size_t(kAlerts));
  for (const auto& o : outbox_rows) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.notification_id == o.id; });
    ASSERT_NE(it, rows.end()) << "outbox row " << o.id << " (" << o.receiver << ") not in the audit store";
    EXPECT_EQ(it->attempts, o.attempts);
    EXPECT_EQ(it->alert_latency_ns, o.latency_ns);
  }
  const std::string r = "{receiver=\"" + receiver + "\"";
  const std::string text = metrics.serialize();
  EXPECT_NE(text.find("ticksentry_notify_delivery_latency_seconds_count" + r + "} 6"), std::string::npos) << text;
  EXPECT_NE(text.find("ticksentry_notify_deliveries_total" + r + ",state=\"delivered\"} 6"), std::string::npos);
  EXPECT_NE(text.find("ticksentry_notify_deliveries_total" + r + ",state=\"failed\"} 0"), std::string::npos);
  EXPECT_NE(text.find("ticksentry_notify_delivery_attempts_total" + r + ",result=\"ok\"} 6"), std::string::npos);
  EXPECT_EQ(text.find("ticksentry_notify_delivery_attempts_total" + r + ",result=\"error\"} 0"), std::string::npos);
  // Every delivery waited out the outage (>= 20 ms): none in the 1 ms and 2 ms buckets.
  EXPECT_NE(text.find("ticksentry_notify_delivery_latency_seconds_bucket" + r + ",le=\"0.002\"} 0"), std::string::npos);
}

}  // namespace ts::testing
