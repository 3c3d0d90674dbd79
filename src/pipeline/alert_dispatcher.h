#pragma once
// Hands alerts from shard threads to the sinks, off the hot path.
//
//   shard 0 ──SpscRing<Alert>──┐
//   shard 1 ──SpscRing<Alert>──┼──► sink thread ──► every sink (stdout, JSONL, AuditStore, ...)
//   shard N ──SpscRing<Alert>──┘
//
// Full-ring policy: BLOCK. Alerts are never dropped: try_publish() spins, then yields, until
// its shard's ring has room (a full ring means the sinks are behind; the shard waits rather
// than lose an alert). Rings are sized so that this does not happen in normal operation.
//
// The sink thread drains every ring, writes each alert to every sink in the order they were
// added, counts alerts per type, and flushes all sinks (commits the SQLite batch) at least every
// flush_interval_ms or flush_max_alerts alerts. A failing sink is counted (sink_errors) and
// logged at most once per error_log_interval_ms; the other sinks still get the alert.
//
// stop() (SIGINT/SIGTERM shutdown): new publishes are refused (return false), publishes already
// in progress complete, everything queued is written, then all sinks are flushed and closed.
// No accepted alert is lost.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "core/spsc_ring.h"
#include "detect/alert_sink.h"

namespace ts {

struct DispatcherOptions {
  size_t ring_capacity = 4096;          // alerts per shard ring (rounded up to a power of two)
  int64_t flush_interval_ms = 100;      // flush/commit at least this often while alerts arrive
  int flush_max_alerts = 1000;          // ... or after this many alerts
  int64_t error_log_interval_ms = 5000; // at most one log line per sink per interval
};

class AlertDispatcher {
 public:
  // `symbols` must outlive the dispatcher. shard_count >= 1.
  AlertDispatcher(const SymbolTable& symbols, int shard_count, DispatcherOptions opts = {});
  ~AlertDispatcher();  // stop()
  AlertDispatcher(const AlertDispatcher&) = delete;
  AlertDispatcher& operator=(const AlertDispatcher&) = delete;

  // Before start() only. `name` labels errors and counters ("stdout", "jsonl", "sqlite").
  void add_sink(std::string name, std::shared_ptr<AlertSink> sink);
  // Starts the sink thread.
  void start();

  // Shard `shard`'s thread only (one producer per shard). Stamps a copy's t.emit_ns and
  // enqueues it, waiting while the ring is full. Returns true when accepted (it will reach
  // every sink), false only once stop() has begun (the alert was not taken).
  // Model alerts may carry the window that fed the model: a.model.window_rows rows of
  // kFeatureCount floats at `window` (copied; ≤ kMaxWindowRows rows), handed to every sink's
  // write_model_input() after write().
  bool try_publish(int shard, const Alert& a, const float* window = nullptr);
  static constexpr int kMaxWindowRows = 120;

  // Idempotent; any thread except a producer in try_publish. Returns when every accepted
  // alert has been written and the sinks are flushed and closed.
  void stop();

  // Counters (any thread, relaxed).
  uint64_t published() const;                       // accepted by try_publish
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }  // drained
  uint64_t alerts_by_type(AlertType type) const { return by_type_[int(type)].load(std::memory_order_relaxed); }
  uint64_t sink_errors() const;                     // all sinks, write + flush + close
  uint64_t sink_errors(size_t sink_index) const;
  uint64_t flushes() const { return flushes_.load(std::memory_order_relaxed); }
  uint64_t publish_waits() const;                   // times a producer found its ring full

  // Adds the counts since the previous call to `metrics`: ticksentry_alerts_total{type},
  // ticksentry_alert_sink_errors_total{sink}, ticksentry_alert_publish_waits_total. Call from
  // one thread at a time (e.g. periodically from the app, and once after stop()).
  void publish_metrics(Metrics& metrics);

 private:
  struct ModelWindow {
    int rows = 0;
    float data[kMaxWindowRows * kFeatureCount];
  };
  struct alignas(kCacheLine) Shard {
    explicit Shard(size_t cap) : ring(cap), windows(256) {}
    SpscRing<Alert> ring;
    // Windows of model alerts, in the order of their alerts (pushed just before the alert).
    SpscRing<ModelWindow> windows;
    alignas(kCacheLine) std::atomic<int> in_flight{0};  // producer inside try_publish
    std::atomic<uint64_t> published{0};
    std::atomic<uint64_t> waits{0};
  };
  struct SinkSlot {
    std::string name;
    std::shared_ptr<AlertSink> sink;
    std::atomic<uint64_t> errors{0};
    int64_t last_log_ns = 0;
    uint64_t unlogged = 0;
  };

  void run();
  size_t drain(size_t max_per_ring);
  void write_one(const Alert& a, const ModelWindow* window);
  void flush_all();
  void close_all();
  void sink_error(SinkSlot& s, const Status& st, const char* what);
  bool producers_idle() const;

  const SymbolTable& symbols_;
  const DispatcherOptions opts_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<std::unique_ptr<SinkSlot>> sinks_;
  std::thread thread_;
  std::atomic<bool> accepting_{true};
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> by_type_[kAlertTypeCount] = {};
  uint64_t since_flush_ = 0;  // sink thread only
  // Values already added to Metrics (publish_metrics' caller only).
  uint64_t exported_by_type_[kAlertTypeCount] = {};
  std::vector<uint64_t> exported_sink_errors_;
  uint64_t exported_waits_ = 0;
};

}  // namespace ts
