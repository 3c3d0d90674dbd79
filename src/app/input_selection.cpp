#include "app/input_selection.h"

#include <CLI/CLI.hpp>

#include "core/log.h"

namespace ts {

void add_input_selection_flags(CLI::App* c, InputSelectionOptions& o) {
  c->add_option("--symbol", o.symbol_globs, "only symbols matching this glob (repeatable: GOOG, '6005*')");
  c->add_option("--from", o.from,
                "exchange time to start at: 10:50, 10:50:30.5, 2012-06-21T10:50 (each symbol's own zone), "
                "or with Z/+HH:MM, or ns");
  c->add_option("--to", o.to, "exchange time to stop before (the forms of --from)");
}

Result<std::unique_ptr<InputSelection>> InputSelection::open(Source& inner, const SymbolTable& symbols,
                                                             const InputSelectionOptions& o) {
  std::unique_ptr<InputSelection> s(new InputSelection(inner, symbols, o));
  auto time = TimeRangeSource::open(s->symbols_, symbols, o.from, o.to);
  if (!time.is_ok()) return time.status();
  s->time_ = std::move(time).value();
  return s;
}

uint64_t InputSelection::skipped() const {
  return symbols_.skipped() + time_->skipped_before() + time_->skipped_after();
}

void InputSelection::report() const {
  const SymbolFilterSource& f = symbols_;
  if (!options_.symbol_globs.empty()) {
    if (f.symbols_kept() == 0) {
      spdlog::warn("--symbol matched no symbol of the input: {} events skipped", f.skipped());
    } else {
      spdlog::info("--symbol: {} symbols kept, {} events of other symbols skipped", f.symbols_kept(), f.skipped());
    }
  }
  if (time_->active()) {
    if (time_->first_window().empty()) {
      spdlog::warn("--from/--to: no event was read");
    } else if (time_->passed() == 0) {
      spdlog::warn("--from/--to kept no event: {} (each symbol in its exchange zone); {} events before and {} after",
                   time_->first_window(), time_->skipped_before(), time_->skipped_after());
    } else {
      spdlog::info("--from/--to: {} (each symbol in its exchange zone); {} events before and {} after skipped",
                   time_->first_window(), time_->skipped_before(), time_->skipped_after());
    }
  }
}

}  // namespace ts
