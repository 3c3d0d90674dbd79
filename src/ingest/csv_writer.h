#pragma once
// CsvWriter: writes events as ticksentry's normalized CSV (docs/formats.md), gzip-compressed
// when the path ends in ".gz". Reading the file back with make_csv_source() gives the same
// events (recv_ts_ns aside, which is not written). Before a symbol's first event it writes the
// symbol's units (a "units" line: RefData::tick and size_increment) when they are not those its
// name implies, so the integer prices and sizes mean the same on replay (a crypto decoder's
// units fitted to the feed's digits, an --instruments row's); equity files are unchanged.
// Not for the hot path of a live run (formats text, buffers 1 MiB); for exports and tests.
// Threading: one writer per thread. close() must be called to learn whether the data reached
// the file; the destructor closes silently.
#include <string>
#include <vector>

#include "core/event.h"
#include "core/status.h"
#include "core/symbol_table.h"

namespace ts {

class CsvWriter {
 public:
  // Creates (truncates) `path` and writes the header line. kIoError if it cannot be created.
  static Result<CsvWriter> open(const std::string& path);

  CsvWriter(CsvWriter&& other) noexcept;
  CsvWriter& operator=(CsvWriter&& other) noexcept;
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;
  ~CsvWriter();

  // Appends one line for `event`, its symbol named by `symbols`. kInvalidArgument for a symbol
  // id the table does not know or a name the format cannot carry; kIoError on a write failure.
  Status write(const Event& event, const SymbolTable& symbols);
  // Flushes and closes; kIoError if anything failed to reach the file.
  Status close();
  uint64_t events_written() const { return events_; }

 private:
  CsvWriter(std::string path, void* gz, void* file);
  Status flush();

  std::string path_;
  void* gz_ = nullptr;    // gzFile when compressing
  void* file_ = nullptr;  // FILE* otherwise
  std::string buf_;
  uint64_t events_ = 0;
  std::vector<bool> units_written_;  // by symbol id
};

}  // namespace ts
