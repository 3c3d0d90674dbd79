#pragma once
// The notifier's delivery record in the audit store (table notify_deliveries, audit_store.h):
// each notification's receiver, alert ids, attempts, state (pending / delivered / failed),
// first-enqueue → delivered and alert → delivered latency, and last error. The store is the
// audit backend the alerts go to (delivery_audit_store.h): the SQLite audit file, or with
// [sinks] audit_backend = "postgres" the PostgreSQL database — same table, same rows.
//
// record() only queues (a mutex and a vector push): the router and the delivery threads never
// wait for the store here. A writer thread of its own commits the queue every 100 ms in one
// transaction, on a connection of its own (SQLite WAL: the alert writer's connection is not
// blocked). The outbox stays the source of truth: open() first brings the table up to date with
// the outbox from the store's resume_id() on, so what a crash kept from the queue is recorded by
// the next start.
//
// When the store fails: a batch the store refuses while connected (a bad row, a full disk) is
// dropped, logged and counted (dropped(); the next start re-records it from the outbox). When
// the connection to PostgreSQL is lost (server down, restarted, network), deliveries go on
// untouched; the writer keeps the batch and everything queued after it, up to max_queued records
// (older rows first), counts each record beyond that as dropped, and reconnects with backoff
// (200 ms doubling to 5 s). Once connected again it writes what it held and, if it dropped any,
// catches the table up from the outbox — so after an outage of any length the table again
// matches the outbox. Every failed write or connect counts in errors() and is logged (the
// first of an outage, then at most every 30 s). stop() makes one last attempt; what it cannot
// write is counted dropped and recorded by the next start's catch-up.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "audit/audit_store.h"
#include "notify/delivery_audit_store.h"
#include "notify/notification.h"
#include "notify/outbox.h"

namespace ts::notify {

struct DeliveryAuditOptions {
  size_t max_queued = 100'000;  // records held while the store is unreachable (~300 B each)
  int64_t flush_ms = 100;       // writer period
  int64_t reconnect_min_ms = 200;
  int64_t reconnect_max_ms = 5'000;
};

class DeliveryAudit {
 public:
  // Opens the store with `opener` (an unreachable store is an error at start, as for the alerts)
  // and catches it up with `outbox`, which must outlive the audit.
  static Result<std::unique_ptr<DeliveryAudit>> open(DeliveryAuditOpener opener, Outbox& outbox,
                                                     DeliveryAuditOptions options = {});
  ~DeliveryAudit();  // stop()
  DeliveryAudit(const DeliveryAudit&) = delete;
  DeliveryAudit& operator=(const DeliveryAudit&) = delete;

  void start();
  // Any thread; never blocks on the store.
  void record(DeliveryAuditRecord r);
  // Writes what is queued (one last attempt) and ends the writer; idempotent.
  void stop();
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }    // failed writes and connects
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }  // records not written (see above)
  bool connected() const { return connected_.load(std::memory_order_relaxed); }
  const std::string& outbox_uid() const { return uid_; }

 private:
  DeliveryAudit(DeliveryAuditOpener opener, Outbox& outbox, DeliveryAuditOptions options)
      : opener_(std::move(opener)), outbox_(outbox), options_(options), uid_(outbox.uid()) {}
  void write_queued(bool last);  // writer thread (or stop() once it has ended)
  bool reconnect(bool last);
  Status catch_up();
  void drop(size_t n, const std::string& why);
  size_t queued();
  void lost(const Status& st, size_t held);

  DeliveryAuditOpener opener_;
  Outbox& outbox_;
  DeliveryAuditOptions options_;
  std::string uid_;
  std::unique_ptr<DeliveryAuditStore> store_;  // writer thread; null while disconnected
  int64_t next_connect_ns_ = 0, backoff_ms_ = 0, next_log_ns_ = 0;  // writer thread
  uint64_t failed_connects_ = 0;                                    // writer thread, this outage
  uint64_t logged_dropped_ = 0;                                     // writer thread
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<DeliveryAuditRecord> queue_;  // at most options_.max_queued
  bool stopping_ = false;
  bool catch_up_ = false;  // records were dropped: catch up from the outbox once writing works
  std::thread writer_;
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> errors_{0}, dropped_{0};
};

// The record of notification `id` of outbox `uid` in `state` ("pending", "delivered", "failed").
DeliveryAuditRecord delivery_audit_record(const std::string& uid, int64_t id, const Notification& n, const std::string& state);

}  // namespace ts::notify
