#pragma once
// Symbol table: dense ids (0, 1, 2, ...) for names like "600519.SH", "000001.SZ", "AAPL",
// and the reference data each symbol carries.
// Threading: intern() and set_prev_close()/set_st() run on one thread (start-up or the source
// thread), before the symbol's first event is published through a ring; ref()/name() of an id
// received through a ring are then safe from any thread, also while intern() adds symbols:
// storage is fixed chunks behind a fixed pointer table, so nothing a reader touches moves.
// (A day's prev_close re-set by a feed while shards read it is an aligned 8-byte store; feeds
// set it once, on the symbol's first snapshot.)
#include <cstdint>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/decimal.h"
#include "core/event.h"

namespace ts {

struct Instrument;

enum class Market : uint8_t { kUnknown = 0, kShanghai, kShenzhen, kBeijing, kUs };

struct RefData {
  std::string name;            // "600519.SH"
  Market market = Market::kUnknown;
  double tick_size = 0.01;     // currency per tick
  // The same tick and the size increment as exact decimals (core/instrument.h), for exact
  // notionals: ticks × tick × increments × size_increment. Set by fill_ref_data().
  Decimal tick{1, 2};
  Decimal size_increment{1, 0};  // instrument units (shares, coins) per size unit
  Qty lot_size = 100;          // shares per board lot
  Price prev_close = 0;        // ticks; 0 = unknown
  double limit_pct = 0;        // price-limit band as a fraction (0.10 = ±10%); 0 = no limits
  bool is_st = false;          // A-share special treatment (±5%)
  Price limit_up = 0;          // ticks; 0 = none (derived from prev_close and limit_pct)
  Price limit_down = 0;        // ticks; 0 = none
  // The instrument master's entry (core/instrument_table.h) when the symbol was interned through
  // one (intern_instrument / set_instruments); null otherwise. Owned by the InstrumentTable.
  const Instrument* instrument = nullptr;
};

// The A-share band for a symbol: ±20% for ChiNext (300xxx/301xxx) and STAR (688xxx/689xxx),
// ST or not; ±30% Beijing; ±5% for ST and ±10% otherwise on the main boards; 0 (none) outside
// China.
double limit_pct_for(std::string_view name, bool is_st);
Market market_of(std::string_view name);
// Limit prices in ticks, rounded as the exchanges do (half up to the tick).
Price limit_up_price(Price prev_close, double pct);
Price limit_down_price(Price prev_close, double pct);

// Fills a new symbol's RefData from reference data, e.g. the instrument master
// (InstrumentRefResolver, core/instrument_ref.h). Called by SymbolTable::intern() for each new
// name, on the interning thread, after the name-based defaults are set.
class RefDataResolver {
 public:
  virtual ~RefDataResolver() = default;
  virtual void fill(std::string_view name, RefData& r) = 0;
};

class SymbolTable {
 public:
  // Every symbol interned from now on gets its RefData from `resolver` (null: the defaults).
  // Before the first intern(); `resolver` must outlive the table's interning.
  void set_resolver(RefDataResolver* resolver) { resolver_ = resolver; }
  // Returns the id of `name`, adding it with default reference data if new; kInvalidSymbol
  // once kMaxSymbols symbols exist.
  SymbolId intern(std::string_view name);
  // The id of `name`, or nothing if unknown.
  std::optional<SymbolId> find(std::string_view name) const;
  // Sets prev_close (ticks) and recomputes the limit band.
  void set_prev_close(SymbolId id, Price prev_close);
  void set_st(SymbolId id, bool is_st);
  static constexpr uint32_t kChunkBits = 10;                  // 1,024 symbols per chunk
  static constexpr uint32_t kMaxChunks = 1024;                // up to 1,048,576 symbols
  static constexpr size_t kMaxSymbols = size_t(kMaxChunks) << kChunkBits;

  SymbolTable();
  ~SymbolTable();
  SymbolTable(const SymbolTable&) = delete;
  SymbolTable& operator=(const SymbolTable&) = delete;

  const RefData& ref(SymbolId id) const { return chunks_[id >> kChunkBits][id & kChunkMask]; }
  RefData& mutable_ref(SymbolId id) { return chunks_[id >> kChunkBits][id & kChunkMask]; }
  const std::string& name(SymbolId id) const { return ref(id).name; }
  size_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  void update_limits(RefData& r);
  static constexpr uint32_t kChunkMask = (1u << kChunkBits) - 1;
  std::unique_ptr<RefData[]> chunks_[kMaxChunks];
  std::atomic<size_t> size_{0};
  std::unordered_map<std::string, SymbolId> ids_;   // intern()/find() thread only
  RefDataResolver* resolver_ = nullptr;
};

}  // namespace ts
