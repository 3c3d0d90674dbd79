#pragma once
// The `sse-l3` source: Shanghai Stock Exchange tick-by-tick orders and trades in a data vendor's
// layout (a folder with SHorders.csv and SHtrans.csv, each may be .csv.gz), see docs/formats.md.
//
// - Orders: MDDate (2023.07.11), MDTime (09:15:00.280, Shanghai time UTC+8), SecurityID
//   ("605580.SH"), OrderType 2 = add → kOrderAdd, 10 = cancel → kOrderCancel, OrderPrice,
//   OrderQty, OrderBSFlag 1 buy / 2 sell, ChannelNo, ApplSeqNum, OrderNO.
// - Trades: MDDate, MDTime, SecurityID, TradePrice, TradeQty, TradeBuyNo, TradeSellNo,
//   TradeBSFlag 1 buy / 2 sell aggressor (0: none, auctions), ChannelNo, ApplSeqNum → kTrade.
// - Orders and trades share each channel's ApplSeqNum: they are merged in that order (the
//   matching engine's), then put in time order, stable (ingest/flow_records.h); seq = ApplSeqNum.
//   The vendor groups rows by security, so both files are read whole (64 bytes a record).
// - Prices: ticks of 0.01 CNY, rounded to the nearest tick (the files carry float noise).
// - The book is rebuilt from the flow (BookSet, order tracking on for SSE): a cancel of an order
//   it never saw is counted kUnknownOrder there, a crossed book in continuous trading kCrossedBook.
// Bad rows are counted with file and line and skipped: kUnknownSymbol (not NNNNNN.SH),
// kMalformedLine (bad OrderType / OrderBSFlag / TradeBSFlag / time), kNotANumber, kBadPrice (add
// or trade at a price <= 0), kBadSize (qty <= 0), kOutOfOrder (repeated ApplSeqNum in a channel,
// time going backwards along a security's sequence).
// Errors from the factory: kNotFound (folder or a file missing), kParseError (header lacks a column).
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

Result<std::unique_ptr<Source>> make_sse_l3_source(const std::string& day_dir, SymbolTable& symbols,
                                                   InputErrors& errors);

namespace ingest {
class LineReader;
}
// The same source over the two files as readers already open (ingest::LineReader::open, or
// open_memory for bytes in memory); `day_name` names the day in the log and describe().
// Errors: kParseError (a header lacks a column).
Result<std::unique_ptr<Source>> make_sse_l3_source_from_readers(std::unique_ptr<ingest::LineReader> orders,
                                                   std::unique_ptr<ingest::LineReader> trades,
                                                   const std::string& day_name, SymbolTable& symbols,
                                                   InputErrors& errors);

}  // namespace ts
