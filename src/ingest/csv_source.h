#pragma once
// The `csv` source: reads ticksentry's normalized CSV (docs/formats.md), as written by
// CsvWriter, plain or gzip-compressed. Symbols are interned by name as they appear; a
// snapshot's prev_close (when > 0) becomes the symbol's prev_close.
// Bad lines are reported to `errors` and skipped (rules in docs/formats.md); records whose
// exch_ts_ns goes backwards within the file are reported as kOutOfOrder and skipped.
// Errors from the factory: kNotFound when the file does not exist.
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"

namespace ts {

Result<std::unique_ptr<Source>> make_csv_source(const std::string& path, SymbolTable& symbols, InputErrors& errors);

namespace ingest {
class LineReader;
}
// The same source over a reader already open (ingest::LineReader::open_memory for bytes in
// memory); reports name the reader's file.
std::unique_ptr<Source> make_csv_source_from_reader(std::unique_ptr<ingest::LineReader> lines, SymbolTable& symbols,
                                        InputErrors& errors);

}  // namespace ts
