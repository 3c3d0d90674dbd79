#pragma once
// InstrumentTable: the instrument master. Symbols resolve to the defaults their names imply
// (core/instrument.h), overridden per symbol by an optional reference CSV (docs/instruments.md):
//
//   symbol,board,currency,tick_size,size_increment,lot_size,limit_pct,st,calendar,time_zone,
//   min_notional,prev_close,name
//   600000.SH,,,,,,,1,,                     ← an ST stock: the code alone cannot say so
//   510300.SH,sse_main,,0.001,,,10,,,       ← an ETF no symbol rule knows
//
// Only `symbol` is required; columns may come in any order; an empty cell keeps the default.
// Every bad row is counted (InputErrors) and named by file:line; the rest are read. A file
// with no valid row is an error.
// How instruments feed the SymbolTable: core/instrument_ref.h.
// Threading: like SymbolTable::intern(), load_csv() and resolve() run on one thread (start-up or
// the source thread); a `const Instrument*` returned stays valid and unchanged for the table's
// lifetime (a later file's row for the same symbol is a new object: resolve() again to see it),
// so it may be handed to other threads.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/input_errors.h"
#include "core/instrument.h"
#include "core/load_report.h"
#include "core/status.h"

namespace ts {

class InstrumentTable {
 public:
  explicit InstrumentTable(InstrumentDefaults defaults = {});

  // Reads a reference CSV; later files override earlier ones symbol by symbol. Bad rows are
  // reported to `errors` ("file:line: kind: detail") and listed in the report. Errors (nothing
  // loaded): the file cannot be read, it has no header, the header names an unknown column or
  // lacks `symbol`, or no row is valid.
  Result<LoadReport> load_csv(const std::string& path, InputErrors& errors);
  // The same from text already in memory; `name` stands for the file in messages.
  Result<LoadReport> load_csv_text(std::string_view text, const std::string& name,
                                             InputErrors& errors);

  // The instrument of `symbol`: the reference row if the file had one, else the symbol's
  // defaults. An error (kNotFound, "unknown_symbol: ...") when neither exists; each such call
  // adds one to unknown_symbols().
  Result<const Instrument*> resolve(std::string_view symbol);
  uint64_t unknown_symbols() const { return unknown_symbols_; }
  size_t reference_rows() const { return reference_.size(); }
  const InstrumentDefaults& defaults() const { return defaults_; }

 private:
  void adopt(std::unordered_map<std::string, std::unique_ptr<Instrument>> rows);
  InstrumentDefaults defaults_;
  // Node-based maps: the Instrument objects never move once inserted.
  std::unordered_map<std::string, std::unique_ptr<Instrument>> reference_;
  std::unordered_map<std::string, std::unique_ptr<Instrument>> derived_;
  std::vector<std::unique_ptr<Instrument>> retired_;  // replaced by a later file, still pointed to
  uint64_t unknown_symbols_ = 0;
};

}  // namespace ts
