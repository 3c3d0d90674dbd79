#pragma once
// MarketBoard: the latest per-symbol view (last price, volume, top of book) for the dashboard,
// handed from the shard threads to the HTTP layer without locks.
//
// One slot per symbol id, written only by the shard that owns the symbol and read by any
// thread through a seqlock: the writer makes the slot's sequence odd, stores the fields
// (relaxed atomics, so a torn read is detected, never undefined), then makes it even again; a
// reader retries while the sequence is odd or changed under it.
//
// Hot-path cost: maybe_publish() compares the event's receive time with the slot's last
// publish time and returns at once unless `min_interval_ns` has passed (default 100 ms), so a
// busy symbol costs one load and a compare per event and a copy of its top levels ten times a
// second. No allocation, no syscall, no lock. Symbol ids >= capacity are ignored (counted in
// skipped_ids(), approximately: the counter is per-writer relaxed).
#include <atomic>
#include <cstdint>
#include <memory>

#include "book/book_top.h"
#include "core/event.h"

namespace ts {

constexpr int kBoardLevels = 5;  // order-book ladder depth shown on the dashboard

struct QuoteSnapshot {
  uint64_t version = 0;      // increases with every publish of this symbol; 0 = never published
  int64_t update_ts_ns = 0;  // exchange time of the book's last change
  int64_t publish_ns = 0;    // monotonic time (core/clock.h) of the publish
  Price last = 0;            // ticks; 0 before the first trade
  Qty cum_volume = 0;        // shares traded today
  Price prev_close = 0;      // ticks, from the feed's snapshots; 0 = not seen (see RefData)
  Phase phase = Phase::kUnknown;  // trading phase of the book's last event
  int32_t local_offset_s = 0;     // exchange-local time = UTC + this (0 without a schedule)
  int bid_levels = 0;        // levels in use, <= kBoardLevels
  int ask_levels = 0;
  Level bids[kBoardLevels] = {};
  Level asks[kBoardLevels] = {};
};

class MarketBoard {
 public:
  explicit MarketBoard(size_t capacity = 16384, int64_t min_interval_ns = 100'000'000);
  ~MarketBoard();
  MarketBoard(const MarketBoard&) = delete;
  MarketBoard& operator=(const MarketBoard&) = delete;

  // Shard thread that owns `id` only. `now_ns`: a monotonic time (the event's recv_ts_ns).
  void maybe_publish(SymbolId id, int64_t now_ns, const BookTop& top) {
    if (id >= capacity_) {
      skipped_ids_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    Slot& s = slots_[id];
    if (now_ns - s.last_publish_ns < min_interval_ns_) return;
    s.last_publish_ns = now_ns;
    publish(s, now_ns, top);
  }

  // Any thread. False when the symbol was never published (or id >= capacity).
  bool read(SymbolId id, QuoteSnapshot* out) const;

  size_t capacity() const { return capacity_; }
  uint64_t skipped_ids() const { return skipped_ids_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kWords = 8 + 4 * kBoardLevels;
  struct alignas(64) Slot {
    int64_t last_publish_ns = INT64_MIN / 2;  // writer only
    std::atomic<uint64_t> seq{0};             // odd while the writer is inside
    std::atomic<int64_t> words[kWords] = {};
  };
  void publish(Slot& s, int64_t now_ns, const BookTop& top);

  const size_t capacity_;
  const int64_t min_interval_ns_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> skipped_ids_{0};
};

}  // namespace ts
