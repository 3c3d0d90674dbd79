#include "core/latency_histogram.h"

#include <algorithm>
#include <bit>

namespace ts {

int LatencyHistogram::bucket_of(uint64_t ns) {
  if (ns < uint64_t(kSub)) return int(ns);
  const int msb = 63 - std::countl_zero(ns);          // >= kSubBits
  const int octave = msb - kSubBits + 1;              // 1..
  const int sub = int((ns >> (msb - kSubBits)) & (kSub - 1));
  const int b = kSub + (octave - 1) * kSub + sub;
  return std::min(b, kBuckets - 1);
}

int64_t LatencyHistogram::upper_of(int bucket) {
  if (bucket < kSub) return bucket;
  const int octave = (bucket - kSub) / kSub + 1;
  const int sub = (bucket - kSub) % kSub;
  const int shift = octave - 1;
  // Bucket covers [(kSub + sub) << shift, (kSub + sub + 1) << shift).
  return ((int64_t(kSub + sub + 1)) << shift) - 1;
}

void LatencyHistogram::record(int64_t ns) {
  if (ns < 0) ns = 0;
  ++buckets_[bucket_of(uint64_t(ns))];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

int64_t LatencyHistogram::quantile_ns(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = std::max<uint64_t>(1, uint64_t(q * double(count_) + 0.999999));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(upper_of(i), max_);
  }
  return max_;
}

}  // namespace ts
