#pragma once
// Log-linear latency histogram (HDR-style): 1 ns resolution below 64 ns, then 64 linear
// sub-buckets per power of two (≤ 1.6% relative error), up to ~2^40 ns (18 minutes).
// record() is O(1), allocation-free and single-threaded; merge() combines per-thread copies.
#include <array>
#include <cstdint>

namespace ts {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;       // 64 sub-buckets per octave
  static constexpr int kOctaves = 40 - kSubBits + 1;
  static constexpr int kBuckets = kSub + kOctaves * kSub;

  void record(int64_t ns);
  void merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  int64_t max_ns() const { return max_; }
  int64_t min_ns() const { return count_ ? min_ : 0; }
  double mean_ns() const { return count_ ? double(sum_) / double(count_) : 0.0; }
  // Value at quantile q in [0, 1] (upper edge of its bucket, capped at the max seen); 0 if empty.
  int64_t quantile_ns(double q) const;
  void reset() { *this = LatencyHistogram(); }

 private:
  static int bucket_of(uint64_t ns);
  static int64_t upper_of(int bucket);
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
};

}  // namespace ts
