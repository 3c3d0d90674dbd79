#pragma once
// LineReader: buffered line-by-line reading of a text file, gzip-compressed or plain (told apart
// by the gzip magic bytes, so `.csv` and `.csv.gz` are the same to callers).
//
// Contract:
// - next() yields each line without its '\n' (and without a trailing '\r'), numbered from 1.
//   The string_view stays valid until the next call to next(); no allocation per line. A UTF-8
//   byte-order mark at the start of the file is not part of line 1.
// - A final line without '\n' is still yielded, with `unterminated` set: a source parses it
//   normally and reports kTruncatedFile (not a parse error) if it does not parse.
// - gzip: every member of a multi-member file is read (`cat a.gz b.gz`, bgzip, pigz -i). Each
//   fault is reported once as kTruncatedFile to the InputErrors given at open(), with the member
//   and the compressed byte offset: a corrupt member (its partial last line is dropped; reading
//   resumes at the next member's header, so the members after it are not lost), bytes after the
//   last member that are not a gzip member ("trailing garbage"), and a stream cut off inside a
//   member (the partial last line is dropped). Everything else is delivered.
// - Lines containing NUL or any other control byte except '\t' and '\r' (or DEL) have
//   `has_garbage` set; the line is still yielded so the source can count kBinaryGarbage.
// Threading: one reader per thread.
#include <cstdint>
#include <cstdio>
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
  // Reads `bytes` as the content of a file named `name` (plain or gzip, by the same magic
  // bytes): the same lines, numbers, flags and reports as open() on a file holding these bytes,
  // with `name` where a report names the file. Nothing is written or opened; the reader does not
  // copy `bytes`, which must outlive it. For in-memory callers: the fuzz targets, tests.
  static std::unique_ptr<LineReader> open_memory(std::string_view bytes, std::string name, InputErrors& errors);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, or false at the end of input.
  bool next(Line& line);
  // True once a corrupt, cut-off or garbage-trailed gzip stream was detected (and reported).
  bool truncated() const { return truncated_; }
  const std::string& path() const { return path_; }
  // File name without directories, as used in error reports.
  std::string_view file_name() const;
  uint64_t line_number() const { return number_; }

 private:
  struct Gzip;
  LineReader(std::string path, std::FILE* file, std::string_view memory, bool gzip, InputErrors& errors);
  size_t read_input(void* out, size_t room);  // raw bytes from the file (or memory); 0 = end or error
  bool refill();            // false when no more bytes will come
  size_t read_gzip(char* out, size_t room);  // decompressed bytes written to `out`; 0 = end
  bool fill_input();        // more compressed bytes into the input buffer; false at end of file
  enum class FastMember { kDone, kNeedsRoom, kNotTaken };
  // At a member's header, with the whole input in memory: the member inflated at once into `out`
  // (kDone), or more room wanted first (kNeedsRoom, Gzip::grow set), or left to zlib.
  FastMember inflate_member_fast(char* out, size_t room);
  void grow_buffer(size_t bytes);  // capacity to `bytes`, keeping [0, end_)
  void report_fault(const std::string& what);
  void drop_partial_line();  // a fault cut the line being assembled: forget its bytes

  static constexpr size_t kBufferBytes = 256 * 1024;

  std::string path_;
  std::FILE* file_;            // null when reading memory_
  std::string_view memory_;    // open_memory(): the bytes not yet read
  std::unique_ptr<Gzip> gz_;  // null for a plain file
  InputErrors& errors_;
  // Not value-initialized: a file of a few lines touches one page of it, not 256 KiB (opening
  // a file cost a 256 KiB memset; the parser fuzz targets open files per input).
  std::unique_ptr<char[]> buf_;
  size_t cap_ = kBufferBytes;
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

// Called by a source when `reader` is at its end: a file that held no record line (nothing, or
// only `header_lines` header lines) is counted once as kEmptyFile, so that "0 events" always
// comes with a word. A file whose gzip stream failed was reported as truncated instead.
inline void report_if_empty(InputErrors& errors, const LineReader& reader, uint64_t header_lines) {
  if (reader.line_number() > header_lines || reader.truncated()) return;
  errors.report(InputError::kEmptyFile, reader.file_name(), reader.line_number(),
                header_lines > 0 && reader.line_number() > 0 ? "no records after the header" : "the file is empty");
}

}  // namespace ts::ingest
