#pragma once
// The `lobster` source: NASDAQ order flow from a LOBSTER message file
// (TICKER_YYYY-MM-DD_start_end_message_N.csv[.gz]), see docs/formats.md.
//
// - Symbol: the file name's prefix before the first '_' ("GOOG"), interned in `symbols`.
// - exch_ts_ns: the date in the file name + the message time, New York time (UTC-4 in
//   daylight-saving time, UTC-5 otherwise, US rules since 2007).
// - Prices: ticks of $0.01 (the file's dollars × 10000 / 100, half up).
// - First event: one kSnapshot, the visible book just BEFORE message 1 (orderbook row 1 with
//   message 1's effect undone), stamped with message 1's time and seq 0, so an L3 book can be
//   seeded with the orders resting before 09:30 that the messages never mention. Then one
//   event per message, seq = line number:
//     1 → kOrderAdd; 2 → kOrderCancel (qty = shares cancelled); 3 → kOrderCancel (full delete,
//     qty = size); 4 → kOrderExecute (side = resting order's side); 5 → kTrade (hidden
//     execution, aggressor = opposite of the direction column); 6 → kTrade (cross, aggressor
//     none); 7 → kStatus (price -1 halt → kHalted, 0 quoting resumes → kPreOpen,
//     1 trading resumes → kContinuous).
// - Resync snapshots: LOBSTER message files only describe activity within the file's depth, so
//   a level that moves up into view from below (or anything else a message does not explain)
//   changes the vendor's book without a message. The source reads the orderbook file beside the
//   messages, row by row, and after each message compares the book the message implies (the
//   previous row + its effect at its price/side, within the file's depth) with the vendor's
//   row for it, at all levels. Where they differ, a kSnapshot with resync = 1 built from that
//   row follows right after the message's event (same exch_ts_ns and seq; phase kUnknown, so it
//   does not change the phase; last/cum totals 0). The opening snapshot also has resync = 1.
//   A message whose orderbook row is bad is not checked (the row is reported); an orderbook
//   file that ends before the messages is reported once (kTruncatedFile).
//   GOOG 2012-06-21: 44,451 resyncs for 147,916 messages (see docs/formats.md for all three).
//   Cost: the orderbook row is read and parsed per message; no allocation per row.
// - Bad lines are reported to `errors` and skipped (see docs/formats.md for each rule).
// Errors from the factory: kNotFound (message file, or the orderbook file beside it, missing),
// kInvalidArgument (file name without a LOBSTER date).
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

namespace ingest {
class LineReader;
}

Result<std::unique_ptr<Source>> make_lobster_source(const std::string& message_path, SymbolTable& symbols,
                                                    InputErrors& errors);

// The same source over readers already open (ingest::LineReader::open, or open_memory for bytes
// in memory): the message file's name (messages->path()) gives the symbol and the date, as
// above; `orderbook` is the orderbook file that belongs to it. Errors: kInvalidArgument (a
// message file name without a LOBSTER date).
Result<std::unique_ptr<Source>> make_lobster_source_from_readers(std::unique_ptr<ingest::LineReader> messages,
                                                    std::unique_ptr<ingest::LineReader> orderbook,
                                                    SymbolTable& symbols, InputErrors& errors);

// The order-book file that belongs to a message file: the last "_message_" in the file name
// becomes "_orderbook_" (same directory, same ".csv"/".csv.gz" ending).
std::string lobster_orderbook_path(const std::string& message_path);

// UTC offset in hours of New York on a civil date (-4 in daylight-saving time, else -5).
int new_york_utc_offset_hours(int year, unsigned month, unsigned day);

}  // namespace ts
