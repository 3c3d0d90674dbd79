#pragma once
// open_source(): the one place that maps a format name to a file source.
//   "lobster" — LOBSTER message files (make_lobster_source), one per path;
//   "sse-l2"  — SSE Level-2 day folders (make_sse_source), one per path;
//   "sse-l3"  — SSE tick-by-tick vendor day folders, SHorders + SHtrans (make_sse_l3_source);
//   "szse-l2" — SZSE ten-level snapshot files or their folders (make_szse_snapshot_source);
//   "szse-trades" — SZSE tick-by-tick trade streams with cancels (make_szse_trade_source);
//   "csv"     — ticksentry normalized csv files (make_csv_source), one per path.
// Several paths are merged into one stream in exchange-time order (ties: the earlier path
// first). Errors: kInvalidArgument for an unknown format (the message lists the known ones)
// or no paths; otherwise the first failing path's error, with its context.
#include <memory>
#include <string>
#include <vector>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

// The formats open_source() knows, for help texts: {"lobster", "sse-l2", ..., "csv"}.
const std::vector<std::string>& source_formats();
// source_formats() joined with `sep` ("lobster | sse-l2 | ...").
std::string join_formats(const std::string& sep);

Result<std::unique_ptr<Source>> open_source(const std::string& format, const std::vector<std::string>& paths,
                                            SymbolTable& symbols, InputErrors& errors);

}  // namespace ts
