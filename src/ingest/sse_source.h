#pragma once
// The `sse-l2` source: one day of Shanghai Stock Exchange Level-2 data in a folder holding
// snapshot.csv, entrust.csv and trade.csv (each may be .csv.gz), see docs/formats.md. Any subset
// of the three runs (snapshots alone, snapshots + trades, ...); the source logs at start which
// files it found and which it did not.
//
// - The three files are merged in exchange-time order; at equal times, orders and trades
//   interleave by the exchange's BizIndex (their seq), and snapshots follow the flow of their
//   instant (MergeOrder::kTimeThenSeq).
// - Symbol: SecurityID + ".SH" ("600519" → "600519.SH"), interned in `symbols`; a snapshot's
//   PreCloPrice sets the symbol's prev_close (and so its price limits).
// - exch_ts_ns: the folder name's date (…-YYYYMMDD) or SseOptions::date_yyyymmdd, Shanghai
//   time (UTC+8), plus OrderTime / TradTime / UpdateTime.
// - Prices: ticks of 0.01 CNY, rounded to the nearest tick (the files carry float noise).
// - seq: BizIndex for orders and trades, SeqNo for snapshots.
// - Entrust A → kOrderAdd, D → kOrderCancel; trade → kTrade (aggressor from TradeBSFlag B/S,
//   N → none); snapshot → kSnapshot (10 levels, last, prev_close, cum volume and turnover, phase
//   from InstruStatus).
// Bad rows are reported to `errors` and skipped. Errors from the factory: kNotFound (folder
// missing or holding none of the three files), kInvalidArgument (no date), kParseError (header
// lacks a column).
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

struct SseOptions {
  // Trading date as YYYYMMDD; 0 (default) = take it from the folder name's "-YYYYMMDD" suffix.
  int date_yyyymmdd = 0;
};

Result<std::unique_ptr<Source>> make_sse_source(const std::string& day_dir, SymbolTable& symbols,
                                                InputErrors& errors, SseOptions options = {});

namespace ingest {
class LineReader;
}
// The day's three files as readers already open (ingest::LineReader::open, or open_memory for
// bytes in memory); a null reader is a file the day lacks.
struct SseDayReaders {
  std::unique_ptr<ingest::LineReader> snapshot;
  std::unique_ptr<ingest::LineReader> entrust;
  std::unique_ptr<ingest::LineReader> trade;
};

// The same source over readers: `date_yyyymmdd` is the trading date, `day_name` names the day
// in the log and in describe() (make_sse_source above passes the folder). Errors as above:
// kInvalidArgument (not a date), kNotFound (all three readers null), kParseError (a header).
Result<std::unique_ptr<Source>> make_sse_source_from_readers(SseDayReaders files, int date_yyyymmdd, const std::string& day_name,
                                                SymbolTable& symbols, InputErrors& errors);

// SSE InstruStatus → Phase: START → kPreOpen, OCALL/ICALL/FCALL → kOpeningAuction,
// TRADE → kContinuous, BREAK → kBreak, CCALL → kClosingAuction, CLOSE/ENDTR/POSMT… → kClosed,
// SUSP/HALT → kHalted, anything else → kUnknown.
Phase sse_phase(std::string_view instru_status);

}  // namespace ts
