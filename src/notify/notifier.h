#pragma once
// The notifier: alerts in, notifications delivered, none lost.
//
//   sink thread ──submit()──► SpscRing<Alert> ──► router thread ──► Outbox (SQLite) ──► DeliveryWorker
//                  (full: spilled to the outbox)   silences, inhibition,             one thread per receiver
//                                                  routes, time windows, groups      (retry, rate limit)
//
// submit() never blocks on the network or on grouping: it copies the alert into a bounded ring
// and wakes the router; when the ring is full it writes the alert to the outbox's spill table
// (a SQLite insert on the sink thread, the dispatcher's slow thread — never a shard thread) and
// counts it. The router turns alerts into labels (alert_labels), drops silenced and inhibited
// ones (counted), routes the rest, groups them, and commits due notifications to the outbox
// before waking the receivers' delivery threads. Delivery: delivery.h.
//
// stop(): submit() refuses from then on; queued and spilled alerts are routed; every group with
// unsent alerts commits its notification at once (grouping timers are cut short); the delivery
// threads keep delivering for up to drain_ms; whatever is still pending stays in the outbox and
// is delivered by the next start (at-least-once).
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "core/spsc_ring.h"
#include "notify/delivery.h"
#include "notify/delivery_audit.h"
#include "notify/grouper.h"
#include "notify/inhibitor.h"
#include "notify/notify_config.h"
#include "notify/outbox.h"
#include "notify/silence_store.h"

namespace ts::notify {

struct NotifierStats {
  uint64_t alerts = 0;          // submitted
  uint64_t spilled = 0;         // of those, spilled to the outbox (queue full)
  uint64_t refused = 0;         // submitted after stop()
  uint64_t silenced = 0;
  uint64_t inhibited = 0;
  uint64_t muted_by_time = 0;   // route matches skipped by a time window
  uint64_t resolved = 0;        // alerts ended by a later alert
  uint64_t notifications = 0;   // committed to the outbox
  uint64_t outbox_errors = 0;   // router-side SQLite failures (logged)
  uint64_t delivered = 0;       // all receivers
  uint64_t failed_attempts = 0;
  uint64_t dead = 0;
  uint64_t audit_errors = 0;    // delivery audit: failed writes and connects (logged)
  uint64_t audit_dropped = 0;   // delivery audit: records not written (the outbox keeps them; delivery_audit.h)
};

class Notifier {
 public:
  // Opens the outbox (cfg.outbox_db), the delivery audit (cfg.audit_postgres_dsn or
  // cfg.audit_db, when set) and makes the receivers. Silences: `silences` (the run's one store,
  // app/silence_config.h), or without it a store of its own in cfg.outbox_db. `symbols`,
  // `metrics` (may be null: no delivery histogram and counters) and `silences` must outlive the
  // notifier.
  static Result<std::unique_ptr<Notifier>> create(NotifyConfig cfg, const SymbolTable& symbols, Metrics* metrics = nullptr,
                                                  SilenceStore* silences = nullptr);
  ~Notifier();  // stop()
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Starts the router and the delivery threads; pending outbox rows from an earlier run are
  // delivered from now on (how many there were: pending_at_start(), counted before the threads
  // start, and logged in plain words).
  void start();
  int64_t pending_at_start() const { return pending_at_start_; }
  // One producer thread at a time (the dispatcher's sink thread). Never waits for the router.
  // Returns false after stop() has begun (the alert was not taken; counted as refused).
  bool submit(const Alert& a);
  void stop();  // idempotent

  SilenceStore& silences() { return *silences_; }
  Outbox& outbox() { return *outbox_; }
  NotifierStats stats() const;
  // Alert → delivered latency of every delivery so far, all receivers (ns).
  LatencyHistogram delivery_latency() const;
  // Adds counts since the last call: ticksentry_notify_{alerts,spilled,silenced,inhibited,
  // notifications,audit_errors,audit_dropped}_total, and sets the gauges ticksentry_notify_delivery_latency_p99_us{receiver}.
  // (Per-delivery series, updated as each attempt ends when create() was given metrics:
  // ticksentry_notify_delivery_latency_seconds{receiver} histogram, ticksentry_notify_
  // deliveries_total{receiver,state=delivered|failed}, ticksentry_notify_delivery_attempts_total
  // {receiver,result=ok|error}.) One thread at a time.
  void publish_metrics(Metrics& m);

 private:
  Notifier(NotifyConfig cfg, const SymbolTable& symbols) : cfg_(std::move(cfg)), symbols_(symbols), ring_(size_t(cfg_.queue_capacity)) {}
  void run();
  void process(const NotifyAlert& a, int64_t now_ns);
  void commit(std::vector<Notification>& batch);

  NotifyConfig cfg_;
  const SymbolTable& symbols_;
  std::unique_ptr<Outbox> outbox_;
  std::unique_ptr<DeliveryAudit> audit_;  // null without an audit store; outlives the workers
  std::unique_ptr<SilenceStore> own_silences_;
  SilenceStore* silences_ = nullptr;
  std::map<std::string, std::unique_ptr<DeliveryWorker>> workers_;
  SpscRing<Alert> ring_;
  std::unique_ptr<Inhibitor> inhibitor_;
  Grouper grouper_;  // router thread only
  std::vector<int64_t> enqueued_ids_;  // router thread only (commit's outbox ids)

  std::mutex mu_;               // guards kick_; the router and the checkpointer wait on it
  std::condition_variable cv_;
  bool kick_ = false;
  std::atomic<bool> accepting_{true};
  std::atomic<bool> stopping_{false};
  bool started_ = false, stopped_ = false;
  int64_t pending_at_start_ = 0;  // outbox rows pending when start() ran (an earlier run's)
  std::thread router_;
  std::condition_variable cv_checkpoint_;
  std::thread checkpointer_;  // Outbox::checkpoint() once a second

  std::atomic<uint64_t> alerts_{0}, spilled_{0}, refused_{0}, spilled_pending_{0};
  std::atomic<uint64_t> silenced_{0}, inhibited_{0}, muted_{0}, resolved_{0}, notifications_{0}, outbox_errors_{0};
  std::map<std::string, uint64_t> exported_;  // publish_metrics' caller only
};

}  // namespace ts::notify
