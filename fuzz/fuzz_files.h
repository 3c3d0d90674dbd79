#pragma once
// Shared by the file-parser fuzz targets (lobster_fuzz, sse_fuzz, csv_fuzz, line_reader_fuzz):
// the fuzzer's bytes become real files in a private scratch folder (under /dev/shm when it
// exists, so a write per input costs no disk), because the sources open paths the way a user's
// run does. An input for a multi-file format is cut into parts at separator lines ("\n@@\n"),
// so a seed stays readable text: part 1 @@ part 2 @@ part 3.
//
// drain() runs a source to its end and checks what every file source promises
// (ingest/source.h, docs/formats.md): it ends (done() after a bounded number of calls), every
// event names a symbol the table knows, exchange times never go backwards, and the events it
// hands on are accepted or refused by a BookSet without a crash. A broken promise ends the
// process through __builtin_trap(), which libFuzzer reports as a finding.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "book/book_set.h"
#include "core/event.h"
#include "core/input_errors.h"
#include "core/symbol_table.h"
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

// One scratch folder per process, removed at exit.
class ScratchDir {
 public:
  static ScratchDir& get() {
    static ScratchDir dir;
    return dir;
  }
  const std::filesystem::path& path() const { return path_; }
  // Creates (or empties) the sub-folder `name` and returns its path.
  std::filesystem::path fresh_dir(const std::string& name) const {
    const auto p = path_ / name;
    std::error_code ec;
    std::filesystem::remove_all(p, ec);
    std::filesystem::create_directories(p);
    return p;
  }
  // Writes `bytes` to `rel` (relative to the folder) and returns its full path.
  std::string write(const std::filesystem::path& rel, std::string_view bytes) const {
    const std::string p = (rel.is_absolute() ? rel : path_ / rel).string();
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (!f) __builtin_trap();  // the scratch folder itself is broken: not the code under test
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) __builtin_trap();
    std::fclose(f);
    return p;
  }

 private:
  ScratchDir() {
    std::error_code ec;
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path();
    path_ = base / ("ticksentry-fuzz-" + std::to_string(::getpid()));
    // libFuzzer often ends a process without running atexit handlers (a finding, a timeout, a
    // signal): remove the folders of processes that no longer exist.
    for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("ticksentry-fuzz-", 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + 16, nullptr, 10);
      if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove_all(entry.path(), ec);
    }
    std::filesystem::create_directories(path_);
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(ScratchDir::get().path(), e);
    });
  }
  std::filesystem::path path_;
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
