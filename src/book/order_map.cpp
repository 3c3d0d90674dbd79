#include "book/order_map.h"

#include <utility>

namespace ts {

void OrderMap::grow() {
  std::vector<Slot> old = std::move(slots_);
  const size_t cap = old.empty() ? 1024 : old.size() * 2;
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  shift_ = 64 - __builtin_ctzll(cap);
  size_ = 0;
  for (const Slot& s : old) {
    if (s.id != 0) put(s.id, s.order);
  }
}

void OrderMap::put(uint64_t id, const RestingOrder& order) {
  if (id == 0) return;
  if ((size_ + 1) * 2 > slots_.size()) grow();
  size_t i = index_of(id);
  while (slots_[i].id != 0 && slots_[i].id != id) i = (i + 1) & mask_;
  if (slots_[i].id == 0) ++size_;
  slots_[i].id = id;
  slots_[i].order = order;
}

RestingOrder* OrderMap::find(uint64_t id) {
  if (id == 0 || slots_.empty()) return nullptr;
  size_t i = index_of(id);
  while (slots_[i].id != 0) {
    if (slots_[i].id == id) return &slots_[i].order;
    i = (i + 1) & mask_;
  }
  return nullptr;
}

void OrderMap::erase(uint64_t id) {
  if (id == 0 || slots_.empty()) return;
  size_t i = index_of(id);
  while (slots_[i].id != id) {
    if (slots_[i].id == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward-shift deletion: pull later members of the probe run into the hole.
  size_t hole = i;
  size_t j = i;
  while (true) {
    j = (j + 1) & mask_;
    if (slots_[j].id == 0) break;
    const size_t home = index_of(slots_[j].id);
    // Move j into the hole when its home is not cyclically within (hole, j].
    const bool home_in_range = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!home_in_range) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{};
  --size_;
}

void OrderMap::clear() {
  for (Slot& s : slots_) s = Slot{};
  size_ = 0;
}

}  // namespace ts
