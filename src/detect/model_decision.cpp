#include "detect/model_decision.h"

namespace ts {

ModelDecision::State& ModelDecision::state(SymbolId symbol) {
  if (symbol >= states_.size()) states_.resize(size_t(symbol) + 256);
  State& s = states_[symbol];
  if (s.group == kUnresolved) {
    const int g = group_of_ ? group_of_(symbol) : -1;
    s.group = int16_t(g >= 0 && size_t(g) < groups_.size() ? g : -1);
  }
  return s;
}

const ModelDecisionOptions& ModelDecision::options_for(SymbolId symbol) {
  const State& s = state(symbol);
  return s.group < 0 ? defaults_ : groups_[size_t(s.group)];
}

bool ModelDecision::decide(SymbolId symbol, double probability, int64_t exch_ts_ns) {
  State& s = state(symbol);
  const ModelDecisionOptions& o = s.group < 0 ? defaults_ : groups_[size_t(s.group)];
  if (s.disarmed) {
    if (probability < o.threshold - o.hysteresis) s.disarmed = false;
    return false;
  }
  if (probability < o.threshold) return false;
  if (s.fired && exch_ts_ns - s.last_alert_ns < o.cooldown_ns) return false;
  s.disarmed = true;
  s.fired = true;
  s.last_alert_ns = exch_ts_ns;
  return true;
}

}  // namespace ts
