#pragma once
// One human-readable line per alert:
//   09:31:07.120 600519.SH rapid_rise warning ret_60s_bps=312.5 (>=200) ret_10s_bps=20 (>0) price=1850.12 latency=23us
// Time is exchange-local; latency is detect − receive (omitted when not stamped). Context
// values (Cmp::kInfo) print without a threshold.
#include <cstdio>
#include <string>

#include "detect/alert_sink.h"

namespace ts {

// The line, without the trailing newline.
std::string format_alert_line(const Alert& a, const SymbolTable& symbols);

class StdoutSink : public AlertSink {
 public:
  // Does not own `out` (stdout by default); the caller keeps it open while the sink lives.
  explicit StdoutSink(std::FILE* out = stdout) : out_(out) {}
  Status write(const Alert& a, const SymbolTable& symbols) override;
  Status flush() override;

 private:
  std::FILE* out_;
};

}  // namespace ts
