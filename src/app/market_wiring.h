#pragma once
// The markets of a run (`run`, `replay`, `run --source kafka`), docs/instruments.md:
//   - the instrument master: `--instruments FILE` or [instruments] path (a reference CSV), with
//     [instruments] default_market (cn-a | us | crypto; "" = a bare ticker is unknown_symbol) and
//     crypto_venue; attached to the SymbolTable so every symbol a source interns is resolved;
//   - the exchange calendars of the session schedules: [calendars] dir (default
//     "config/calendars"; a missing default folder only warns: then only crypto has a schedule);
//   - the volume-profile state: `--state-in FILE` (read at start; a bad or incompatible file is
//     an error) and `--state-out FILE` (written after the run: the state read plus what the run
//     learned).
// Usage: build() before the source is opened (sources intern symbols as they open), attach() after
// RunWiring::build(), finish() after the run. Errors print a message and return false (exit 2).
#include <memory>
#include <string>

#include "app/commands.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "core/instrument_ref.h"
#include "core/instrument_table.h"
#include "core/market_calendars.h"
#include "core/symbol_table.h"
#include "features/volume_profile.h"
#include "pipeline/pipeline.h"
#include "pipeline/run_summary.h"

namespace ts {

// The exchange calendars a run uses without a [calendars] dir: ./config/calendars when the run
// starts in the repository, else the ones built into the binary (the same files), so phases do
// not depend on the folder a command starts in. Returns false with the error in `error`.
bool load_default_calendars(MarketCalendars& calendars, InputErrors& errors, std::string& error);

class MarketWiring {
 public:
  // Bad rows of the instrument file are reported to `errors` (the run's input errors).
  bool build(const Config& config, const CommonOptions& common, SymbolTable& symbols, InputErrors& errors);
  void attach(Pipeline& pipeline);
  // Adds instruments{...} to the summary and writes --state-out.
  bool finish(RunSummary& summary);

 private:
  std::unique_ptr<InstrumentTable> instruments_;
  std::unique_ptr<InstrumentRefResolver> resolver_;
  MarketCalendars calendars_;
  bool have_calendars_ = false;
  ProfileStore profiles_in_;
  ProfileStore profiles_out_;
  std::string state_out_;
};

}  // namespace ts
