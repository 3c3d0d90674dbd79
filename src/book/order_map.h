#pragma once
// Resting orders by order number: order id → (price, side, remaining qty).
// Needed only for feeds that refer to a resting order by its number alone (SSE/SZSE entrust
// deletes and trades carry TradeBuyNo/TradeSellNo, not the resting order's price).
//
// Open addressing with linear probing and backward-shift deletion (no tombstones), load <= 1/2.
// PERF NOTE: one probe sequence in a flat array is a cache miss or two at most, against a node
// allocation per insert for std::unordered_map; the table grows (doubles) only when it reaches
// a new high-water mark, so there is no allocation per event in steady state.
// Order id 0 is reserved (never stored). Threading: one owner.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/event.h"

namespace ts {

struct RestingOrder {
  Price price = 0;
  Qty qty = 0;  // remaining
  Side side = Side::kNone;
};

class OrderMap {
 public:
  OrderMap() = default;

  // Inserts or replaces order `id` (id != 0).
  void put(uint64_t id, const RestingOrder& order);
  // The order, or nullptr when unknown. The pointer is valid until the next put/erase.
  RestingOrder* find(uint64_t id);
  void erase(uint64_t id);
  size_t size() const { return size_; }
  void clear();

 private:
  struct Slot {
    uint64_t id = 0;  // 0 = empty
    RestingOrder order;
  };
  size_t index_of(uint64_t id) const {
    return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace ts
