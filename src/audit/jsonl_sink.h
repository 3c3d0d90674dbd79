#pragma once
// One JSON object per line per alert (schema: audit/alert_json.h). Appends to a file.
#include <cstdio>
#include <string>

#include "detect/alert_sink.h"

namespace ts {

class JsonlSink : public AlertSink {
 public:
  // Appends to `path`. If the file cannot be opened, every write() returns kIoError naming the
  // path and the reason (and retries the open), so a bad path is counted, not fatal.
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

 private:
  Status ensure_open();
  std::string path_;
  std::FILE* out_ = nullptr;
  bool owns_ = false;
  bool closed_ = false;
};

}  // namespace ts
