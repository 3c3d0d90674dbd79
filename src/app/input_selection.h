#pragma once
// What part of an input a replay, record or publish reads: `--symbol GLOB` (app/symbol_filter.h)
// and `--from` / `--to` in exchange time (app/time_range_filter.h), stacked over the opened
// source; report() logs what was kept and skipped after the run (a glob or a window that matched
// nothing is worth a warning: a typo reads as a quiet day).
#include <memory>
#include <string>
#include <vector>

#include "app/symbol_filter.h"
#include "app/time_range_filter.h"

namespace CLI {
class App;
}

namespace ts {

struct InputSelectionOptions {
  std::vector<std::string> symbol_globs;  // --symbol (repeatable)
  std::string from;                       // --from ("" = from the start)
  std::string to;                         // --to ("" = to the end)
};

// Adds --symbol, --from and --to to a command.
void add_input_selection_flags(CLI::App* command, InputSelectionOptions& o);

class InputSelection {
 public:
  // Errors: a --from/--to that does not parse, or an empty window (kInvalidArgument, exit 2).
  static Result<std::unique_ptr<InputSelection>> open(Source& inner, const SymbolTable& symbols,
                                                      const InputSelectionOptions& o);
  Source& source() { return *time_; }
  void report() const;
  // Events the selection dropped: other symbols' and those outside the window.
  uint64_t skipped() const;

 private:
  InputSelection(Source& inner, const SymbolTable& symbols, const InputSelectionOptions& o)
      : options_(o), symbols_(inner, symbols, o.symbol_globs) {}
  InputSelectionOptions options_;
  SymbolFilterSource symbols_;
  std::unique_ptr<TimeRangeSource> time_;
};

}  // namespace ts
