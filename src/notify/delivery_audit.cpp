#include "notify/delivery_audit.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <vector>

#include "core/clock.h"
#include "core/log.h"

namespace ts::notify {

namespace {
constexpr int64_t kLogEveryNs = 30 * kNsPerSec;  // at most one "still down" line per 30 s
}  // namespace

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

Result<std::unique_ptr<DeliveryAudit>> DeliveryAudit::open(DeliveryAuditOpener opener, Outbox& outbox,
                                                           DeliveryAuditOptions options) {
  std::unique_ptr<DeliveryAudit> a(new DeliveryAudit(std::move(opener), outbox, options));
  auto store = a->opener_();
  if (!store.is_ok()) return store.status().with_context("notify delivery audit");
  a->store_ = std::move(store).value();
  a->connected_.store(true, std::memory_order_relaxed);
  TS_RETURN_IF_ERROR(a->catch_up().with_context("notify delivery audit " + a->store_->describe()));
  return a;
}

DeliveryAudit::~DeliveryAudit() { stop(); }

void DeliveryAudit::start() {
  writer_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(options_.flush_ms), [&] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      write_queued(/*last=*/false);
      lock.lock();
    }
  });
}

void DeliveryAudit::record(DeliveryAuditRecord r) {
  std::lock_guard lock(mu_);
  if (queue_.size() >= options_.max_queued) {
    // The store is down or slower than the deliveries: never wait for it. The outbox has the row.
    dropped_.fetch_add(1, std::memory_order_relaxed);
    catch_up_ = true;
    return;
  }
  queue_.push_back(std::move(r));
}

Status DeliveryAudit::catch_up() {
  auto from = store_->resume_id(uid_);
  if (!from.is_ok()) return from.status();
  auto rows = outbox_.audit_records(from.value());
  if (!rows.is_ok()) return rows.status().with_context("reading the outbox");
  for (const auto& r : rows.value()) TS_RETURN_IF_ERROR(store_->write(r));
  TS_RETURN_IF_ERROR(store_->commit());
  if (!rows.value().empty()) {
    spdlog::info("notify: delivery audit caught up with {} outbox rows from id {}", rows.value().size(), from.value());
  }
  return Status::ok();
}

bool DeliveryAudit::reconnect(bool last) {
  const int64_t now = mono_ns();
  if (!last && now < next_connect_ns_) return false;
  auto store = opener_();
  if (!store.is_ok()) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    ++failed_connects_;
    backoff_ms_ = std::clamp(backoff_ms_ * 2, options_.reconnect_min_ms, options_.reconnect_max_ms);
    next_connect_ns_ = now + backoff_ms_ * kNsPerMs;
    if (now >= next_log_ns_) {
      spdlog::error("notify: delivery audit: reconnecting ({} attempts): {}; holding {} records, {} dropped so far",
                    failed_connects_, store.status().to_string(), queued(), dropped());
      next_log_ns_ = now + kLogEveryNs;
    }
    return false;
  }
  store_ = std::move(store).value();
  connected_.store(true, std::memory_order_relaxed);
  spdlog::info("notify: delivery audit: connected again to {} after {} failed attempts", store_->describe(),
               failed_connects_);
  failed_connects_ = 0;
  backoff_ms_ = 0;
  next_log_ns_ = 0;
  std::lock_guard lock(mu_);
  catch_up_ = true;  // whatever happened while down, the outbox knows
  return true;
}

size_t DeliveryAudit::queued() {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void DeliveryAudit::drop(size_t n, const std::string& why) {
  dropped_.fetch_add(n, std::memory_order_relaxed);
  logged_dropped_ += n;  // logged here, not again as "queue full"
  spdlog::error("notify: delivery audit: {} records not written: {}; the next start records them from the outbox", n,
                why);
}

void DeliveryAudit::lost(const Status& st, size_t held) {
  spdlog::error("notify: delivery audit: lost {}: {}; holding {} records (at most {}) and reconnecting",
                store_->describe(), st.to_string(), held, options_.max_queued);
  store_.reset();
  connected_.store(false, std::memory_order_relaxed);
  backoff_ms_ = options_.reconnect_min_ms;
  next_connect_ns_ = mono_ns() + backoff_ms_ * kNsPerMs;
  next_log_ns_ = mono_ns() + kLogEveryNs;
}

void DeliveryAudit::write_queued(bool last) {
  if (!store_ && !reconnect(last)) return;
  std::vector<DeliveryAuditRecord> batch;
  bool catch_up_now = false;
  {
    std::lock_guard lock(mu_);
    batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    std::swap(catch_up_now, catch_up_);
  }
  Status st = Status::ok();
  for (const auto& r : batch) {
    st = store_->write(r);
    if (!st.is_ok()) break;
  }
  if (st.is_ok() && !batch.empty()) st = store_->commit();
  if (!st.is_ok()) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    if (store_->connected()) {
      drop(batch.size(), st.to_string());  // refused rows: a retry would be refused again
    } else {
      // Keep the batch ahead of what came since (older rows first); beyond max_queued the newest go.
      size_t held = 0, over = 0;
      {
        std::lock_guard lock(mu_);
        queue_.insert(queue_.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
        if (queue_.size() > options_.max_queued) {
          over = queue_.size() - options_.max_queued;
          queue_.resize(options_.max_queued);
          dropped_.fetch_add(over, std::memory_order_relaxed);
        }
        catch_up_ = catch_up_ || catch_up_now || over > 0;
        held = queue_.size();
      }
      lost(st, held);
      return;
    }
  }
  if (!catch_up_now) return;
  if (const uint64_t d = dropped(); d > logged_dropped_) {
    spdlog::warn("notify: delivery audit: {} records dropped (more than {} waiting); catching up from the outbox",
                 d - logged_dropped_, options_.max_queued);
    logged_dropped_ = d;
  }
  if (Status c = catch_up(); !c.is_ok()) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    if (store_->connected()) {
      spdlog::error("notify: delivery audit: catching up from the outbox: {}; the next start tries again", c.to_string());
      return;
    }
    {
      std::lock_guard lock(mu_);
      catch_up_ = true;
    }
    lost(c, queued());
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
  write_queued(/*last=*/true);
  size_t left = 0;
  {
    std::lock_guard lock(mu_);
    left = queue_.size();
    queue_.clear();
  }
  if (left > 0) drop(left, "the audit store is unreachable at stop");
  store_.reset();
  connected_.store(false, std::memory_order_relaxed);
}

}  // namespace ts::notify
