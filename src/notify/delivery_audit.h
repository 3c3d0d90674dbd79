#pragma once
// The notifier's delivery record in the audit store (table notify_deliveries, audit_store.h):
// each notification's receiver, alert ids, attempts, state (pending / delivered / failed),
// first-enqueue → delivered and alert → delivered latency, and last error.
//
// record() only queues (a mutex and a vector push): the router and the delivery threads never
// wait for SQLite here. A writer thread of its own commits the queue every 100 ms in one
// transaction, on a connection of its own to the audit file (WAL: the alert writer's connection
// is not blocked). The outbox stays the source of truth: open() first brings the table up to
// date with the outbox from delivery_resume_id() on, so what a crash kept from the queue is
// recorded by the next start.
//
// SQLite only: with [sinks] audit_backend = "postgres" there is no delivery audit (the outbox's
// notifications table keeps the record); the notifier logs that at start.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit_store.h"
#include "notify/notification.h"
#include "notify/outbox.h"

namespace ts::notify {

class DeliveryAudit {
 public:
  // Opens (creating) the audit database at `audit_db` and catches it up with `outbox`.
  static Result<std::unique_ptr<DeliveryAudit>> open(const std::string& audit_db, Outbox& outbox);
  ~DeliveryAudit();  // stop()
  DeliveryAudit(const DeliveryAudit&) = delete;
  DeliveryAudit& operator=(const DeliveryAudit&) = delete;

  void start();
  // Any thread; never blocks on SQLite.
  void record(DeliveryAuditRecord r);
  // Writes what is queued and ends the writer; idempotent.
  void stop();
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }
  const std::string& outbox_uid() const { return uid_; }

 private:
  DeliveryAudit(std::unique_ptr<AuditStore> store, std::string uid) : store_(std::move(store)), uid_(std::move(uid)) {}
  void write_queued();  // writer thread (or stop() once it has ended)

  std::unique_ptr<AuditStore> store_;
  std::string uid_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<DeliveryAuditRecord> queue_;
  bool stopping_ = false;
  std::thread writer_;
  std::atomic<uint64_t> errors_{0};
};

// The record of notification `id` of outbox `uid` in `state` ("pending", "delivered", "failed").
DeliveryAuditRecord delivery_audit_record(const std::string& uid, int64_t id, const Notification& n, const std::string& state);

}  // namespace ts::notify
