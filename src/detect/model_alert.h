#pragma once
// Model alerts, next to the rule alerts: when a shard asks the model for a symbol's probability
// (the trigger), how a probability becomes an alert (the decision values, per symbol group), and
// the alert itself, assembled from what the decision let through (detect/model_decision.h).
// Settings come from section [model] of the config file (the serving keys of that section are
// serve/serve_options.h's); read at start-up, a change takes effect at the next start.
// Threading: ModelAlertOptions is a value; make_model_decision's result is owned by one shard
// thread; make_model_alert writes only `out`.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/stage_times.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "detect/model_decision.h"
#include "detect/symbol_groups.h"

namespace ts {

enum class Trigger : uint8_t {
  kRow,    // a request when a symbol's window gains a completed row (every_n-th row)
  kEvent,  // a request on every every_n-th event of a symbol: T-1 completed rows + the current row
};

// A symbol group's own decision values ([[model.groups]]); a value not given is the model's.
struct DecisionGroup {
  SymbolGroupSpec match;
  double threshold = 0.9;
  // The group's threshold was written in its [[model.groups]] block; otherwise it follows the
  // model's threshold (the registry's operating point when the registry names no group value).
  bool threshold_set = false;
  double hysteresis = 0.1;
  double cooldown_s = 60;
};

struct ModelAlertOptions {
  // Trigger.
  int min_rows = 60;  // completed rows a symbol needs before its first request;
                      // fewer than the model's window_rows are padded with the oldest row
  Trigger trigger = Trigger::kRow;
  int every_n = 1;
  // Decision (detect/model_decision.h).
  double threshold = 0.9;
  double hysteresis = 0.1;            // re-arm below threshold - hysteresis
  double cooldown_s = 60;             // exchange time between two alerts of one symbol
  std::vector<DecisionGroup> groups;  // first match wins; symbols in none use the three above

  // Section [model]: min_rows (default window_rows, at most window_rows), trigger, every_n,
  // threshold, hysteresis, cooldown_s and [[model.groups]]. Throws ConfigError on bad values.
  static ModelAlertOptions from_config(const ConfigSection& s, int window_rows);
};

// The decision for one shard's symbols with `o`'s values, groups matched by symbol name.
std::unique_ptr<ModelDecision> make_model_decision(const ModelAlertOptions& o, const SymbolTable& symbols);

// One scored window the decision let through: what the alert records of it.
struct ModelVerdict {
  SymbolId symbol = kInvalidSymbol;
  int64_t exch_ts_ns = 0;  // the triggering event
  uint64_t event_seq = 0;
  Price price = 0;
  StageTimes t;  // recv/book/features of the triggering event
  double probability = 0;
  double threshold = 0;  // the one it crossed (the symbol's group's, or the model's)
  uint32_t model_version = 0;
  bool shadow = false;            // a shadow version's score: its alert gets its own id
  const float* window = nullptr;  // rows × kFeatureCount floats, newest last; null: none (shadow)
  int rows = 0;
};

// Fills `out` with the model alert of `v` (type kModel, severity critical at p >= 0.99, the
// deterministic alert id, the probability against its threshold, the newest window row as the
// alert's features). Stamps t.detect_ns. `model_name`: NUL-terminated, ModelScore::kMaxName bytes.
void make_model_alert(const ModelVerdict& v, std::string_view symbol_name, const char* model_name, Alert& out);

}  // namespace ts
