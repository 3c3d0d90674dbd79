#pragma once
// MappedFile: one CSV file read through a FileLayout (ingest/mapped/layout.h). Column indices are
// resolved once from the header; each row is split in place and its mapped cells parsed with the
// shared field parsers (ingest/field_parse.h) into an Event — no allocation per row.
//
// Rules, the same as the hand-written SSE reader's (sse_source.h), so a layout of that feed
// yields the same events:
// - symbol: the cell (exactly `digits` digits if set) with prefix/suffix, interned once per run
//   of equal cells; a snapshot's prev_close sets the symbol's prev_close (and so its limits).
// - time: of-day formats add the row's midnight (date column, else the folder date) in the
//   layout's zone; rows going back in time are counted kOutOfOrder and dropped (per symbol for
//   files sorted_by = "symbol", which are read whole and then handed on in time order).
// - seq: the seq column, else the line number.
// - orders: side must be buy/sell; add needs price > 0, cancel/execute price >= 0; size > 0.
// - trades: price > 0, size > 0; aggressor from its code table (none where absent).
// - snapshots: prev_close (if mapped) > 0; empty last/cum_volume/cum_turnover cells are 0; an empty
//   or zero level price is an empty level, else size > 0; bid >= ask is crossed (bid > ask in
//   the call auctions); phase codes not in the table are `unknown`.
// Bad rows are counted in `errors` with file and line and skipped.
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "core/time_zone.h"
#include "ingest/mapped/layout.h"
#include "ingest/source.h"

namespace ts::ingest {
class LineReader;
}

namespace ts::mapped {

// Opens `path` and binds the layout's columns to its header. `folder_midnight_ns` is the
// trading day's midnight (UTC ns) when the day comes from the folder name, else INT64_MIN.
// Errors (kParseError): no header, or a mapped column missing from it — naming the layout,
// the key and the column; kNotFound/kIoError from opening the file.
Result<std::unique_ptr<Source>> open_mapped_file(const Layout& layout, const FileLayout& file, const std::string& path,
                                                 std::shared_ptr<const TimeZone> zone, int64_t folder_midnight_ns,
                                                 SymbolTable& symbols, InputErrors& errors);

// The same over a reader already open (ingest::LineReader::open_memory for bytes in memory).
Result<std::unique_ptr<Source>> open_mapped_file(const Layout& layout, const FileLayout& file,
                                                 std::unique_ptr<ingest::LineReader> lines,
                                                 std::shared_ptr<const TimeZone> zone, int64_t folder_midnight_ns,
                                                 SymbolTable& symbols, InputErrors& errors);

// Midnight of `yyyymmdd` in `zone`, as UTC ns since the epoch.
int64_t local_midnight_ns(const TimeZone& zone, int yyyymmdd);

}  // namespace ts::mapped
