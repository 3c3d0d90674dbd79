#include "ingest/crypto/level_book.h"

#include <algorithm>

namespace ts::crypto {

size_t LevelBook::find(const std::vector<Level>& v, bool bid, Price price) {
  // Near the touch first: most changes are within a few levels of the best.
  const size_t n = v.size();
  for (size_t k = 0; k < 8 && k < n; ++k) {
    const Price p = v[n - 1 - k].price;
    if (p == price) return n - 1 - k;
    // Past it: `price` is better than this level (bids: higher; asks: lower).
    if (bid ? price > p : price < p) return n - k;
  }
  auto it = bid ? std::lower_bound(v.begin(), v.end(), price, [](const Level& l, Price x) { return l.price < x; })
                : std::lower_bound(v.begin(), v.end(), price, [](const Level& l, Price x) { return l.price > x; });
  return size_t(it - v.begin());
}

void LevelBook::set(bool bid, Price price, Qty qty) {
  auto& v = bid ? bids_ : asks_;
  const size_t i = find(v, bid, price);
  const bool present = i < v.size() && v[i].price == price;
  if (qty <= 0) {
    if (present) v.erase(v.begin() + std::ptrdiff_t(i));
  } else if (present) {
    v[i].qty = qty;
  } else {
    v.insert(v.begin() + std::ptrdiff_t(i), Level{price, qty});
  }
}

void LevelBook::add(bool bid, Price price, Qty delta) {
  auto& v = bid ? bids_ : asks_;
  const size_t i = find(v, bid, price);
  if (i < v.size() && v[i].price == price) {
    v[i].qty += delta;
    if (v[i].qty <= 0) v.erase(v.begin() + std::ptrdiff_t(i));
  } else if (delta > 0) {
    v.insert(v.begin() + std::ptrdiff_t(i), Level{price, delta});
  }
}

void LevelBook::clear() {
  bids_.clear();
  asks_.clear();
}

void LevelBook::load(bool bid, const Level* best_first, size_t n) {
  auto& v = bid ? bids_ : asks_;
  v.clear();
  bool ordered = true;
  for (size_t i = 0; i < n && ordered; ++i) {
    ordered = best_first[i].qty > 0 &&
              (i == 0 || (bid ? best_first[i].price < best_first[i - 1].price : best_first[i].price > best_first[i - 1].price));
  }
  if (!ordered) {
    for (size_t i = 0; i < n; ++i) set(bid, best_first[i].price, best_first[i].qty);
    return;
  }
  v.resize(n);
  for (size_t i = 0; i < n; ++i) v[n - 1 - i] = best_first[i];
}

void LevelBook::replace_top(bool bid, const Level* best_first, size_t n) {
  auto& v = bid ? bids_ : asks_;
  if (n == 0) {
    v.clear();
    return;
  }
  const Price worst = best_first[n - 1].price;
  // Keep the levels strictly worse than `worst` (at the front of v), then the view worst → best.
  size_t keep = 0;
  while (keep < v.size() && (bid ? v[keep].price < worst : v[keep].price > worst)) ++keep;
  v.resize(keep);
  for (size_t i = n; i-- > 0;) {
    if (best_first[i].qty > 0) v.push_back(best_first[i]);
  }
}

void LevelBook::truncate(size_t depth) {
  for (auto* v : {&bids_, &asks_}) {
    if (v->size() > depth) v->erase(v->begin(), v->begin() + std::ptrdiff_t(v->size() - depth));
  }
}

void LevelBook::top(Level* bids, Level* asks) const {
  for (int i = 0; i < kBookLevels; ++i) {
    bids[i] = size_t(i) < bids_.size() ? level(true, size_t(i)) : Level{};
    asks[i] = size_t(i) < asks_.size() ? level(false, size_t(i)) : Level{};
  }
}

}  // namespace ts::crypto
