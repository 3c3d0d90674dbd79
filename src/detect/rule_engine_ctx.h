#pragma once
// Private to the rule engine's .cpp files (rule_engine.cpp, rule_limits.cpp): the per-call
// scratch and the helpers both use. Not part of the detect API.
#include "book/book_top.h"
#include "core/event.h"
#include "core/stage_times.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "detect/rule_engine.h"
#include "detect/rule_state.h"

namespace ts {

struct RuleEngine::Ctx {
  const Event& e;
  const BookTop& book;
  const float* row;
  const RefData& ref;
  SymbolRuleState& s;
  StageTimes t;
  Alert* out;
  int max_out;
  int count = 0;
  bool stamped = false;
  const VolumeWindow* volume = nullptr;
};

namespace rule_detail {

inline Severity sev_at(double value, double critical) {
  return value >= critical ? Severity::kCritical : Severity::kWarning;
}

// Trade price and aggressor of a print, if the event is one. kOrderExecute's side is the
// resting order's: the aggressor is the other side.
inline bool print_of(const Event& e, Price& price, Qty& qty, Side& aggressor) {
  if (e.kind == EventKind::kTrade) {
    price = e.trade.price;
    qty = e.trade.qty;
    aggressor = e.trade.aggressor;
    return true;
  }
  if (e.kind == EventKind::kOrderExecute) {
    price = e.order.price;
    qty = e.order.qty;
    aggressor = e.order.side == Side::kBuy ? Side::kSell : e.order.side == Side::kSell ? Side::kBuy : Side::kNone;
    return true;
  }
  return false;
}

}  // namespace rule_detail
}  // namespace ts
