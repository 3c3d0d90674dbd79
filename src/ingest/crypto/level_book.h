#pragma once
// LevelBook: one symbol's full-depth price-level book as a venue's diff feed describes it
// (price → total size per side), kept by the crypto decoders. Each side is a vector sorted with
// the BEST level LAST, so the frequent changes near the touch move few bytes.
// Threading: owned by one decoder (one thread).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/event.h"

namespace ts::crypto {

class LevelBook {
 public:
  // Sets the size at `price` on one side; qty 0 removes the level (removing an absent level is
  // not an error: venues send deletes for levels beyond a client's depth).
  void set(bool bid, Price price, Qty qty);
  // Adds `delta` (may be negative) at `price`; the level goes when its size reaches <= 0.
  void add(bool bid, Price price, Qty delta);
  void clear();
  // Loads one side of a snapshot, best first, onto that side emptied first: the same book as
  // clearing the side and set() on each level in order, built in one pass when the levels are
  // strictly best-first with positive sizes (a venue's snapshot; set() would insert each worse
  // level at the vector's front: O(n^2) moves for a 1,000-level REST snapshot), else level by
  // level.
  void load(bool bid, const Level* best_first, size_t n);
  // An authoritative view of the best `n` levels of one side (best first; Bitstamp's order_book
  // lines): every level at or better than the view's worst level becomes the view's; worse levels
  // are kept. n = 0 empties the side.
  void replace_top(bool bid, const Level* best_first, size_t n);
  // Keeps only the best `depth` levels of each side (Kraken's subscribed depth).
  void truncate(size_t depth);

  size_t depth(bool bid) const { return (bid ? bids_ : asks_).size(); }
  // The i-th best level of a side (0 = best); i < depth(bid).
  const Level& level(bool bid, size_t i) const {
    const auto& v = bid ? bids_ : asks_;
    return v[v.size() - 1 - i];
  }
  bool crossed() const {
    return !bids_.empty() && !asks_.empty() && bids_.back().price >= asks_.back().price;
  }
  // The top kBookLevels of each side into `bids`/`asks` (best first, {0,0} beyond the depth).
  void top(Level* bids, Level* asks) const;

 private:
  // Index of `price` in `v` or where it would go; `v` sorted worst → best.
  static size_t find(const std::vector<Level>& v, bool bid, Price price);
  std::vector<Level> bids_;  // ascending price: best bid last
  std::vector<Level> asks_;  // descending price: best ask last
};

}  // namespace ts::crypto
