#pragma once
// Bad-input accounting. Every rejected record is counted by kind and reported with its file and
// line; reports are rate-limited (the first `kLogFirst` of each kind, then every power of ten) so a
// file of garbage cannot flood the log. The record is skipped; nothing else is lost.
// Threading: one InputErrors per thread (a source, a shard); merge() them for the summary.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace ts {

enum class InputError : uint8_t {
  kMalformedLine = 0,   // cannot be parsed as a record (bad field, bad time, bad enum)
  kWrongColumnCount,    // parsed, but the number of fields is wrong
  kUnknownSymbol,       // symbol not in the symbol table where the source requires known symbols
  kNotANumber,          // NaN / inf / empty where a number is required
  kBadPrice,            // zero or negative price
  kBadSize,             // zero or negative size
  kCrossedBook,         // best bid >= best ask in a snapshot or after applying an update
  kOutOfOrder,          // exchange timestamp earlier than the previous record's
  kTruncatedFile,       // file ends mid-record or the gzip stream is cut short
  kBinaryGarbage,       // non-text bytes in a text record
  kUnknownOrder,        // L3 cancel/execute for an order id the book never saw
  kEmptyFile,           // a file with no records (empty, or a header only): reported once per file
  kCount
};
constexpr size_t kInputErrorCount = static_cast<size_t>(InputError::kCount);
const char* input_error_name(InputError kind);

class InputErrors {
 public:
  static constexpr uint64_t kLogFirst = 10;

  // Counts one error and logs it (rate-limited) as "file:line: kind: detail".
  void report(InputError kind, std::string_view file, uint64_t line, std::string_view detail);
  uint64_t count(InputError kind) const { return counts_[static_cast<size_t>(kind)]; }
  uint64_t total() const;
  // kind name → count, only kinds that occurred.
  std::map<std::string, uint64_t> by_kind() const;
  void merge(const InputErrors& other);
  // Silences the log (tests that feed garbage on purpose); counting is unaffected.
  void set_quiet(bool quiet) { quiet_ = quiet; }

 private:
  std::array<uint64_t, kInputErrorCount> counts_{};
  bool quiet_ = false;
};

}  // namespace ts
