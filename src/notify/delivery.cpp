#include "notify/delivery.h"

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "core/log.h"

namespace ts::notify {

int64_t retry_delay_ms(const RetryPolicy& p, int attempt, double u) {
  const double base = double(p.initial_backoff_ms) * std::pow(p.multiplier, std::max(0, attempt - 1));
  const double capped = std::min(base, double(p.max_backoff_ms));
  return std::max<int64_t>(1, int64_t(capped * (1.0 - p.jitter * u)));
}

int64_t TokenBucket::take(int64_t now_ns) {
  if (last_ns_ != 0) tokens_ = std::min(burst_, tokens_ + double(now_ns - last_ns_) * rate_per_ns_);
  last_ns_ = now_ns;
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return 0;
  }
  return std::max<int64_t>(1, int64_t((1.0 - tokens_) / rate_per_ns_));
}

DeliveryMetrics DeliveryMetrics::registered(Metrics& m, const std::string& name) {
  // 1 ms .. 1 h: a few ms to a loopback peer, group waits of 100 ms - 1 s, retries over an outage.
  static const std::vector<double> kBuckets = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1,
                                               2,     5,     10,    30,   60,   300,  900, 3600};
  DeliveryMetrics d;
  d.latency_s = &m.histogram("notify_delivery_latency_seconds", "Alert to delivered latency per receiver", kBuckets,
                             {{"receiver", name}});
  const char* help = "Notifications that reached a final state, by receiver and state (delivered, failed: given up)";
  d.delivered = &m.counter("notify_deliveries_total", help, {{"receiver", name}, {"state", "delivered"}});
  d.failed = &m.counter("notify_deliveries_total", help, {{"receiver", name}, {"state", "failed"}});
  const char* attempts = "Delivery attempts by receiver and result (error: retried or given up)";
  d.attempts_ok = &m.counter("notify_delivery_attempts_total", attempts, {{"receiver", name}, {"result", "ok"}});
  d.attempts_error = &m.counter("notify_delivery_attempts_total", attempts, {{"receiver", name}, {"result", "error"}});
  return d;
}

DeliveryWorker::DeliveryWorker(ReceiverConfig cfg, std::unique_ptr<Receiver> receiver, Outbox& outbox,
                               DeliveryAudit* audit, DeliveryMetrics metrics)
    : cfg_(std::move(cfg)),
      receiver_(std::move(receiver)),
      outbox_(outbox),
      audit_(audit),
      metrics_(metrics),
      bucket_(cfg_.rate_per_s, cfg_.burst),
      rng_(std::random_device{}()) {}

DeliveryWorker::~DeliveryWorker() { stop(0); }

void DeliveryWorker::start() {
  // spdlog's registry (a function-local static in the shared library) made before the worker
  // starts: several receivers' workers logging their first failure at once do not race on it.
  spdlog::default_logger_raw();
  thread_ = std::thread([this] { run(); });
}

void DeliveryWorker::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_one();
}

