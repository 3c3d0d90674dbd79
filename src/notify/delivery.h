#pragma once
// Delivery: one DeliveryWorker thread per receiver takes that receiver's due notifications from
// the outbox (oldest first), waits for its rate limit, sends, and records the outcome there.
//
// Retry: a failed attempt n (1, 2, ...) is retried after
//   min(max_backoff_ms, initial_backoff_ms × multiplier^(n−1)) × (1 − jitter × u),  u ∈ [0, 1)
// (exponential backoff with jitter, so that receivers coming back are not hit by every
// process at once). A notification older than give_up_after_ms, or one the receiver refuses
// for good (kInvalidArgument: a 4xx), is marked dead and counted; nothing else is ever dropped.
// A receiver down for an hour therefore delays its notifications by up to max_backoff_ms after
// it comes back, and loses none.
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
#include "notify/outbox.h"
#include "notify/receiver.h"

namespace ts::notify {

struct RetryPolicy {
  int64_t initial_backoff_ms = 200;
  int64_t max_backoff_ms = 30'000;
  double multiplier = 2.0;
  double jitter = 0.2;                      // fraction of the delay drawn off at random
  int64_t give_up_after_ms = 86'400'000;    // 24 h
};

// Delay before retrying after failed attempt `attempt` (1-based); `u` in [0, 1).
int64_t retry_delay_ms(const RetryPolicy& p, int attempt, double u);

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

class DeliveryWorker {
 public:
  DeliveryWorker(ReceiverConfig cfg, std::unique_ptr<Receiver> receiver, Outbox& outbox, RetryPolicy retry);
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
  RetryPolicy retry_;
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
