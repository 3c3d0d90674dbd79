#pragma once
// LineReader: buffered line-by-line reading of a text file, gzip-compressed or plain (zlib's
// gzopen reads both, so `.csv` and `.csv.gz` are the same to callers).
//
// Contract:
// - next() yields each line without its '\n' (and without a trailing '\r'), numbered from 1.
//   The string_view stays valid until the next call to next(); no allocation per line.
// - A final line without '\n' is still yielded, with `unterminated` set: a source parses it
//   normally and reports kTruncatedFile (not a parse error) if it does not parse.
// - A gzip stream that ends early (cut-off file) or is corrupt is reported once as
//   kTruncatedFile to the InputErrors given at open(); the partial last line is dropped and
//   next() returns false from then on. Everything before the cut is delivered.
// - Lines containing NUL or any other control byte except '\t' and '\r' (or DEL) have
//   `has_garbage` set; the line is still yielded so the source can count kBinaryGarbage.
// Threading: one reader per thread.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_errors.h"
#include "core/status.h"

namespace ts::ingest {

struct Line {
  std::string_view text;       // without the line ending
  uint64_t number = 0;         // 1-based line number in the (decompressed) file
  bool has_garbage = false;    // control bytes other than \t \r: not a text record
  bool unterminated = false;   // last line of the file, no '\n' after it
};

class LineReader {
 public:
  // Opens `path`. Fails with kNotFound if it does not exist, kIoError if it cannot be opened.
  static Result<std::unique_ptr<LineReader>> open(const std::string& path, InputErrors& errors);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, or false at the end of input (or after a truncation, see above).
  bool next(Line& line);
  // True once a truncated or corrupt gzip stream was detected.
  bool truncated() const { return truncated_; }
  const std::string& path() const { return path_; }
  // File name without directories, as used in error reports.
  std::string_view file_name() const;
  uint64_t line_number() const { return number_; }

 private:
  LineReader(std::string path, void* gz, InputErrors& errors);
  bool refill();  // false when no more bytes will come

  static constexpr size_t kBufferBytes = 256 * 1024;

  std::string path_;
  void* gz_;  // gzFile (kept opaque so this header does not pull in zlib.h)
  InputErrors& errors_;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unread byte
  size_t end_ = 0;    // one past the last valid byte
  uint64_t number_ = 0;
  bool eof_ = false;
  bool truncated_ = false;
};

// Counts a bad line in `errors` with its file and line number. A line cut off by the end of
// the file (no newline) is counted as kTruncatedFile instead of `kind`, except for ordering
// errors, which are about the record's place, not its text.
inline void report_line_error(InputErrors& errors, const LineReader& reader, const Line& line, InputError kind,
                              std::string_view detail) {
  const bool cut = line.unterminated && kind != InputError::kOutOfOrder;
  errors.report(cut ? InputError::kTruncatedFile : kind, reader.file_name(), line.number, detail);
}

}  // namespace ts::ingest
