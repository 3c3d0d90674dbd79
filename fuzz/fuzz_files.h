#pragma once
// Shared by the file-parser fuzz targets (lobster_fuzz, sse_fuzz, csv_fuzz, line_reader_fuzz,
// szse_fuzz, sse_l3_fuzz, mapped_fuzz): the fuzzer's bytes are read in memory, as the files of a
// user's run are read (ingest::LineReader::open_memory: the same lines, numbers and reports as
// a file of these bytes; the sources' reader overloads take the readers). No file is written
// per input: a temp file per input held the targets to tens of executions a second. An input
// for a multi-file format is cut into parts at separator lines ("\n@@\n"), so a seed stays
// readable text: part 1 @@ part 2 @@ part 3.
//
// drain() runs a source to its end and checks what every file source promises
// (ingest/source.h, docs/formats.md): it ends (done() after a bounded number of calls), every
// event names a symbol the table knows, exchange times never go backwards, and the events it
// hands on are accepted or refused by a BookSet without a crash. A broken promise ends the
// process through __builtin_trap(), which libFuzzer reports as a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "book/book_set.h"
#include "core/event.h"
#include "core/input_errors.h"
#include "core/log.h"
#include "core/symbol_table.h"
#include "ingest/line_reader.h"
#include "ingest/source.h"

namespace ts::fuzz {

constexpr std::string_view kPartSeparator = "\n@@\n";

// The first n-1 separators cut `data`; parts that are not there are empty.
inline std::vector<std::string_view> split_parts(std::string_view data, size_t n) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < n) {
    const size_t at = data.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(data);
  parts.resize(n);
  return parts;
}

// A reader over `bytes` named `name` (the name a report gives; some sources read a symbol or a
// date from it). `bytes` must outlive the reader.
inline std::unique_ptr<ingest::LineReader> memory_reader(std::string_view bytes, std::string name,
                                                         InputErrors& errors) {
  return ingest::LineReader::open_memory(bytes, std::move(name), errors);
}

// The sources log what they found at start (spdlog::info): once per input that is most of a
// target's time and a flood on stderr. Call once (a static in the target) before the first input.
inline bool quiet_logs() {
  spdlog::set_level(spdlog::level::off);
  return true;
}

// An in-memory file with a path (/proc/self/fd/N of a memfd), for writers and readers that take a
// path (CsvWriter in csv_fuzz's round trip, the config in config_fuzz): no disk, no folder, one per process.
class MemFile {
 public:
  static MemFile& get() {
    static MemFile file;
    return file;
  }
  const std::string& path() const { return path_; }
  // Makes `bytes` the file's whole content (config_fuzz: readers that open the config's path
  // again, as kafka_passthrough does).
  void replace(std::string_view bytes) {
    if (::ftruncate(fd_, 0) != 0) __builtin_trap();
    if (!bytes.empty() && ::pwrite(fd_, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) __builtin_trap();
  }
  // The bytes written to the file so far.
  std::string read_all() const {
    std::string out;
    const off_t size = ::lseek(fd_, 0, SEEK_END);
    if (size < 0) __builtin_trap();
    out.resize(size_t(size));
    if (size > 0 && ::pread(fd_, out.data(), out.size(), 0) != size) __builtin_trap();
    return out;
  }

 private:
  MemFile() {
    fd_ = ::memfd_create("ticksentry-fuzz", 0);
    if (fd_ < 0) __builtin_trap();  // the test harness itself is broken: not the code under test
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  int fd_ = -1;
  std::string path_;
};

// Runs `src` to its end (see the file comment). Returns the number of events.
inline uint64_t drain(Source& src, const SymbolTable& symbols, InputErrors& errors) {
  BookSet books(symbols);
  std::array<Event, 64> batch;
  uint64_t events = 0;
  int64_t last_ts = INT64_MIN;
  int idle = 0;
  while (!src.done()) {
    const size_t n = src.next_batch(batch);
    if (n == 0 && ++idle > 4) __builtin_trap();  // a file source that neither delivers nor ends
    if (n > batch.size()) __builtin_trap();
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      if (e.symbol >= symbols.size()) __builtin_trap();  // an event for a symbol nobody interned
      if (e.exch_ts_ns < last_ts) __builtin_trap();     // time went backwards past the source
      last_ts = e.exch_ts_ns;
      books.apply(e, errors);
    }
    events += n;
  }
  return events;
}

}  // namespace ts::fuzz
