#include "notify/notifier.h"

#include <algorithm>
#include <set>

#include "core/clock.h"
#include "core/log.h"

namespace ts::notify {

Result<std::unique_ptr<Notifier>> Notifier::create(NotifyConfig cfg, const SymbolTable& symbols, Metrics* metrics,
                                                   SilenceStore* silences) {
  std::unique_ptr<Notifier> n(new Notifier(std::move(cfg), symbols));
  auto ob = Outbox::open(n->cfg_.outbox_db, n->cfg_.outbox_sync_full);
  if (!ob.is_ok()) return ob.status();
  n->outbox_ = std::move(ob).value();
  if (silences) {
    n->silences_ = silences;
  } else {
    auto ss = SilenceStore::open(n->cfg_.outbox_db);
    if (!ss.is_ok()) return ss.status();
    n->own_silences_ = std::move(ss).value();
    n->silences_ = n->own_silences_.get();
  }
  if (!n->cfg_.audit_postgres_dsn.empty() || !n->cfg_.audit_db.empty()) {
    auto audit = DeliveryAudit::open(n->cfg_.audit_postgres_dsn.empty() ? sqlite_delivery_audit(n->cfg_.audit_db)
                                                                       : postgres_delivery_audit(n->cfg_.audit_postgres_dsn),
                                     *n->outbox_);
    if (!audit.is_ok()) return audit.status();
    n->audit_ = std::move(audit).value();
  }
  for (const ReceiverConfig& rc : n->cfg_.receivers) {
    const DeliveryMetrics dm = metrics ? DeliveryMetrics::registered(*metrics, rc.name) : DeliveryMetrics{};
    n->workers_.emplace(rc.name, std::make_unique<DeliveryWorker>(rc, make_receiver(rc), *n->outbox_, n->audit_.get(), dm));
  }
  n->inhibitor_ = std::make_unique<Inhibitor>(n->cfg_.inhibit_rules);
  return n;
}

Notifier::~Notifier() { stop(); }

void Notifier::start() {
  if (started_) return;
  started_ = true;
  // Resumption, said in plain words: notifications an earlier run left undelivered go out now.
  if (auto c = outbox_->counts(); c.is_ok() && c.value().pending > 0) {
    pending_at_start_ = c.value().pending;
    spdlog::warn("notify: {} notification{} pending from an earlier run in {}; delivering {} now", pending_at_start_,
                 pending_at_start_ == 1 ? "" : "s", cfg_.outbox_db, pending_at_start_ == 1 ? "it" : "them");
  }
  if (audit_) audit_->start();
  for (auto& [name, w] : workers_) w->start();
  router_ = std::thread([this] { run(); });
  // The outbox's checkpoints (fsyncs) run here, never inside the router's or a delivery
  // thread's commit: see Outbox::checkpoint.
  checkpointer_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_.load(std::memory_order_acquire)) {
      cv_checkpoint_.wait_for(lock, std::chrono::seconds(1));
      lock.unlock();
      if (Status st = outbox_->checkpoint(); !st.is_ok()) spdlog::warn("notify: {}", st.to_string());
      lock.lock();
    }
  });
}

