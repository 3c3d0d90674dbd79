#pragma once
// One side of a full-depth order book, aggregated by price level.
//
// Storage: a flat vector sorted so that the BEST level is at the back (bids ascending by price,
// asks descending). Almost all order-book activity happens within a few levels of the touch,
// so an insert or removal there moves only the few elements behind it, and a lookup scans a
// handful of elements from the back before falling back to binary search.
// PERF NOTE: against std::map (a node per level, pointer chasing) the flat vector keeps the
// whole touch region in one or two cache lines; deep-book updates pay a memmove, which for the
// ~1-3k levels of a real day (SSE 600519) is still well under a microsecond and rare.
// Ownership/threading: owned by one BookSet, used by one shard thread. Allocates only when the
// number of levels exceeds the largest seen so far (no allocation per event in steady state).
#include <cstddef>
#include <vector>

#include "core/event.h"

namespace ts {

class PriceLevels {
 public:
  // is_bid: true for the bid side (best = highest price), false for asks (best = lowest).
  explicit PriceLevels(bool is_bid) : is_bid_(is_bid) {}

  // Adds qty (> 0) at price. Returns the changed level's depth from the best (0 = best);
  // *created (when given) says whether a new level was inserted there (false: qty was added).
  size_t add(Price price, Qty qty, bool* created = nullptr);
  // Removes up to qty at price (the level disappears when it reaches 0). Returns the changed
  // level's depth from the best, or npos when there is no level at that price (nothing changes);
  // *erased (when given) says whether the level disappeared (false: only its qty fell).
  size_t remove(Price price, Qty qty, bool* erased = nullptr);
  // Quantity resting at price (0 when there is no level).
  Qty qty_at(Price price) const;

  // Replaces every level with `levels` (best first, as in a snapshot); skips qty <= 0 entries.
  void assign(const Level* levels, int count);
  // Authoritative top of book (a resync snapshot, best first): every level at or better than the
  // worst level given is replaced by `levels`; levels strictly worse than it are kept (they lie
  // beyond what the snapshot shows). No level given (qty <= 0 everywhere): the side is cleared,
  // since any snapshot shows at least the best level of a side that has one.
  void replace_top(const Level* levels, int count);
  void clear() { levels_.clear(); }

  size_t size() const { return levels_.size(); }
  bool empty() const { return levels_.empty(); }
  // The level `depth` away from the best (0 = best); requires depth < size().
  Level at_depth(size_t depth) const {
    const Slot& s = levels_[levels_.size() - 1 - depth];
    return Level{is_bid_ ? s.key : -s.key, s.qty};
  }
  Price best() const { return empty() ? 0 : at_depth(0).price; }
  // Hint: starts loading the cache line(s) of the best levels (where most changes land).
  void prefetch_touch() const {
    if (levels_.empty()) return;
    const Slot* best = levels_.data() + levels_.size() - 1;
    __builtin_prefetch(best);
    __builtin_prefetch(best - 3);  // 16-byte slots: the next three levels may sit one line lower
  }
  // Copies up to n best levels into out (best first), zero-filling the rest; returns how many.
  int copy_top(Level* out, int n) const;

  static constexpr size_t npos = static_cast<size_t>(-1);

 private:
  // key = price for bids, -price for asks: ascending keys put the best level at the back.
  struct Slot {
    Price key;
    Qty qty;
  };
  Price key_of(Price price) const { return is_bid_ ? price : -price; }
  // Index of the first slot with key >= key (std::lower_bound), searched from the back.
  size_t lower_bound(Price key) const;

  bool is_bid_;
  std::vector<Slot> levels_;
};

}  // namespace ts
