#pragma once
// Helpers shared by the exchange-layout readers (sse-l2, sse-l3, szse-l2, szse-trades), whose
// files are vendor CSVs with a header line: column positions by name, the row loop with its
// bad-row reports, and the vendors' date and time spellings (China, UTC+8).
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/csv_split.h"
#include "ingest/decimal_ticks.h"
#include "ingest/field_parse.h"
#include "ingest/line_reader.h"

namespace ts::ingest {

// A header's layout: cols[i] is the field index of the i-th name asked for.
struct HeaderColumns {
  size_t ncols = 0;
  std::vector<size_t> cols;
  bool empty_file = false;  // the file had no byte at all (only with empty_ok)
};

// Reads the header line of `lines` and finds each of `names` in it. kParseError naming the file
// and the first missing column (or saying its gzip stream is cut off). A file with no byte at
// all is an error too, unless `empty_ok`: then it gives HeaderColumns{.empty_file = true}.
Result<HeaderColumns> read_header_columns(LineReader& lines, std::span<const std::string_view> names,
                                          bool empty_ok = false);

// Calls decode(line, fields) for every row after the header that is text and has the header's
// field count; reports the others (kBinaryGarbage, kWrongColumnCount) with file and line, and
// an empty file (kEmptyFile) at the end. `fields` holds the row's fields by header index.
// Rows are split by split_fields_wide (csv_split.h: split_fields' results, 32 bytes a step).
template <typename Decode>
void for_each_row(LineReader& lines, InputErrors& errors, size_t ncols, Decode&& decode) {
  std::vector<std::string_view> fields(ncols + 1);
  Line line;
  while (lines.next(line)) {
    if (line.has_garbage) {
      errors.report(InputError::kBinaryGarbage, lines.file_name(), line.number, "control bytes in a text row");
      continue;
    }
    if (split_fields_wide(line.text, fields.data(), fields.size()) != ncols) {
      report_line_error(errors, lines, line, InputError::kWrongColumnCount,
                        "expected " + std::to_string(ncols) + " columns");
      continue;
    }
    decode(line, std::span<const std::string_view>(fields.data(), ncols));
  }
  report_if_empty(errors, lines, 1);
}

// "2023.02.01", "2023-02-01" or "20230201" → y, m, d (checked: year 1900..kMaxYear, month 1..12,
// day 1..31).
constexpr int64_t kMaxYear = 2261;  // the last whole year of int64 ns since the epoch
bool parse_ymd(std::string_view s, int& y, unsigned& m, unsigned& d);

// Dates → ns of their midnight in China (UTC+8), remembering the last one (a file holds one or
// two dates, so this is a compare per row).
class ChinaMidnight {
 public:
  // false if `date` is not a date.
  bool get(std::string_view date, int64_t& midnight_ns);

 private:
  char last_[16] = {};
  size_t last_len_ = 0;
  int64_t last_ns_ = 0;
};

// One book level from its price and size fields (prices in currency, converted by `ticks`): an
// empty or 0 price is an empty level (auction rows, unused levels); otherwise price > 0 and
// size > 0. A bad level returns false with the kind and detail to report.
inline bool parse_level(std::string_view ps, std::string_view qs, const DecimalTicks& ticks, Level& out,
                        InputError& kind, const char*& detail) {
  auto bad = [&](InputError k, const char* d) {
    kind = k;
    detail = d;
    return false;
  };
  out = Level{};
  if (ps.empty()) return true;
  if (ps.size() == 1 && ps[0] == '0') return true;  // the common empty level (SZSE writes 0)
  Price px = 0;
  int64_t qty = 0;
  FieldError e = ticks.parse(ps, px);
  if (e != FieldError::kOk) return bad(input_error_for(e), "bad level price");
  if (px < 0) return bad(InputError::kBadPrice, "negative level price");
  if (px == 0) return true;
  if ((e = parse_i64(qs, qty)) != FieldError::kOk) return bad(input_error_for(e), "bad level size");
  if (qty <= 0) return bad(InputError::kBadSize, "level size <= 0 at a price");
  out = Level{px, qty};
  return true;
}

// What the row decoders of the vendor layouts share: the current row's fields by header position,
// bad-row reports with file and line, the China dates, and symbols interned once per run of rows.
class RowDecoder {
 public:
  RowDecoder(SymbolTable& symbols, InputErrors& errors) : symbols_(symbols), errors_(errors) {}

 protected:
  // Rows of `lines` with header `h` follow; the caller sets fields_ per row.
  void start_file(LineReader& lines, const HeaderColumns& h) {
    lines_ = &lines;
    h_ = &h;
  }
  // Field `c` of the current row, `c` indexing the names asked of read_header_columns().
  std::string_view field(size_t c) const { return fields_[h_->cols[c]]; }
  bool fail(const Line& line, InputError kind, std::string_view detail) {
    report_line_error(errors_, *lines_, line, kind, detail);
    return false;
  }
  bool fail(const Line& line, FieldError e, std::string_view what) { return fail(line, input_error_for(e), what); }
  // The id of `name` (already checked by the caller); kUnknownSymbol once the table is full.
  bool intern(const Line& line, std::string_view name, SymbolId& id);
  // A date field and an HH:MM:SS.fff field → exch ns (China time); kMalformedLine naming `what`.
  bool china_time(const Line& line, std::string_view date, std::string_view time, const char* what, int64_t& ts_ns);

  SymbolTable& symbols_;
  InputErrors& errors_;
  LineReader* lines_ = nullptr;
  const HeaderColumns* h_ = nullptr;
  std::span<const std::string_view> fields_;

 private:
  ChinaMidnight days_;
  std::string last_name_;
  SymbolId last_id_ = kInvalidSymbol;
};

// The file `dir/<name>.csv.gz` or `dir/<name>.csv`, whichever exists first for each of `names`;
// "" if none.
std::string find_data_file(const std::string& dir, std::initializer_list<const char*> names);

}  // namespace ts::ingest
