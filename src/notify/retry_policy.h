#pragma once
// How a receiver retries a notification that failed ([notify.retry], overridden per receiver by
// [[notify.receivers]] retry = {...}; docs/notifications.md).
//
// A failed attempt n (1, 2, ...) is retried after
//   min(max_backoff_ms, initial_backoff_ms × multiplier^(n−1)) × (1 − jitter × u),  u ∈ [0, 1)
// A notification is given up (state "dead" in the outbox, "failed" in the audit store) when the
// receiver refuses it for good (a 4xx), when it has been tried max_attempts times (0: no limit),
// or when it is older than give_up_after_ms at a failed attempt — whichever comes first.
#include <cstdint>

namespace ts::notify {

struct RetryPolicy {
  int64_t initial_backoff_ms = 200;
  int64_t max_backoff_ms = 30'000;
  double multiplier = 2.0;
  double jitter = 0.2;                      // fraction of the delay drawn off at random, [0, 1)
  int max_attempts = 0;                     // 0: no limit (give_up_after_ms decides)
  int64_t give_up_after_ms = 86'400'000;    // 24 h, from the notification's first enqueue

  // Whether a failed attempt `attempt` (1-based) of a notification `age_ms` old is the last.
  bool gives_up(int attempt, int64_t age_ms) const {
    return (max_attempts > 0 && attempt >= max_attempts) || age_ms >= give_up_after_ms;
  }
};

// Delay before retrying after failed attempt `attempt` (1-based); `u` in [0, 1).
int64_t retry_delay_ms(const RetryPolicy& p, int attempt, double u);

}  // namespace ts::notify
