#include "features/feature_window.h"

#include <algorithm>
#include <cstring>

namespace ts {

FeatureWindow::FeatureWindow(int capacity) : capacity_(std::clamp(capacity, 1, kMaxRows)) {}

void FeatureWindow::window_push(const float* row) {
  std::memcpy(rows_ + head_ * kFeatureCount, row, sizeof(float) * kFeatureCount);
  head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
  if (size_ < capacity_) ++size_;
  ++pushes_;
}

const float* FeatureWindow::window_row(int age) const {
  int slot = head_ - 1 - age;
  if (slot < 0) slot += capacity_;
  return rows_ + slot * kFeatureCount;
}

std::pair<std::span<const float>, std::span<const float>> FeatureWindow::window_runs() const {
  int oldest = head_ - size_;
  if (oldest < 0) oldest += capacity_;
  const int first = std::min(size_, capacity_ - oldest);  // rows before the ring wraps
  return {{rows_ + size_t(oldest) * kFeatureCount, size_t(first) * kFeatureCount},
          {rows_, size_t(size_ - first) * kFeatureCount}};
}

int FeatureWindow::window_rows(float* out) const {
  for (int k = 0; k < size_; ++k) {
    std::memcpy(out + k * kFeatureCount, window_row(size_ - 1 - k), sizeof(float) * kFeatureCount);
  }
  return size_;
}

}  // namespace ts
