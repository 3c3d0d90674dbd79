#pragma once
// FirstInputError: while it lives, remembers the first bad-record report that InputErrors logs
// ("file:line: kind: detail"), so that a replay or record that read no valid record at all can
// end with exit 2 and that first error (the usual cause: a wrong --format or a wrong file).
// The reports are taken from the default logger (InputErrors logs the first of each kind), so
// nothing on the sources' hot path changes. Threading: construct and destroy on the main thread
// while no other thread logs (before the run starts, after it ended).
#include <cstdint>
#include <memory>
#include <string>

#include "core/input_errors.h"

namespace ts {

class FirstInputError {
 public:
  FirstInputError();
  ~FirstInputError();
  FirstInputError(const FirstInputError&) = delete;
  FirstInputError& operator=(const FirstInputError&) = delete;

  // The first report seen ("" if none was logged, e.g. with --log-level error).
  std::string text() const;

  // When `records_read` is 0 and `errors` counted bad input: prints "no valid record ..." with
  // the counts by kind and the first error to stderr and returns true (the caller exits 2).
  bool no_valid_record(uint64_t records_read, const InputErrors& errors, const std::string& what) const;
  // The same message without "ticksentry: " and without printing it; "" when records were read
  // or nothing was counted (for commands that return a Status).
  std::string no_valid_record_message(uint64_t records_read, const InputErrors& errors, const std::string& what) const;

 private:
  struct Sink;
  std::shared_ptr<Sink> sink_;
};

}  // namespace ts
