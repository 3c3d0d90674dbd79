#pragma once
// The `szse-l2` source: Shenzhen Stock Exchange ten-level snapshots in a vendor's CSV layout
// (tick.csv or tick.csv.gz, or that file's folder), see docs/formats.md.
//
// - Columns by name: MDDate (2022.06.01), MDTime (09:15:03.000, Shenzhen time UTC+8),
//   SecurityID ("000400.SZ"), PreClosePx, LastPx, TotalVolumeTrade and TotalValueTrade
//   (cumulative), BuyPrice1..10 / BuyOrderQty1..10, SellPrice1..10 / SellOrderQty1..10,
//   TradingPhaseCode, MaxPx / MinPx. Other columns (BuyNumOrders.., OpenPx, ...) are ignored.
// - Every row → kSnapshot (seq = line number). PreClosePx sets the symbol's prev_close, MaxPx /
//   MinPx its limit_up / limit_down for the day (they replace the band derived from prev_close).
//   Trade volume comes from the TotalVolumeTrade deltas (the feature engine takes snapshot volume
//   deltas where a symbol has no prints).
// - The vendor groups rows by security; the file is read whole (20,980 rows ≈ 8 MB of events)
//   and replayed in time order (stable: equal times keep file order).
// Bad rows are counted with file and line and skipped: kUnknownSymbol (not NNNNNN.SZ),
// kMalformedLine / kNotANumber (bad field), kBadPrice (PreClosePx <= 0, negative price),
// kBadSize (negative qty or volume, TotalVolumeTrade going down), kCrossedBook (bid >= ask
// outside a call auction, bid > ask in one), kOutOfOrder (a security's time going backwards).
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

Result<std::unique_ptr<Source>> make_szse_snapshot_source(const std::string& path, SymbolTable& symbols,
                                                          InputErrors& errors);

namespace ingest {
class LineReader;
}
// The same source over a reader already open (ingest::LineReader::open_memory for bytes in
// memory): reads the header and every row. Errors: kParseError (header lacks a column).
Result<std::unique_ptr<Source>> make_szse_snapshot_source_from_reader(std::unique_ptr<ingest::LineReader> lines,
                                                          SymbolTable& symbols, InputErrors& errors);

// TradingPhaseCode → Phase. The vendor's digits: 0 pre-open, 1 opening call, 2 the 09:25-09:30
// pause (kBreak), 3 continuous, 4 lunch break, 5 closing call, 6 closed, 7 halted; and SZSE's own
// codes by their first letter: S start, O opening call, B break, T continuous, C closing call,
// E closed, A after-hours (closed), H / V halted. Anything else → kUnknown.
Phase szse_phase(std::string_view code);

}  // namespace ts
