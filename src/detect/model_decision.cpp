#include "detect/model_decision.h"

namespace ts {

bool ModelDecision::decide(SymbolId symbol, double probability, int64_t exch_ts_ns) {
  if (symbol >= states_.size()) states_.resize(size_t(symbol) + 256);
  State& s = states_[symbol];
  if (s.disarmed) {
    if (probability < opts_.threshold - opts_.hysteresis) s.disarmed = false;
    return false;
  }
  if (probability < opts_.threshold) return false;
  if (s.fired && exch_ts_ns - s.last_alert_ns < opts_.cooldown_ns) return false;
  s.disarmed = true;
  s.fired = true;
  s.last_alert_ns = exch_ts_ns;
  return true;
}

}  // namespace ts
