#include "core/symbol_table.h"

#include <cmath>

namespace ts {

Market market_of(std::string_view name) {
  if (name.ends_with(".SH") || name.ends_with(".SS")) return Market::kShanghai;
  if (name.ends_with(".SZ")) return Market::kShenzhen;
  if (name.ends_with(".BJ")) return Market::kBeijing;
  if (!name.empty() && name.find('.') == std::string_view::npos) return Market::kUs;
  return Market::kUnknown;
}

double limit_pct_for(std::string_view name, bool is_st) {
  const Market m = market_of(name);
  if (m == Market::kUs || m == Market::kUnknown) return 0.0;
  if (m == Market::kBeijing) return 0.30;
  // ChiNext and STAR keep ±20 % for ST names too (ChiNext since the 2020-08-24 reform); the ±5 %
  // ST band is a main-board rule.
  if (name.starts_with("300") || name.starts_with("301") || name.starts_with("688") ||
      name.starts_with("689")) {
    return 0.20;
  }
  return is_st ? 0.05 : 0.10;
}

Price limit_up_price(Price prev_close, double pct) {
  if (prev_close <= 0 || pct <= 0) return 0;
  return static_cast<Price>(std::floor(double(prev_close) * (1.0 + pct) + 0.5 + 1e-9));
}

Price limit_down_price(Price prev_close, double pct) {
  if (prev_close <= 0 || pct <= 0) return 0;
  return static_cast<Price>(std::floor(double(prev_close) * (1.0 - pct) + 0.5 + 1e-9));
}

SymbolTable::SymbolTable() = default;
SymbolTable::~SymbolTable() = default;

SymbolId SymbolTable::intern(std::string_view name) {
  auto it = ids_.find(std::string(name));
  if (it != ids_.end()) return it->second;
  const size_t n = size_.load(std::memory_order_relaxed);
  if (n >= kMaxSymbols) return kInvalidSymbol;
  const auto id = static_cast<SymbolId>(n);
  auto& chunk = chunks_[id >> kChunkBits];
  if (!chunk) chunk = std::make_unique<RefData[]>(size_t(1) << kChunkBits);
  RefData& r = chunk[id & kChunkMask];
  r.name = std::string(name);
  r.market = market_of(name);
  r.limit_pct = limit_pct_for(name, false);
  r.lot_size = r.market == Market::kUs ? 1 : 100;
  if (resolver_ != nullptr) resolver_->fill(name, r);
  ids_.emplace(r.name, id);
  size_.store(n + 1, std::memory_order_release);
  return id;
}

std::optional<SymbolId> SymbolTable::find(std::string_view name) const {
  auto it = ids_.find(std::string(name));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void SymbolTable::update_limits(RefData& r) {
  r.limit_up = limit_up_price(r.prev_close, r.limit_pct);
  r.limit_down = limit_down_price(r.prev_close, r.limit_pct);
}

void SymbolTable::set_prev_close(SymbolId id, Price prev_close) {
  RefData& r = mutable_ref(id);
  r.prev_close = prev_close;
  update_limits(r);
}

void SymbolTable::set_st(SymbolId id, bool is_st) {
  RefData& r = mutable_ref(id);
  r.is_st = is_st;
  r.limit_pct = limit_pct_for(r.name, is_st);
  update_limits(r);
}

}  // namespace ts
