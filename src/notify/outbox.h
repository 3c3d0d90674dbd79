#pragma once
// The durable outbox (SQLite, WAL): every notification is committed here before any attempt to
// send it, and stays until it is delivered or given up (dead). A restart resumes every pending
// row. Delivery is at-least-once: a notification sent but not yet marked delivered when the
// process dies is sent again after the restart.
//
// Table `notifications` (the delivery record, also what an operator audits):
//   id, receiver, group_key, status ("firing"/"resolved"), payload (Notification JSON),
//   state ("pending", "delivered", "dead"), attempts, next_attempt_unix_ns, created_unix_ns,
//   alert_unix_ns (the group's first alert), delivered_unix_ns, latency_ns (alert → delivered),
//   last_error.
// Table `spilled_alerts`: alerts the notifier's queue had no room for (routed later, in order).
// Table `outbox_meta`: `uid`, a random id made with the file, naming this outbox's rows in the
// audit store's notify_deliveries.
//
// Threading: every method may be called from any thread (one connection behind a mutex).
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit_store.h"
#include "notify/notification.h"
#include "core/sqlite_db.h"

namespace ts::notify {

struct OutboxEntry {
  int64_t id = 0;
  std::string receiver;
  std::string payload;           // Notification JSON
  int attempts = 0;
  int64_t created_unix_ns = 0;
  int64_t alert_unix_ns = 0;
};

struct DeliveryRecord {
  int64_t id = 0;
  std::string receiver;
  std::string group_key;
  std::string status;
  std::string state;
  int attempts = 0;
  int64_t latency_ns = -1;
  std::string last_error;
};

struct OutboxCounts {
  int64_t pending = 0;
  int64_t delivered = 0;
  int64_t dead = 0;
};

class Outbox {
 public:
  static Result<std::unique_ptr<Outbox>> open(const std::string& path, bool sync_full = false);

  // Commits every notification in one transaction; due at once. `ids` (may be null) receives
  // their row ids, in order.
  Status enqueue(const std::vector<Notification>& ns, int64_t now_unix_ns, std::vector<int64_t>* ids = nullptr);
  // Up to `limit` pending rows of `receiver` due at `now_unix_ns`, oldest first.
  Result<std::vector<OutboxEntry>> due(const std::string& receiver, int64_t now_unix_ns, int limit);
  // Earliest next attempt of a pending row of `receiver` (INT64_MAX when none).
  Result<int64_t> next_due_unix_ns(const std::string& receiver);
  Status mark_delivered(int64_t id, int attempts, int64_t now_unix_ns, int64_t latency_ns);
  Status mark_retry(int64_t id, int attempts, int64_t next_attempt_unix_ns, const std::string& error);
  Status mark_dead(int64_t id, int attempts, const std::string& error);

  Status spill(const NotifyAlert& a);
  // Removes and returns up to `limit` spilled alerts, oldest first.
  Result<std::vector<NotifyAlert>> take_spilled(int limit);

  // Moves the write-ahead log into the database (a PASSIVE checkpoint on a connection of its
  // own: never blocks enqueue or delivery). The notifier's checkpoint thread calls it once a
  // second; automatic checkpoints inside commits are off.
  Status checkpoint();

  // All receivers when `receiver` is empty.
  Result<OutboxCounts> counts(const std::string& receiver = "");
  Result<std::vector<DeliveryRecord>> records();  // oldest first
  // Rows with id >= `from_id` as the audit store records them ("dead" is "failed"), oldest first.
  Result<std::vector<DeliveryAuditRecord>> audit_records(int64_t from_id);
  const std::string& path() const { return db_->path(); }
  const std::string& uid() const { return uid_; }

 private:
  explicit Outbox(std::unique_ptr<SqlDb> db) : db_(std::move(db)) {}
  Status prepare();
  std::mutex mu_;
  std::unique_ptr<SqlDb> db_;
  std::unique_ptr<SqlDb> checkpoint_db_;  // checkpoint() only (its caller's thread)
  std::string uid_;
  std::optional<SqlStmt> insert_, due_, next_due_, delivered_, retry_, dead_, spill_;
};

}  // namespace ts::notify