bool Notifier::submit(const Alert& a) {
  if (!accepting_.load(std::memory_order_acquire)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  alerts_.fetch_add(1, std::memory_order_relaxed);
  if (!ring_.try_push(a)) {
    // Queue full: the alert goes to SQLite instead of being dropped or making the caller wait.
    Status st = outbox_->spill(make_notify_alert(a, symbols_, mono_ns(), wall_ns()));
    if (!st.is_ok()) {
      outbox_errors_.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("notify: spilling an alert: {}", st.to_string());
    } else {
      spilled_.fetch_add(1, std::memory_order_relaxed);
      spilled_pending_.fetch_add(1, std::memory_order_release);
    }
  }
  {
    std::lock_guard lock(mu_);
    kick_ = true;
  }
  cv_.notify_one();
  return true;
}

void Notifier::stop() {
  if (stopped_) return;
  stopped_ = true;
  accepting_.store(false, std::memory_order_release);
  if (started_) {
    stopping_.store(true, std::memory_order_release);
    {
      std::lock_guard lock(mu_);
      kick_ = true;
    }
    cv_.notify_one();
    cv_checkpoint_.notify_one();
    router_.join();
    checkpointer_.join();
  }
  for (auto& [name, w] : workers_) w->stop(started_ ? cfg_.drain_ms : 0);
  if (audit_) audit_->stop();  // after the workers: their last records are written
  const NotifierStats s = stats();
  spdlog::info("notify: {} alerts ({} silenced, {} inhibited), {} notifications, {} delivered, {} failed attempts, {} dead",
               s.alerts, s.silenced, s.inhibited, s.notifications, s.delivered, s.failed_attempts, s.dead);
  if (s.audit_errors > 0 || s.audit_dropped > 0) {
    spdlog::warn("notify: delivery audit: {} failed writes or connects; {} records dropped (the outbox keeps them; "
                 "a catch-up records them)", s.audit_errors, s.audit_dropped);
  }
}

void Notifier::process(const NotifyAlert& a, int64_t now_ns) {
  if (auto ended = ends_type(a.type)) {
    const int n = grouper_.resolve(*ended, a.labels.get("symbol"), now_ns, wall_ns());
    inhibitor_->resolve(*ended, a.labels.get("symbol"));
    resolved_.fetch_add(uint64_t(n), std::memory_order_relaxed);
  }
  inhibitor_->observe(a, now_ns);
  if (silences_->silenced_by(a.labels, wall_ns())) {
    silenced_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (inhibitor_->inhibited(a, now_ns)) {
    inhibited_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const int64_t t = cfg_.time_by_exchange ? a.window_time_ns() : wall_ns();
  for (const Route* r : cfg_.route.match(a.labels)) {
    if (!r->active_at(t)) {
      muted_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    grouper_.add(*r, a, now_ns);
  }
}

void Notifier::commit(std::vector<Notification>& batch) {
  if (batch.empty()) return;
  const int64_t now = wall_ns();
  Status st = outbox_->enqueue(batch, now, audit_ ? &enqueued_ids_ : nullptr);
  if (!st.is_ok()) {
    // Nothing else can hold them: log loudly and count (a full disk is an operator's problem).
    outbox_errors_.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("notify: {} notifications could not be written to the outbox: {}", batch.size(), st.to_string());
    batch.clear();
    return;
  }
  notifications_.fetch_add(batch.size(), std::memory_order_relaxed);
  if (audit_) {
    // Queued before the workers are woken, so a notification's "pending" record is always
    // queued ahead of its outcome (DeliveryAudit::open relies on that order after a crash).
    for (size_t i = 0; i < batch.size() && i < enqueued_ids_.size(); ++i) {
      DeliveryAuditRecord r = delivery_audit_record(audit_->outbox_uid(), enqueued_ids_[i], batch[i], "pending");
      r.enqueued_unix_ns = now;
      r.updated_unix_ns = now;
      audit_->record(std::move(r));
    }
  }
  std::set<std::string> names;
  for (const auto& n : batch) names.insert(n.receiver);
  for (const auto& name : names) {
    if (auto it = workers_.find(name); it != workers_.end()) it->second->wake();
  }
  batch.clear();
}

void Notifier::run() {
  std::vector<Notification> batch;
  for (;;) {
    const bool stopping = stopping_.load(std::memory_order_acquire);
    int taken = 0;
    Alert a;
    while (taken < 4096 && ring_.try_pop(a)) {
      process(make_notify_alert(a, symbols_, mono_ns(), wall_ns()), mono_ns());
      ++taken;
    }
    if (taken == 0 && spilled_pending_.load(std::memory_order_acquire) > 0) {
      auto sp = outbox_->take_spilled(512);
      if (sp.is_ok()) {
        spilled_pending_.fetch_sub(std::min<uint64_t>(sp.value().size(), spilled_pending_.load()), std::memory_order_acq_rel);
        for (const auto& s : sp.value()) process(s, mono_ns());
        if (sp.value().empty()) spilled_pending_.store(0, std::memory_order_release);
        taken += int(sp.value().size());
      } else {
        outbox_errors_.fetch_add(1, std::memory_order_relaxed);
        spdlog::error("notify: reading spilled alerts: {}", sp.status().to_string());
      }
    }
    grouper_.flush_due(mono_ns(), wall_ns(), batch);
    commit(batch);
    if (taken > 0) continue;
    if (stopping) {
      grouper_.flush_all(wall_ns(), batch);
      commit(batch);
      return;
    }
    std::unique_lock lock(mu_);
    const int64_t until = std::min(grouper_.next_due_ns(), mono_ns() + 100 * kNsPerMs);
    cv_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(0, until - mono_ns())), [&] { return kick_; });
    kick_ = false;
  }
}

NotifierStats Notifier::stats() const {
  NotifierStats s;
  s.alerts = alerts_.load();
  s.spilled = spilled_.load();
  s.refused = refused_.load();
  s.silenced = silenced_.load();
  s.inhibited = inhibited_.load();
  s.muted_by_time = muted_.load();
  s.resolved = resolved_.load();
  s.notifications = notifications_.load();
  s.outbox_errors = outbox_errors_.load();
  if (audit_) {
    s.audit_errors = audit_->errors();
    s.audit_dropped = audit_->dropped();
  }
  for (const auto& [name, w] : workers_) {
    s.delivered += w->stats().delivered.load();
    s.failed_attempts += w->stats().failed_attempts.load();
    s.dead += w->stats().dead.load();
    s.outbox_errors += w->stats().outbox_errors.load();
  }
  return s;
}

LatencyHistogram Notifier::delivery_latency() const {
  LatencyHistogram h;
  for (const auto& [name, w] : workers_) {
    std::lock_guard lock(w->stats().latency_mu);
    h.merge(w->stats().latency);
  }
  return h;
}

void Notifier::publish_metrics(Metrics& m) {
  auto add = [&](const std::string& key, prometheus::Counter& c, uint64_t now) {
    uint64_t& prev = exported_[key];
    if (now > prev) c.Increment(double(now - prev));
    prev = now;
  };
  const NotifierStats s = stats();
  add("alerts", m.counter("notify_alerts_total", "Alerts handed to the notifier"), s.alerts);
  add("spilled", m.counter("notify_spilled_total", "Alerts spilled to the outbox (queue full)"), s.spilled);
  add("silenced", m.counter("notify_silenced_total", "Alerts muted by a silence"), s.silenced);
  add("inhibited", m.counter("notify_inhibited_total", "Alerts muted by an inhibition rule"), s.inhibited);
  add("notifications", m.counter("notify_notifications_total", "Notifications committed to the outbox"), s.notifications);
  if (audit_) {
    add("audit_errors", m.counter("notify_audit_errors_total", "Delivery audit writes and connects that failed"),
        s.audit_errors);
    add("audit_dropped", m.counter("notify_audit_dropped_total", "Delivery audit records not written (the outbox has them)"),
        s.audit_dropped);
  }
  for (const auto& [name, w] : workers_) {
    DeliveryStats& d = w->stats();
    std::lock_guard lock(d.latency_mu);
    m.gauge("notify_delivery_latency_p99_us", "Alert to delivered latency P99 (us)", {{"receiver", name}})
        .Set(double(d.latency.quantile_ns(0.99)) / 1e3);
  }
}

}  // namespace ts::notify
