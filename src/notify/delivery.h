#pragma once
// Delivery: one DeliveryWorker thread per receiver takes that receiver's due notifications from
// the outbox (oldest first), waits for its rate limit, sends, and records the outcome there.
//
// Retry: the receiver's own RetryPolicy (retry_policy.h): exponential backoff with jitter, so
// that receivers coming back are not hit by every process at once. A notification tried
// max_attempts times, older than give_up_after_ms, or refused for good (kInvalidArgument: a 4xx)
// is marked dead and counted; nothing else is ever dropped. A receiver down for an hour
// therefore delays its notifications by up to max_backoff_ms after it comes back, and loses
// none (with the default policy).
//
// Record: every attempt's outcome goes to the outbox first, then (when configured) to the
// delivery audit (delivery_audit.h) and the Prometheus metrics (DeliveryMetrics).
//
// Rate limit: a token bucket per receiver (rate_per_s sustained, burst at once); a notification
// over the limit waits in the outbox, it is never dropped.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "core/latency_histogram.h"
#include "core/metrics.h"
#include "notify/delivery_audit.h"
#include "notify/outbox.h"
#include "notify/receiver.h"

namespace ts::notify {

class TokenBucket {
 public:
  TokenBucket(double rate_per_s, int burst) : rate_per_ns_(rate_per_s / 1e9), burst_(double(burst)), tokens_(burst_) {}
  // Takes a token and returns 0, or returns how long (ns) until one is available.
  int64_t take(int64_t now_ns);

 private:
  double rate_per_ns_;
  double burst_;
  double tokens_;
  int64_t last_ns_ = 0;
};

struct DeliveryStats {
  std::atomic<uint64_t> delivered{0};
  std::atomic<uint64_t> failed_attempts{0};
  std::atomic<uint64_t> dead{0};
  std::atomic<uint64_t> rate_limited{0};
  std::atomic<uint64_t> outbox_errors{0};
  std::mutex latency_mu;
  LatencyHistogram latency;  // alert → delivered, ns
};

// One receiver's Prometheus series (all null: no metrics). Prometheus counters and histograms
// are thread-safe; the delivery thread updates them as each attempt ends.
struct DeliveryMetrics {
  prometheus::Histogram* latency_s = nullptr;     // ticksentry_notify_delivery_latency_seconds{receiver}
  prometheus::Counter* delivered = nullptr;       // ticksentry_notify_deliveries_total{receiver,state="delivered"}
  prometheus::Counter* failed = nullptr;          // ticksentry_notify_deliveries_total{receiver,state="failed"}
  prometheus::Counter* attempts_ok = nullptr;     // ticksentry_notify_delivery_attempts_total{receiver,result="ok"}
  prometheus::Counter* attempts_error = nullptr;  // ticksentry_notify_delivery_attempts_total{receiver,result="error"}

  // Registers receiver `name`'s series in `m`.
  static DeliveryMetrics registered(Metrics& m, const std::string& name);
};

class DeliveryWorker {
 public:
  // Retries by cfg.retry. `audit` (may be null) must outlive the worker.
  DeliveryWorker(ReceiverConfig cfg, std::unique_ptr<Receiver> receiver, Outbox& outbox, DeliveryAudit* audit = nullptr,
                 DeliveryMetrics metrics = {});
  ~DeliveryWorker();  // stop(0)
  DeliveryWorker(const DeliveryWorker&) = delete;
  DeliveryWorker& operator=(const DeliveryWorker&) = delete;

  void start();
  // New notifications for this receiver are in the outbox (any thread).
  void wake();
  // Keeps delivering what is due for up to `drain_ms`, then ends the thread. What is left stays
  // pending in the outbox for the next start.
  void stop(int64_t drain_ms);

  const std::string& name() const { return cfg_.name; }
  DeliveryStats& stats() { return stats_; }

 private:
  void run();
  // Waits until `unix_ns`, a wake() or stop; returns false once the thread should end.
  void wait_until(int64_t unix_ns);
  void deliver(const OutboxEntry& e);

  ReceiverConfig cfg_;
  std::unique_ptr<Receiver> receiver_;
  Outbox& outbox_;
  DeliveryAudit* audit_;
  DeliveryMetrics metrics_;
  TokenBucket bucket_;
  std::mt19937_64 rng_;
  DeliveryStats stats_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  bool stopping_ = false;
  int64_t stop_deadline_unix_ns_ = 0;
  std::thread thread_;
};

}  // namespace ts::notify
