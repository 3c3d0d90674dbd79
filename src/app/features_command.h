#pragma once
// `ticksentry features --export DIR`: runs a source (simulator, LOBSTER, SSE-L2, csv) through the
// serving code (BookSet → FeatureEngine → RuleEngine with the default rules) and writes a training
// data set: windows [N, T, F] sampled every `stride` feature rows per symbol, the label of
// docs/labels.md, the rule and rolling z-score baselines and a manifest. File layout: the dataset
// contract in docs/labels.md.
//
// Exit codes as for every command: 0 success, 2 bad arguments, missing or unreadable inputs, an
// unwritable DIR (one clear line on stderr), 1 unexpected internal failure.
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "features/labeler.h"

namespace CLI {
class App;
}

namespace ts {

struct ExportOptions {
  std::string out_dir;                  // DIR (created if missing; files in it are replaced)
  std::string format;                   // "sim" | "lobster" | "sse-l2" | "csv"
  std::vector<std::string> paths;       // inputs (none for sim)
  std::string config_path;              // optional TOML: [features], [rules.*], [sim]
  std::optional<int> symbols;           // sim: symbols (default 50)
  std::optional<uint64_t> seed;         // sim: seed (default 42)
  std::optional<double> sim_seconds;    // sim: trading seconds (default 3600)
  int window = 60;                      // T, feature rows per window, 30..120
  int stride = 5;                       // a window every this many feature rows per symbol, 1..3600
  LabelOptions label;
  double rule_lookback_s = 10;          // R: rule score 1 if a rule fired in the last R s (1..3600)
  double zscore_vol_floor_bps = 1.0;    // floor of the volatility in the z-score baseline
};

struct ExportSummary {
  int64_t events = 0;                   // events read from the source
  int64_t rejected = 0;                 // events the book rejected (skipped, as in serving)
  int64_t windows = 0;                  // N
  int64_t positives = 0;
  std::vector<std::string> symbols;     // manifest "symbols" (index = symbol.npy value)
  std::map<std::string, int64_t> onsets_by_kind;
  int64_t first_ts_ns = 0, last_ts_ns = 0;
  double seconds = 0;                   // wall time of the whole export
};

// Checks the options (ranges, format, paths present or absent) without touching files.
Status validate_export_options(const ExportOptions& opts);

// Runs the export; errors (bad options, unreadable inputs, unwritable DIR) carry context.
// `stop` ends the source early (the files then cover what was read).
Result<ExportSummary> export_dataset(const ExportOptions& opts, const std::atomic<bool>& stop);

// Registers `features` on `app`; run() executes it if it was the subcommand given.
class FeaturesCommand {
 public:
  explicit FeaturesCommand(CLI::App& app);
  std::optional<int> run(const std::atomic<bool>& stop) const;

 private:
  ExportOptions opts_;
  CLI::App* cmd_ = nullptr;
};

}  // namespace ts
