#pragma once
// FeatureWindow: the last T feature rows of one symbol, one row per row interval of exchange
// time (FeatureOptions::row_interval_ns), oldest first. A fixed ring of kMaxRows x kFeatureCount
// floats: no allocation after construction. Threading: owned by the shard that owns the symbol.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "features/feature_set.h"

namespace ts {

class FeatureWindow {
 public:
  static constexpr int kMaxRows = 120;

  // capacity: T, clamped to [1, kMaxRows].
  explicit FeatureWindow(int capacity = kMaxRows);

  // Appends one row of kFeatureCount floats; the oldest row drops out once T rows are held.
  void window_push(const float* row);
  // Copies the rows held, oldest → newest, into out (room for window_capacity() * kFeatureCount
  // floats); returns the number of rows copied (= window_size()).
  int window_rows(float* out) const;
  // The row `age` rows back from the newest (0 = newest); requires age < window_size().
  const float* window_row(int age) const;
  // The rows held, oldest → newest, without a copy: the ring's two contiguous runs of whole
  // rows (first the older run, then the newer; the second is empty when the rows do not wrap).
  // Valid until the next push or reset.
  std::pair<std::span<const float>, std::span<const float>> window_runs() const;
  int window_size() const { return size_; }
  // Rows pushed since construction or the last reset (a change means a new completed row).
  uint64_t window_pushes() const { return pushes_; }
  int window_capacity() const { return capacity_; }
  void window_reset() { size_ = 0; head_ = 0; pushes_ = 0; }

 private:
  int capacity_;
  int size_ = 0;
  int head_ = 0;  // slot the next row goes to
  uint64_t pushes_ = 0;
  float rows_[kMaxRows * kFeatureCount] = {};
};

}  // namespace ts
