#pragma once
// Bounded single-producer/single-consumer ring. One thread calls try_push, one thread calls
// try_pop; neither blocks. Capacity is rounded up to a power of two. A full ring is a return
// value (false), never an error: the caller decides to wait, drop, or count.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

namespace ts {

inline constexpr size_t kCacheLine = 64;

template <typename T>
class SpscRing {
 public:
  // The largest capacity a ring accepts (2^32 slots); configs bound theirs far lower.
  static constexpr size_t kMaxCapacity = size_t(1) << 32;

  // Start-up only. Throws std::length_error when `capacity` exceeds kMaxCapacity (rounding it up
  // to a power of two would overflow, or the allocation could never succeed); 0 gives 1 slot.
  explicit SpscRing(size_t capacity) {
    if (capacity > kMaxCapacity) {
      throw std::length_error("ring capacity " + std::to_string(capacity) + " exceeds " +
                              std::to_string(kMaxCapacity));
    }
    const size_t cap = std::bit_ceil(std::max<size_t>(capacity, 1));
    mask_ = cap - 1;
    slots_ = std::make_unique<T[]>(cap);
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  size_t capacity() const { return mask_ + 1; }

  // Producer side. Returns false when full.
  bool try_push(const T& value) {
    const size_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ > mask_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head - cached_tail_ > mask_) return false;
    }
    slots_[head & mask_] = value;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer side. Returns false when empty.
  bool try_pop(T& out) {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == cached_head_) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail == cached_head_) return false;
    }
    out = slots_[tail & mask_];
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Approximate; exact only when called from one side with the other idle.
  size_t size_approx() const {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }

 private:
  alignas(kCacheLine) std::atomic<size_t> head_{0};   // written by the producer
  alignas(kCacheLine) size_t cached_tail_ = 0;        // producer's view of tail_
  alignas(kCacheLine) std::atomic<size_t> tail_{0};   // written by the consumer
  alignas(kCacheLine) size_t cached_head_ = 0;        // consumer's view of head_
  size_t mask_ = 0;
  std::unique_ptr<T[]> slots_;
};

// Idle strategy for stage loops, by time idle: busy-spin (pause) for the first `spin_ns`,
// then yield until `yield_ns`, then sleep 50 µs per call. Any work resets it.
// PERF NOTE: with a fixed 128-iteration spin (~1 µs) the shard fell asleep between events at
// 200,000 events/s (one every 5 µs) and each 50 µs sleep + wake-up showed in the tail:
// receive→alert p99 135 µs. Spinning for 200 µs of idleness keeps a busy shard awake.
class BackoffIdle {
 public:
  explicit BackoffIdle(int64_t spin_ns = 200'000, int64_t yield_ns = 2'000'000)
      : spin_ns_(spin_ns), yield_ns_(yield_ns) {}
  void idle(size_t work_done);
  void reset() { idle_since_ns_ = 0; }

 private:
  int64_t spin_ns_;
  int64_t yield_ns_;
  int64_t idle_since_ns_ = 0;
};

}  // namespace ts
