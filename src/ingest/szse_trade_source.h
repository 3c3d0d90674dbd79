#pragma once
// The `szse-trades` source: an SZSE tick-by-tick trade stream in a vendor's CSV layout
// (tradeData.csv or tradeData.csv.gz, or its folder), see docs/formats.md.
//
// - Columns by name: ChannelNo, ApplSeqNum, BidApplSeqNum, OfferApplSeqNum, SecurityID
//   (000001), TradePrice, TradeQty, ExecType, TradeTime (2023.02.01T09:25:00.320, UTC+8),
//   TradeBSFlag, Market (SZ / SH). Symbol = SecurityID + "." + Market.
// - SZSE rows: ExecType F (fill) → kTrade (buy/sell order = Bid/OfferApplSeqNum; aggressor = the
//   later order's side in continuous trading, none before 09:30 and from 14:57: call auctions).
//   ExecType 4 (cancel: price 0, exactly one of Bid/OfferApplSeqNum set) is order flow: without
//   the order file there is no order book to apply it to, so cancels are counted per symbol and
//   side (cancels() below, logged at the end), not emitted.
// - SSE rows in the same file (Market SH, ExecType empty) → kTrade, aggressor from TradeBSFlag
//   B / S (N: none).
// - seq = ApplSeqNum; the file holds one market's rows after the other: records are ordered by
//   channel and ApplSeqNum, then merged by time (ingest/flow_records.h).
// - The source says at start what it found (which file, no order file: trades alone).
// Bad rows are counted with file and line and skipped: kUnknownSymbol, kMalformedLine (bad
// ExecType, TradeBSFlag, time), kNotANumber, kBadPrice (fill price <= 0, cancel price != 0),
// kBadSize (qty <= 0), kUnknownOrder (a fill without both orders, a cancel naming none or both),
// kOutOfOrder (repeated ApplSeqNum, time going backwards along a security's sequence).
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

// What a file held, for callers that want the numbers (tests, tools).
struct SzseTradeCounts {
  uint64_t trades = 0;   // kTrade events emitted
  uint64_t cancels = 0;  // ExecType 4 rows (counted, not emitted)
  Qty cancel_qty = 0;
};

Result<std::unique_ptr<Source>> make_szse_trade_source(const std::string& path, SymbolTable& symbols,
                                                       InputErrors& errors, SzseTradeCounts* counts = nullptr);

namespace ingest {
class LineReader;
}
// The same source over a reader already open (ingest::LineReader::open_memory for bytes in
// memory). Errors: kParseError (header lacks a column).
Result<std::unique_ptr<Source>> make_szse_trade_source_from_reader(std::unique_ptr<ingest::LineReader> lines, SymbolTable& symbols,
                                                       InputErrors& errors, SzseTradeCounts* counts = nullptr);

}  // namespace ts
