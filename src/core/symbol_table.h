#pragma once
// Symbol table: dense ids (0, 1, 2, ...) for names like "600519.SH", "000001.SZ", "AAPL",
// and the reference data each symbol carries.
// Threading: intern()/set_ref() happen at start-up or on the source thread before the symbol's
// first event is published; lookups by id are then read-only and safe from any thread
// (storage is a deque: references stay valid as symbols are added).
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/event.h"

namespace ts {

enum class Market : uint8_t { kUnknown = 0, kShanghai, kShenzhen, kBeijing, kUs };

struct RefData {
  std::string name;            // "600519.SH"
  Market market = Market::kUnknown;
  double tick_size = 0.01;     // currency per tick
  Qty lot_size = 100;          // shares per board lot
  Price prev_close = 0;        // ticks; 0 = unknown
  double limit_pct = 0;        // price-limit band as a fraction (0.10 = ±10%); 0 = no limits
  bool is_st = false;          // A-share special treatment (±5%)
  Price limit_up = 0;          // ticks; 0 = none (derived from prev_close and limit_pct)
  Price limit_down = 0;        // ticks; 0 = none
};

// The A-share band for a symbol: ±5% for ST, ±20% for ChiNext (300xxx/301xxx) and STAR
// (688xxx/689xxx), ±30% Beijing, ±10% otherwise; 0 (none) outside China.
double limit_pct_for(std::string_view name, bool is_st);
Market market_of(std::string_view name);
// Limit prices in ticks, rounded as the exchanges do (half up to the tick).
Price limit_up_price(Price prev_close, double pct);
Price limit_down_price(Price prev_close, double pct);

class SymbolTable {
 public:
  // Returns the id of `name`, adding it with default reference data if new.
  SymbolId intern(std::string_view name);
  // The id of `name`, or nothing if unknown.
  std::optional<SymbolId> find(std::string_view name) const;
  // Sets prev_close (ticks) and recomputes the limit band.
  void set_prev_close(SymbolId id, Price prev_close);
  void set_st(SymbolId id, bool is_st);
  const RefData& ref(SymbolId id) const { return refs_[id]; }
  RefData& mutable_ref(SymbolId id) { return refs_[id]; }
  const std::string& name(SymbolId id) const { return refs_[id].name; }
  size_t size() const { return refs_.size(); }

 private:
  void update_limits(RefData& r);
  std::deque<RefData> refs_;
  std::unordered_map<std::string, SymbolId> ids_;
};

}  // namespace ts
