#include "notify/delivery_audit.h"

#include <chrono>

#include "core/log.h"

namespace ts::notify {

DeliveryAuditRecord delivery_audit_record(const std::string& uid, int64_t id, const Notification& n, const std::string& state) {
  DeliveryAuditRecord r;
  r.outbox_uid = uid;
  r.notification_id = id;
  r.receiver = n.receiver;
  r.group_key = n.group_key;
  r.status = n.status();
  r.alert_ids.reserve(n.alerts.size());
  for (const auto& a : n.alerts) r.alert_ids.push_back(a.alert_id);
  r.state = state;
  r.alert_unix_ns = n.first_alert_unix_ns();
  return r;
}

Result<std::unique_ptr<DeliveryAudit>> DeliveryAudit::open(const std::string& audit_db, Outbox& outbox) {
  auto store = AuditStore::open(audit_db);
  if (!store.is_ok()) return store.status().with_context("notify delivery audit");
  std::unique_ptr<DeliveryAudit> a(new DeliveryAudit(std::move(store).value(), outbox.uid()));
  auto from = a->store_->delivery_resume_id(a->uid_);
  if (!from.is_ok()) return from.status().with_context("notify delivery audit " + audit_db);
  auto rows = outbox.audit_records(from.value());
  if (!rows.is_ok()) return rows.status().with_context("notify delivery audit: reading the outbox");
  for (const auto& r : rows.value()) {
    TS_RETURN_IF_ERROR(a->store_->write_delivery(r).with_context("notify delivery audit " + audit_db));
  }
  TS_RETURN_IF_ERROR(a->store_->flush().with_context("notify delivery audit " + audit_db));
  if (!rows.value().empty()) {
    spdlog::info("notify: delivery audit caught up with {} outbox rows from id {}", rows.value().size(), from.value());
  }
  return a;
}

DeliveryAudit::~DeliveryAudit() { stop(); }

void DeliveryAudit::start() {
  writer_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; });
      lock.unlock();
      write_queued();
      lock.lock();
    }
  });
}

void DeliveryAudit::record(DeliveryAuditRecord r) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(r));
}

void DeliveryAudit::write_queued() {
  std::vector<DeliveryAuditRecord> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(queue_);
  }
  if (batch.empty()) return;
  Status st = Status::ok();
  for (const auto& r : batch) {
    st = store_->write_delivery(r);
    if (!st.is_ok()) break;
  }
  if (st.is_ok()) st = store_->flush();
  if (!st.is_ok()) {
    // The outbox still has every row: the next start's catch-up records them.
    errors_.fetch_add(1, std::memory_order_relaxed);
    (void)store_->flush();
    spdlog::error("notify: delivery audit: {} records not written: {}", batch.size(), st.to_string());
  }
}

void DeliveryAudit::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !writer_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  write_queued();
  (void)store_->close();
}

}  // namespace ts::notify
