#include "pipeline/market_board.h"

#include <algorithm>

namespace ts {

namespace {
// Word layout of a slot: version, update_ts_ns, publish_ns, last, cum_volume,
// bid_levels | ask_levels << 32, prev_close, phase | local_offset_s << 32, then (price, qty)
// pairs: bids, then asks.
constexpr int kVersion = 0, kUpdateTs = 1, kPublishNs = 2, kLast = 3, kVolume = 4, kLevelCounts = 5,
              kPrevClose = 6, kPhase = 7, kLevels = 8;
}  // namespace

MarketBoard::MarketBoard(size_t capacity, int64_t min_interval_ns)
    : capacity_(capacity), min_interval_ns_(min_interval_ns), slots_(new Slot[capacity]) {}

MarketBoard::~MarketBoard() = default;

void MarketBoard::publish(Slot& s, int64_t now_ns, const BookTop& top) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const uint64_t seq = s.seq.load(kRelaxed);
  s.seq.store(seq + 1, kRelaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const int nb = std::min(top.bid_levels, kBoardLevels), na = std::min(top.ask_levels, kBoardLevels);
  s.words[kVersion].store(s.words[kVersion].load(kRelaxed) + 1, kRelaxed);
  s.words[kUpdateTs].store(top.update_ts_ns, kRelaxed);
  s.words[kPublishNs].store(now_ns, kRelaxed);
  s.words[kLast].store(top.last, kRelaxed);
  s.words[kVolume].store(top.cum_volume, kRelaxed);
  s.words[kLevelCounts].store(int64_t(nb) | (int64_t(na) << 32), kRelaxed);
  s.words[kPrevClose].store(top.prev_close, kRelaxed);
  s.words[kPhase].store(int64_t(uint64_t(top.phase) | (uint64_t(uint32_t(top.local_offset_s)) << 32)), kRelaxed);
  for (int i = 0; i < kBoardLevels; ++i) {
    const Level b = i < nb ? top.bids[i] : Level{};
    const Level a = i < na ? top.asks[i] : Level{};
    s.words[kLevels + 2 * i].store(b.price, kRelaxed);
    s.words[kLevels + 2 * i + 1].store(b.qty, kRelaxed);
    s.words[kLevels + 2 * kBoardLevels + 2 * i].store(a.price, kRelaxed);
    s.words[kLevels + 2 * kBoardLevels + 2 * i + 1].store(a.qty, kRelaxed);
  }
  s.seq.store(seq + 2, std::memory_order_release);
}

bool MarketBoard::read(SymbolId id, QuoteSnapshot* out) const {
  if (id >= capacity_) return false;
  const Slot& s = slots_[id];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  int64_t w[kWords];
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const uint64_t before = s.seq.load(std::memory_order_acquire);
    if (before & 1) continue;
    for (int i = 0; i < kWords; ++i) w[i] = s.words[i].load(kRelaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(kRelaxed) != before) continue;
    if (w[kVersion] == 0) return false;
    out->version = uint64_t(w[kVersion]);
    out->update_ts_ns = w[kUpdateTs];
    out->publish_ns = w[kPublishNs];
    out->last = w[kLast];
    out->cum_volume = w[kVolume];
    out->bid_levels = int(w[kLevelCounts] & 0xffffffff);
    out->ask_levels = int(w[kLevelCounts] >> 32);
    out->prev_close = w[kPrevClose];
    out->phase = static_cast<Phase>(w[kPhase] & 0xff);
    out->local_offset_s = int32_t(uint32_t(uint64_t(w[kPhase]) >> 32));
    for (int i = 0; i < kBoardLevels; ++i) {
      out->bids[i] = Level{w[kLevels + 2 * i], w[kLevels + 2 * i + 1]};
      out->asks[i] = Level{w[kLevels + 2 * kBoardLevels + 2 * i], w[kLevels + 2 * kBoardLevels + 2 * i + 1]};
    }
    return true;
  }
  return false;  // a writer kept the slot busy for 1000 attempts: the caller tries next tick
}

}  // namespace ts
