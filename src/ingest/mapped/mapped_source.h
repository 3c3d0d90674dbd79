#pragma once
// The `mapped` format: a vendor's CSV files read through a layout (ingest/mapped/layout.h).
//
// `path` is a day folder holding the layout's files (<name>.csv.gz or <name>.csv each), or —
// for a layout of one file — that file itself. Files marked `required = false` may be absent
// (the log says which were found). The files are merged in exchange-time order by the layout's
// `merge` (time_then_seq: the SSE rule of merge_source.h; time_then_file: file order).
// The trading date of time-of-day columns comes from each row's date column, else from the
// folder name (…-YYYYMMDD), in the layout's time zone.
//
// Errors: kNotFound (folder or a required file missing), kInvalidArgument (no date where one is
// needed, unknown time zone), kParseError (a mapped column missing from a header: names the key
// and the column).
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/mapped/layout.h"
#include "ingest/source.h"

namespace ts {

Result<std::unique_ptr<Source>> make_mapped_source(const mapped::Layout& layout, const std::string& path,
                                                   SymbolTable& symbols, InputErrors& errors);

}  // namespace ts
