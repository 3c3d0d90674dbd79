#pragma once
// open_source(): the one place that maps a format name to a file source.
//   "lobster" — LOBSTER message files (make_lobster_source), one per path;
//   "sse-l2"  — SSE Level-2 day folders (make_sse_source), one per path;
//   "sse-l3"  — SSE tick-by-tick vendor day folders, SHorders + SHtrans (make_sse_l3_source);
//   "szse-l2" — SZSE ten-level snapshot files or their folders (make_szse_snapshot_source);
//   "szse-trades" — SZSE tick-by-tick trade streams with cancels (make_szse_trade_source);
//   "csv"     — ticksentry normalized csv files (make_csv_source), one per path;
//   "mapped"  — vendor CSV files read through `layout` (a TOML file or a shipped layout's name,
//               ingest/mapped/mapped_source.h), one day folder or file per path.
//   "binance-json", "coinbase-json", "kraken-json", "bitstamp-json", "bitstamp-l3" — crypto venue
//             captures (ingest/crypto/crypto_source.h): ALL paths form one stream (a websocket
//             capture and its REST snapshots); "crypto" detects the venue from the first file.
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

// The formats open_source() knows, for help texts: {"lobster", "sse-l2", "csv", "mapped", "crypto", ...}.
const std::vector<std::string>& source_formats();
// source_formats() joined with `sep` ("lobster | sse-l2 | ...").
std::string join_formats(const std::string& sep);

// `layout`: only for "mapped" (required there); a bad layout is kInvalidArgument naming its key.
Result<std::unique_ptr<Source>> open_source(const std::string& format, const std::vector<std::string>& paths,
                                            SymbolTable& symbols, InputErrors& errors, const std::string& layout = {});

}  // namespace ts