void DeliveryWorker::stop(int64_t drain_ms) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      stop_deadline_unix_ns_ = wall_ns() + drain_ms * kNsPerMs;
    }
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void DeliveryWorker::wait_until(int64_t unix_ns) {
  std::unique_lock lock(mu_);
  const int64_t wait_ns = std::clamp<int64_t>(unix_ns - wall_ns(), 0, 1'000 * kNsPerMs);
  cv_.wait_for(lock, std::chrono::nanoseconds(wait_ns), [&] { return woken_ || stopping_; });
  woken_ = false;
}

void DeliveryWorker::run() {
  for (;;) {
    bool stopping;
    int64_t deadline;
    {
      std::lock_guard lock(mu_);
      stopping = stopping_;
      deadline = stop_deadline_unix_ns_;
    }
    if (stopping && wall_ns() >= deadline) return;
    auto due = outbox_.due(cfg_.name, wall_ns(), 64);
    if (!due.is_ok()) {
      stats_.outbox_errors.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("notify {}: {}", cfg_.name, due.status().to_string());
      wait_until(wall_ns() + 1000 * kNsPerMs);
      continue;
    }
    for (const OutboxEntry& e : due.value()) {
      {
        std::lock_guard lock(mu_);
        if (stopping_ && wall_ns() >= stop_deadline_unix_ns_) return;
      }
      // Rate limit: wait for a token (a stop still lets the wait end at its deadline).
      for (int64_t w; (w = bucket_.take(mono_ns())) > 0;) {
        stats_.rate_limited.fetch_add(1, std::memory_order_relaxed);
        std::unique_lock lock(mu_);
        if (stopping_ && wall_ns() >= stop_deadline_unix_ns_) return;
        cv_.wait_for(lock, std::chrono::nanoseconds(w), [&] { return stopping_ && wall_ns() >= stop_deadline_unix_ns_; });
      }
      deliver(e);
    }
    if (!due.value().empty()) continue;
    if (stopping) return;  // nothing due now: what waits for a retry stays in the outbox
    auto next = outbox_.next_due_unix_ns(cfg_.name);
    wait_until(next.is_ok() ? next.value() : wall_ns() + 1000 * kNsPerMs);
  }
}

void DeliveryWorker::deliver(const OutboxEntry& e) {
  const int attempt = e.attempts + 1;
  auto n = notification_from_json(e.payload);
  Status st = n.is_ok() ? receiver_->send(n.value()) : n.status();
  const int64_t now = wall_ns();
  Status rec;
  const char* state = "pending";
  int64_t latency = -1;
  if (st.is_ok()) {
    state = "delivered";
    latency = now - e.alert_unix_ns;
    rec = outbox_.mark_delivered(e.id, attempt, now, latency);
    stats_.delivered.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(stats_.latency_mu);
      stats_.latency.record(latency);
    }
    if (metrics_.latency_s) metrics_.latency_s->Observe(double(latency) / 1e9);
    if (metrics_.delivered) metrics_.delivered->Increment();
    if (metrics_.attempts_ok) metrics_.attempts_ok->Increment();
  } else {
    stats_.failed_attempts.fetch_add(1, std::memory_order_relaxed);
    if (metrics_.attempts_error) metrics_.attempts_error->Increment();
    const bool permanent = st.code() != StatusCode::kIoError;
    if (permanent || cfg_.retry.gives_up(attempt, (now - e.created_unix_ns) / kNsPerMs)) {
      state = "failed";
      stats_.dead.fetch_add(1, std::memory_order_relaxed);
      if (metrics_.failed) metrics_.failed->Increment();
      spdlog::error("notify {}: giving up on notification {} after {} attempts: {}", cfg_.name, e.id, attempt,
                    st.to_string());
      rec = outbox_.mark_dead(e.id, attempt, st.to_string());
    } else {
      const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
      const int64_t delay_ms = retry_delay_ms(cfg_.retry, attempt, u);
      if (attempt == 1 || attempt % 10 == 0) {
        spdlog::warn("notify {}: attempt {} of notification {} failed ({}); retrying in {} ms", cfg_.name, attempt,
                     e.id, st.to_string(), delay_ms);
      }
      rec = outbox_.mark_retry(e.id, attempt, now + delay_ms * kNsPerMs, st.to_string());
    }
  }
  if (!rec.is_ok()) {
    stats_.outbox_errors.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("notify {}: recording notification {}: {}", cfg_.name, e.id, rec.to_string());
  }
  if (audit_) {
    DeliveryAuditRecord r;
    if (n.is_ok()) {
      r = delivery_audit_record(audit_->outbox_uid(), e.id, n.value(), state);
    } else {
      r.outbox_uid = audit_->outbox_uid();
      r.notification_id = e.id;
      r.receiver = e.receiver;
      r.state = state;
    }
    r.attempts = attempt;
    r.enqueued_unix_ns = e.created_unix_ns;
    r.alert_unix_ns = e.alert_unix_ns;
    if (st.is_ok()) {
      r.delivered_unix_ns = now;
      r.latency_ns = now - e.created_unix_ns;
      r.alert_latency_ns = latency;
    } else {
      r.last_error = st.to_string();
    }
    r.updated_unix_ns = now;
    audit_->record(std::move(r));
  }
}

}  // namespace ts::notify
