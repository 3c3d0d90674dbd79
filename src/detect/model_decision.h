#pragma once
// The decision stage of model alerts: a probability becomes an alert when it reaches the
// threshold while the symbol is armed and out of cooldown. Firing disarms the symbol; it re-arms
// once a probability falls below threshold - hysteresis (so a score hovering at the threshold is
// one alert, not a stream). Cooldown is exchange time between two alerts of one symbol.
// Threshold, hysteresis and cooldown are the model's ([model]) unless the symbol belongs to a
// symbol group with its own values (detect/symbol_groups.h); a symbol's group is resolved once,
// on its first probability.
// Threading: owned by one shard thread (its symbols only). Allocates only when a symbol id
// beyond the ones seen appears.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/event.h"

namespace ts {

struct ModelDecisionOptions {
  double threshold = 0.9;
  double hysteresis = 0.1;
  int64_t cooldown_ns = 60'000'000'000;
};

class ModelDecision {
 public:
  explicit ModelDecision(ModelDecisionOptions opts) : defaults_(opts) {}
  // Per-group values: group_of(symbol) is an index into `groups`, or -1 for the defaults.
  ModelDecision(ModelDecisionOptions defaults, std::vector<ModelDecisionOptions> groups,
                std::function<int(SymbolId)> group_of)
      : defaults_(defaults), groups_(std::move(groups)), group_of_(std::move(group_of)) {}
  // Feeds one probability of `symbol` scored on data up to exchange time `exch_ts_ns`.
  // Returns true when it raises an alert.
  bool decide(SymbolId symbol, double probability, int64_t exch_ts_ns);
  // The values that apply to `symbol` (its group's, else the defaults).
  const ModelDecisionOptions& options_for(SymbolId symbol);
  const ModelDecisionOptions& defaults() const { return defaults_; }

 private:
  static constexpr int16_t kUnresolved = -2;
  struct State {
    bool disarmed = false;
    bool fired = false;
    int16_t group = kUnresolved;  // -1: defaults
    int64_t last_alert_ns = 0;
  };
  State& state(SymbolId symbol);
  ModelDecisionOptions defaults_;
  std::vector<ModelDecisionOptions> groups_;
  std::function<int(SymbolId)> group_of_;
  std::vector<State> states_;
};

}  // namespace ts
