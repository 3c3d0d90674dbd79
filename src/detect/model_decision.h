#pragma once
// The decision stage of model alerts: a probability becomes an alert when it reaches the
// threshold while the symbol is armed and out of cooldown. Firing disarms the symbol; it re-arms
// once a probability falls below threshold - hysteresis (so a score hovering at the threshold is
// one alert, not a stream). Cooldown is exchange time between two alerts of one symbol.
// Threading: owned by one shard thread (its symbols only). Allocates only when a symbol id
// beyond the ones seen appears.
#include <cstdint>
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
  explicit ModelDecision(ModelDecisionOptions opts) : opts_(opts) {}
  // Feeds one probability of `symbol` scored on data up to exchange time `exch_ts_ns`.
  // Returns true when it raises an alert.
  bool decide(SymbolId symbol, double probability, int64_t exch_ts_ns);
  const ModelDecisionOptions& options() const { return opts_; }

 private:
  struct State {
    bool disarmed = false;
    bool fired = false;
    int64_t last_alert_ns = 0;
  };
  ModelDecisionOptions opts_;
  std::vector<State> states_;
};

}  // namespace ts
