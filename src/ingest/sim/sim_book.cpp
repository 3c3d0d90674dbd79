#include "ingest/sim/sim_book.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ts::sim {

namespace {
// True if `a` is a better price than `b` on `side`.
bool better(Side side, Price a, Price b) { return side == Side::kBuy ? a > b : a < b; }
}  // namespace

double SimBook::mid() const {
  if (has_bbo()) return 0.5 * double(bids_.best() + asks_.best());
  if (!bids_.empty()) return double(bids_.best());
  if (!asks_.empty()) return double(asks_.best());
  return 0;
}

void SimBook::remove_level(SimSide& s, int i) {
  s.free_slots |= 1u << s.rank[i];
  std::memmove(&s.rank[i], &s.rank[i + 1], size_t(s.levels - i - 1));
  --s.levels;
}

uint64_t SimBook::add(Side side, Price price, Qty qty, EventWriter& w) {
  if (price <= 0 || qty <= 0 || qty > INT32_MAX) return 0;
  const SimSide& other = side == Side::kBuy ? asks_ : bids_;
  if (!other.empty() && !better(side, other.best(), price)) return 0;  // would cross
  SimSide& s = side_mut(side);
  int i = 0;
  while (i < s.levels && better(side, s.level(i).price, price)) ++i;
  if (i < s.levels && s.level(i).price == price) {
    SimLevel& lv = s.level(i);
    if (lv.count == kSimMaxOrders) return 0;
    const uint64_t id = new_order_id();
    lv.orders[lv.count++] = SimOrder{uint32_t(id), int32_t(qty)};
    lv.qty += qty;
    ++s.orders;
    w.order(EventKind::kOrderAdd, id, price, qty, side);
    return id;
  }
  if (s.levels == kSimMaxLevels) {
    if (i == kSimMaxLevels) return 0;  // worse than a full side's worst level
    SimLevel& worst = s.level(kSimMaxLevels - 1);
    for (int k = 0; k < worst.count; ++k) {
      w.order(EventKind::kOrderCancel, id_base_ | worst.orders[k].local_id, worst.price,
              worst.orders[k].qty, side);
    }
    s.orders -= worst.count;
    remove_level(s, kSimMaxLevels - 1);
  }
  const auto free_slot = uint8_t(std::countr_zero(s.free_slots));
  s.free_slots &= ~(1u << free_slot);
  std::memmove(&s.rank[i + 1], &s.rank[i], size_t(s.levels - i));
  s.rank[i] = free_slot;
  ++s.levels;
  SimLevel& lv = s.level(i);
  const uint64_t id = new_order_id();
  lv.price = price;
  lv.qty = qty;
  lv.count = 1;
  lv.orders[0] = SimOrder{uint32_t(id), int32_t(qty)};
  ++s.orders;
  w.order(EventKind::kOrderAdd, id, price, qty, side);
  return id;
}

void SimBook::cancel(Side side, int level, int order, Qty qty, EventWriter& w) {
  SimSide& s = side_mut(side);
  SimLevel& lv = s.level(level);
  SimOrder& o = lv.orders[order];
  qty = std::min<Qty>(qty, o.qty);
  if (qty <= 0) return;
  w.order(EventKind::kOrderCancel, id_base_ | o.local_id, lv.price, qty, side);
  o.qty -= int32_t(qty);
  lv.qty -= qty;
  if (o.qty == 0) {
    std::memmove(&lv.orders[order], &lv.orders[order + 1], sizeof(SimOrder) * size_t(lv.count - order - 1));
    --lv.count;
    --s.orders;
    if (lv.count == 0) remove_level(s, level);
  }
}

bool SimBook::find(Side side, uint64_t id, int* level, int* order) const {
  if ((id & ~uint64_t(UINT32_MAX)) != id_base_) return false;
  const SimSide& s = side == Side::kBuy ? bids_ : asks_;
  for (int i = 0; i < s.levels; ++i) {
    for (int k = 0; k < s.level(i).count; ++k) {
      if (s.level(i).orders[k].local_id == uint32_t(id)) {
        *level = i;
        *order = k;
        return true;
      }
    }
  }
  return false;
}

Qty SimBook::take(Side aggressor, Price limit, Qty qty, int max_orders, EventWriter& w) {
  const Side resting = aggressor == Side::kBuy ? Side::kSell : Side::kBuy;
  SimSide& s = side_mut(resting);
  max_orders = std::min(max_orders, kMaxSweepOrders);
  const uint64_t aggressor_id = new_order_id();
  Qty filled = 0;
  int fills = 0;
  while (qty > 0 && fills < max_orders && !s.empty()) {
    SimLevel& lv = s.level(0);
    if (better(resting, limit, lv.price)) break;  // level beyond the aggressor's limit
    SimOrder& o = lv.orders[0];
    const Qty q = std::min<Qty>(qty, o.qty);
    const uint64_t rid = id_base_ | o.local_id;
    w.order(EventKind::kOrderExecute, rid, lv.price, q, resting);
    if (aggressor == Side::kBuy) {
      w.trade(lv.price, q, aggressor, aggressor_id, rid);
    } else {
      w.trade(lv.price, q, aggressor, rid, aggressor_id);
    }
    o.qty -= int32_t(q);
    lv.qty -= q;
    qty -= q;
    filled += q;
    ++fills;
    if (o.qty == 0) {
      std::memmove(&lv.orders[0], &lv.orders[1], sizeof(SimOrder) * size_t(lv.count - 1));
      --lv.count;
      --s.orders;
      if (lv.count == 0) remove_level(s, 0);
    }
  }
  return filled;
}

}  // namespace ts::sim
