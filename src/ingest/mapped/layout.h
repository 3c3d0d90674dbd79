#pragma once
// A vendor CSV layout described by a TOML mapping (docs/formats.md, "Layouts by mapping"): which
// files a day has and their roles, which column holds each field, the scales, the time format and
// zone, the symbol rule, the code tables (event kind, side, aggressor, trading phase) and the
// merge order. parse_layout() checks the mapping itself (unknown keys, wrong types, values out of
// range); the columns are checked against each file's header when the file is opened
// (mapped_file.h). Every error names the key ("file[1].side.codes.X") so a user can fix it.
// Start-up only (allocates freely).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ingest/merge_source.h"

namespace ts::mapped {

enum class FileRole : uint8_t { kSnapshot, kOrder, kTrade, kCombined };
const char* file_role_name(FileRole r);

// The clock a time column is read in. The *_of_day formats add the row's date (the date column,
// or the folder's -YYYYMMDD) at midnight in the layout's time zone; epoch formats stand alone.
enum class TimeFormat : uint8_t {
  kHms,         // "09:30:00.120" (fraction optional, up to 9 digits)
  kHhmmssfff,   // 93000120: HHMMSS and milliseconds as one integer (Wind, Datayes)
  kSecondsOfDay,  // "34200.015" seconds after midnight
  kEpochS,
  kEpochMs,
  kEpochUs,
  kEpochNs,
};

// What a row becomes; code tables of `kind` map to these.
enum class RowKind : uint8_t { kSnapshot, kOrderAdd, kOrderCancel, kOrderExecute, kTrade, kSkip };

// Scalar fields: the key in the mapping is the name in kScalarFieldNames.
enum class Field : uint8_t {
  kSeq,
  kOrderId,
  kPrice,
  kSize,
  kBuyOrderId,
  kSellOrderId,
  kPrevClose,
  kLast,
  kCumVolume,
  kCumTurnover,
  kUpperLimit,  // the day's limit prices (SZSE MaxPx/MinPx): set on the symbol as given
  kLowerLimit,
};
constexpr int kFieldCount = 12;
extern const std::array<std::string_view, kFieldCount> kFieldNames;

// Per-level column patterns ("AskPrice{n}", n = 1..levels).
enum class LevelField : uint8_t { kBidPrice, kBidSize, kAskPrice, kAskSize, kBidCount, kAskCount };
constexpr int kLevelFieldCount = 6;
extern const std::array<std::string_view, kLevelFieldCount> kLevelFieldNames;

// A code column and its table: the text of a cell → a value (RowKind, Side or Phase as uint8).
struct CodeTable {
  std::string column;  // empty: not mapped
  std::vector<std::pair<std::string, uint8_t>> codes;
};

struct SymbolRule {
  std::string column;
  int digits = 0;      // > 0: the cell must be exactly this many digits
  std::string prefix;  // added before the cell's text
  std::string suffix;  // added after it ("600519" + ".SH")
};

struct FileLayout {
  std::string key;   // "file[0]": how errors name this entry
  FileRole role = FileRole::kSnapshot;
  std::string name;  // file stem in a day folder: <name>.csv.gz or <name>.csv
  bool required = true;
  bool grouped_by_symbol = false;  // rows sorted by symbol, then time: read whole, then merged
  double price_scale = 1;  // ticks per unit of the file's prices (0.01 CNY ticks, prices in CNY: 100)
  int64_t size_scale = 1;  // shares per unit of the file's sizes (lots of 100: 100)
  std::string time_column;
  TimeFormat time_format = TimeFormat::kHms;
  std::string date_column;  // empty: the folder's date (of-day formats) or none (epoch formats)
  SymbolRule symbol;
  std::array<std::string, kFieldCount> fields;  // column per Field; empty = not mapped
  CodeTable kind;       // RowKind per code (order and combined files)
  CodeTable side;       // order side: Side per code
  CodeTable aggressor;  // trade aggressor: Side per code
  CodeTable phase;      // snapshot phase: Phase per code; a code not in the table → unknown
  int levels = 0;
  std::array<std::string, kLevelFieldCount> level_patterns;  // empty = not mapped

  bool has(Field f) const { return !fields[static_cast<int>(f)].empty(); }
  const std::string& column(Field f) const { return fields[static_cast<int>(f)]; }
};

struct Layout {
  std::string name;
  std::string origin;  // the file it came from, or "builtin:<name>"
  std::string time_zone = "UTC";
  MergeOrder merge = MergeOrder::kTimeThenSeq;
  std::vector<FileLayout> files;
};

// Parses a mapping. Errors (kInvalidArgument): TOML syntax (with line), an unknown key, a value
// of the wrong type or out of range, a code mapped to an unknown value, a field the file's role
// does not use, a required field missing — each naming `origin` and the key.
Result<Layout> parse_layout(std::string_view text, const std::string& origin);

// `name_or_path`: a TOML file if one exists there, else config/layouts/<name>.toml under the
// working directory, else a layout shipped in the binary (builtin_layouts()).
Result<Layout> load_layout(const std::string& name_or_path);

struct BuiltinLayout {
  std::string_view name;  // "sse-l2": the file's stem in config/layouts
  std::string_view text;  // the TOML as shipped
};
// The layouts in config/layouts, compiled in (generated by src/ingest/CMakeLists.txt).
const std::vector<BuiltinLayout>& builtin_layouts();

}  // namespace ts::mapped
