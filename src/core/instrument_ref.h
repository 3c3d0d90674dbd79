#pragma once
// How the instrument master feeds the SymbolTable (core/symbol_table.h), whose RefData the
// sources, book and rules read today. A source that knows its instruments interns a symbol with
// intern_instrument() instead of SymbolTable::intern(): the RefData then carries the
// instrument's market, tick size, lot and exact limit band instead of the name-based defaults.
// Nothing calls it yet: wiring the sources to the instrument master is the next step of
// issue 22 (the Instrument itself, with its Decimal units, stays in the InstrumentTable).
// Threading: as SymbolTable::intern(): one thread, before the symbol's first event is
// published through a ring.
#include "core/instrument.h"
#include "core/instrument_table.h"
#include "core/status.h"
#include "core/symbol_table.h"

namespace ts {

// Copies what RefData carries of an instrument (market, tick size as double and exact, size
// increment, lot size in size increments, limit band, ST flag) and recomputes the limit prices from r.prev_close with
// limit_up_ticks()/limit_down_ticks() (exact integer rounding). Crypto has no RefData market:
// Market::kUnknown.
void fill_ref_data(const Instrument& in, RefData& r);

// resolve(symbol) in `instruments`, intern it in `symbols` and fill its RefData. Errors: the
// symbol's unknown_symbol (counted by the InstrumentTable; nothing is interned), or kOutOfRange
// when the SymbolTable is full.
Result<SymbolId> intern_instrument(SymbolTable& symbols, InstrumentTable& instruments,
                                   std::string_view symbol);

}  // namespace ts
