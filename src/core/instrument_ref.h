#pragma once
// How the instrument master feeds the SymbolTable (core/symbol_table.h), whose RefData the
// sources, book and rules read today. A source that knows its instruments interns a symbol with
// intern_instrument() instead of SymbolTable::intern(): the RefData then carries the
// instrument's market, tick size, lot and exact limit band instead of the name-based defaults.
// Sources intern through SymbolTable::intern(); a run attaches an InstrumentRefResolver to its
// SymbolTable (SymbolTable::set_resolver) so that every symbol a source interns is resolved here
// (the Instrument itself, with its Decimal units, stays in the InstrumentTable).
// Threading: as SymbolTable::intern(): one thread, before the symbol's first event is
// published through a ring.
#include <string>
#include <vector>

#include "core/instrument.h"
#include "core/instrument_table.h"
#include "core/status.h"
#include "core/symbol_table.h"

namespace ts {

// Copies what RefData carries of an instrument (market, tick size as double and exact, size
// increment, lot size in size increments, limit band, ST flag; the previous close when the
// reference file gives one and r.prev_close is still unknown) and recomputes the limit prices from r.prev_close with
// limit_up_ticks()/limit_down_ticks() (exact integer rounding). Crypto has no RefData market:
// Market::kUnknown.
void fill_ref_data(const Instrument& in, RefData& r);

// One trading lot (trading_lot_units(), core/instrument.h) in the size increments the symbol's
// events carry (r.size_increment, which a crypto decoder may have refined from the venue's
// digits), at a price of `price_ticks` ticks (r.tick). Without an instrument (r.instrument null):
// r.lot_size. Shares: the board lot (100 for A-shares, 1 for US); BTC at $60,000 with a $5
// minimum order: 0.0000833 BTC = 8.33 increments of 0.00001. Never below one increment.
double lot_increments(const RefData& r, double price_ticks);

// resolve(symbol) in `instruments`, intern it in `symbols` and fill its RefData. Errors: the
// symbol's unknown_symbol (counted by the InstrumentTable; nothing is interned), or kOutOfRange
// when the SymbolTable is full.
Result<SymbolId> intern_instrument(SymbolTable& symbols, InstrumentTable& instruments,
                                   std::string_view symbol);

// The instrument master as the SymbolTable's resolver: a new symbol gets its instrument's
// RefData (fill_ref_data). A symbol no rule knows and no reference row names is an
// unknown_symbol: counted (unknown_symbols(), and by the InstrumentTable), its detail kept
// (the first kMaxKept), and it keeps the name-based defaults, so its events still run (phases
// from the feed only). `table` must outlive the resolver's use.
class InstrumentRefResolver : public RefDataResolver {
 public:
  static constexpr size_t kMaxKept = 20;
  explicit InstrumentRefResolver(InstrumentTable& table) : table_(table) {}
  void fill(std::string_view name, RefData& r) override;
  uint64_t unknown_symbols() const { return unknown_; }
  // "unknown_symbol: \"AAPL\": ..." for the first kMaxKept unknown symbols.
  const std::vector<std::string>& unknown_details() const { return details_; }

 private:
  InstrumentTable& table_;
  uint64_t unknown_ = 0;
  std::vector<std::string> details_;
};

}  // namespace ts
