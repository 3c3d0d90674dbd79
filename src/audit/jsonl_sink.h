#pragma once
// One JSON object per line per alert (schema: audit/alert_json.h, docs/formats.md).
//
// Crash safety: every line is one alert, written whole or not at all as far as a reader of the
// finished file can tell. A run killed mid-write (kill -9, power loss) can leave a torn last line
// (no '\n'); opening the file again for appending cuts it off before writing. Alert ids are
// deterministic (detect/alert.h), so a re-run over the same input with `append` writes only the
// alerts the file does not hold yet: after a kill and a re-run the file has each alert once.
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_set>

#include "core/status.h"
#include "detect/alert_sink.h"

namespace ts {

// What a JSONL file left by a previous run holds.
struct JsonlContents {
  uint64_t alerts = 0;       // complete lines with an "id"
  uint64_t other_lines = 0;  // complete lines without one (not written by ticksentry)
  uint64_t torn_bytes = 0;   // bytes after the last '\n' (an interrupted write)
  std::unordered_set<uint64_t> ids;
};

// Reads `path` (absent, or not a regular file such as /dev/stdout or a FIFO = empty). kIoError
// when it exists but cannot be read.
Result<JsonlContents> jsonl_read_contents(const std::string& path);

class JsonlSink : public AlertSink {
 public:
  // Opens `path` for this run. An absent or empty file is created. A file holding alerts of a
  // previous run: with `append`, its torn last line (if any) is cut off and the alerts it holds
  // are not written again; without, kInvalidArgument naming the file, its alert count and the
  // choices (--append, --out-dir), and the file is left untouched.
  static Result<std::unique_ptr<JsonlSink>> open(const std::string& path, bool append);

  // Appends to `path` as open(path, true) does, but never fails: if the file cannot be opened,
  // every write() returns kIoError naming the path and the reason (and retries the open).
  explicit JsonlSink(std::string path);
  // Writes to `out`, which the caller owns and keeps open.
  explicit JsonlSink(std::FILE* out);
  ~JsonlSink() override;
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;

  Status write(const Alert& a, const SymbolTable& symbols) override;
  bool records_shadow() const override { return true; }  // the JSONL file is a record
  Status flush() override;
  Status close() override;

  const std::string& path() const { return path_; }
  uint64_t previous_alerts() const { return previous_alerts_; }  // in the file before this run
  uint64_t repaired_bytes() const { return repaired_bytes_; }    // torn tail cut off at open
  uint64_t written() const { return written_; }                  // lines this run wrote
  uint64_t skipped_present() const { return skipped_present_; }  // alerts already in the file

 private:
  JsonlSink() = default;
  Status ensure_open();
  Status prepare_append();  // repair the tail, load the ids present
  std::string path_;
  std::FILE* out_ = nullptr;
  bool owns_ = false;
  bool closed_ = false;
  bool prepared_ = false;
  std::unordered_set<uint64_t> present_;  // ids written by previous runs
  uint64_t previous_alerts_ = 0;
  uint64_t repaired_bytes_ = 0;
  uint64_t written_ = 0;
  uint64_t skipped_present_ = 0;
};

}  // namespace ts
