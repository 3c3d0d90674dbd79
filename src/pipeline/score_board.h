#pragma once
// ScoreBoard: what the serving model says, handed from the shard threads to the dashboard.
//
// Per symbol, the peak probability of the serving version since the dashboard last looked (and
// the threshold it was decided with) (its
// live feed takes it once a second, so a 1 M events/s stream costs the browser one point per
// scored symbol per second, and a short spike is never sampled away). Per shard, the end-to-end
// latency of inference (request queued → result seen by the shard) as a LatencyHistogram plus
// the counts of the Prometheus buckets the feed re-exports as ticksentry_model_end_to_end_seconds.
//
// Hot-path cost (record(), on the shard thread, per result): a relaxed load and maybe a store of
// the symbol's peak, one histogram record, a scan of 14 bucket bounds, and every
// `publish_interval_ns` (250 ms) a try_lock of the shard's own mutex to hand its histogram over
// (a busy reader makes it try again at the next result: the shard never waits). No allocation,
// no syscall. Symbol ids >= capacity and shards >= set_shards() are ignored. A shard's last
// < 250 ms of latencies before its results stop are handed over with its next result (a display
// lag, nothing is lost). Checked with ThreadSanitizer and ASan/UBSan: two writer threads and a
// reader taking peaks and latencies concurrently.
//
// Threading: set_shards() before the shard threads start; record(shard, ...) from shard `shard`
// only, for symbols it owns; take_*() from one reader thread (the live feed).
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "core/event.h"
#include "core/latency_histogram.h"

namespace ts {

class ScoreBoard {
 public:
  // Upper bounds (seconds) of ticksentry_model_end_to_end_seconds, as the serving histograms.
  static constexpr std::array<double, 14> kBucketsS = {25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3,
                                                       5e-3,  10e-3, 25e-3,  50e-3,  0.1,    0.25,   1.0};
  static constexpr size_t kBuckets = kBucketsS.size() + 1;  // the last one is +Inf

  struct Latency {
    LatencyHistogram hist;
    std::array<uint64_t, kBuckets> buckets{};  // per bucket (not cumulative)
    int64_t sum_ns = 0;
  };

  explicit ScoreBoard(size_t capacity = 16384, int64_t publish_interval_ns = 250'000'000);
  ~ScoreBoard();
  ScoreBoard(const ScoreBoard&) = delete;
  ScoreBoard& operator=(const ScoreBoard&) = delete;

  // Before the shard threads start (control thread). Keeps what was recorded so far.
  void set_shards(int shards);
  // The default decision threshold, shown as a line on the chart (control thread; 0 = unknown).
  void set_threshold(double t) { threshold_.store(t, std::memory_order_relaxed); }
  double threshold() const { return threshold_.load(std::memory_order_relaxed); }
  // The threshold the shard last decided `id` with (symbol groups may differ from the default);
  // the default when it never said.
  double threshold(SymbolId id) const {
    const float t = id < capacity_ ? slots_[id].threshold.load(std::memory_order_relaxed) : 0.0f;
    return t > 0 ? double(t) : threshold();
  }

  // Shard `shard` thread: one result of the serving version for `id`, decided with `threshold`.
  void record(int shard, SymbolId id, float probability, float threshold, int64_t end_to_end_ns, int64_t now_ns) {
    if (id < capacity_) {
      Slot& s = slots_[id];
      const float cur = s.peak.load(std::memory_order_relaxed);
      if (!(cur >= probability)) s.peak.store(probability, std::memory_order_relaxed);  // NaN (none) too
      if (s.threshold.load(std::memory_order_relaxed) != threshold) s.threshold.store(threshold, std::memory_order_relaxed);
    }
    if (shard >= 0 && size_t(shard) < shards_.size()) shards_[size_t(shard)]->record(end_to_end_ns, now_ns, interval_ns_);
  }

  // Reader: the peak probability of `id` since the previous take; false when no result came.
  bool take_peak(SymbolId id, float* peak);
  // Reader: the latencies every shard handed over since the previous take.
  Latency take_latency();
  size_t capacity() const { return capacity_; }
  // Whether any result was ever recorded (the model serves).
  bool active() const { return active_.load(std::memory_order_relaxed); }

 private:
  struct alignas(64) Slot {
    std::atomic<float> peak{std::numeric_limits<float>::quiet_NaN()};
    std::atomic<float> threshold{0};
  };
  struct Shard {
    Latency local;       // shard thread only
    int64_t last_publish_ns = 0;
    std::atomic<bool>* active = nullptr;
    std::mutex mu;       // guards published
    Latency published;
    void record(int64_t ns, int64_t now_ns, int64_t interval_ns);
  };

  const size_t capacity_;
  const int64_t interval_ns_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex shards_mu_;  // set_shards() vs take_latency(); record() reads shards_ without it
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<double> threshold_{0};
  std::atomic<bool> active_{false};
};

}  // namespace ts
