#include "book/price_levels.h"

#include <algorithm>

namespace ts {

size_t PriceLevels::lower_bound(Price key) const {
  // Scan a few slots from the back (the touch), then binary-search what is left.
  constexpr int kLinearSteps = 8;
  size_t i = levels_.size();
  for (int step = 0; step < kLinearSteps; ++step) {
    if (i == 0 || levels_[i - 1].key < key) return i;
    --i;
  }
  auto it = std::lower_bound(levels_.begin(), levels_.begin() + static_cast<std::ptrdiff_t>(i), key,
                             [](const Slot& s, Price k) { return s.key < k; });
  return static_cast<size_t>(it - levels_.begin());
}

size_t PriceLevels::add(Price price, Qty qty, bool* created) {
  const Price key = key_of(price);
  const size_t i = lower_bound(key);
  const bool found = i < levels_.size() && levels_[i].key == key;
  if (found) {
    levels_[i].qty += qty;
  } else {
    levels_.insert(levels_.begin() + static_cast<std::ptrdiff_t>(i), Slot{key, qty});
  }
  if (created) *created = !found;
  return levels_.size() - 1 - i;
}

size_t PriceLevels::remove(Price price, Qty qty, bool* erased) {
  const Price key = key_of(price);
  const size_t i = lower_bound(key);
  if (i >= levels_.size() || levels_[i].key != key) return npos;
  const size_t depth = levels_.size() - 1 - i;
  const bool gone = levels_[i].qty <= qty;
  if (!gone) {
    levels_[i].qty -= qty;
  } else {
    levels_.erase(levels_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (erased) *erased = gone;
  return depth;
}

Qty PriceLevels::qty_at(Price price) const {
  const Price key = key_of(price);
  const size_t i = lower_bound(key);
  return (i < levels_.size() && levels_[i].key == key) ? levels_[i].qty : 0;
}

void PriceLevels::assign(const Level* levels, int count) {
  levels_.clear();
  for (int k = count - 1; k >= 0; --k) {  // worst first, so the best ends at the back
    if (levels[k].qty <= 0 || levels[k].price <= 0) continue;
    const Price key = key_of(levels[k].price);
    // Snapshots are sorted best first; tolerate a duplicate or unsorted level by merging.
    if (!levels_.empty() && levels_.back().key >= key) {
      add(levels[k].price, levels[k].qty);
    } else {
      levels_.push_back(Slot{key, levels[k].qty});
    }
  }
}

void PriceLevels::replace_top(const Level* levels, int count) {
  bool any = false;
  Price worst_key = 0;
  for (int k = 0; k < count; ++k) {
    if (levels[k].qty <= 0 || levels[k].price <= 0) continue;
    const Price key = key_of(levels[k].price);
    if (!any || key < worst_key) worst_key = key;
    any = true;
  }
  if (!any) {
    levels_.clear();
    return;
  }
  // Keep [0, i): the levels strictly worse than the snapshot's worst level.
  levels_.resize(lower_bound(worst_key));
  for (int k = count - 1; k >= 0; --k) {  // worst first, so the best ends at the back
    if (levels[k].qty <= 0 || levels[k].price <= 0) continue;
    const Price key = key_of(levels[k].price);
    if (!levels_.empty() && levels_.back().key >= key) {
      add(levels[k].price, levels[k].qty);  // unsorted or duplicate level: merge
    } else {
      levels_.push_back(Slot{key, levels[k].qty});
    }
  }
}

int PriceLevels::copy_top(Level* out, int n) const {
  const int have = static_cast<int>(std::min<size_t>(levels_.size(), static_cast<size_t>(n)));
  const Slot* s = levels_.data() + levels_.size();
  for (int k = 0; k < have; ++k) {
    --s;
    out[k] = Level{is_bid_ ? s->key : -s->key, s->qty};
  }
  for (int k = have; k < n; ++k) out[k] = Level{};
  return have;
}

}  // namespace ts
