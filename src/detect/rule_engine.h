#pragma once
// Rule-based detection: 快速拉升, 加速下跌, 高台跳水, 大笔买入/卖出, 触及涨停/跌停,
// 封涨停/打开涨停, 封跌停/打开跌停, 封单量骤减 (both sides), spread widening, book imbalance, volume burst,
// 大单挂单. Thresholds are relative to the symbol's own statistics by default (volatility,
// typical spread, typical one-minute notional flow, typical depth), absolute per rule on request.
// Conditions, defaults, severities and cooldowns: docs/rules.md.
//
// Threading: one RuleEngine per shard thread; it owns the rule state of the symbols that shard
// sees. Not thread-safe. The SymbolTable must outlive the engine (read-only lookups by id).
#include <cstdint>
#include <vector>

#include "book/book_top.h"
#include "core/event.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "detect/rule_options.h"
#include "detect/rule_state.h"
#include "features/feature_engine.h"

namespace ts {

class RuleEngine {
 public:
  // `shard` goes into the top 16 bits of alert ids so ids are unique across shards.
  RuleEngine(const SymbolTable& symbols, RuleOptions opts, uint32_t shard = 0);

  // Evaluates every rule for the event's symbol, after the book and features have been
  // updated with `e`. `features` is the symbol's feature row (kFeatureCount floats indexed by
  // FeatureId); nullptr is read as all zeros. Appends fired alerts to out[0..max_out) and
  // returns how many; alerts beyond max_out are dropped and counted in overflow() (pass
  // kRuleTypeCount slots and that never happens). No logging; allocates only the first time a
  // symbol id beyond the current state table is seen (call reserve() at start-up to avoid it).
  // Starts loading a symbol's rule state into cache (the shard calls it before the book and
  // features run, so the miss overlaps their work). No effect for a symbol not seen yet.
  void prefetch(SymbolId id) const {
    if (id < states_.size()) {
      const char* p = reinterpret_cast<const char*>(&states_[id]);
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
    }
  }
  // `volume` is the symbol's 60 s volume against its profile (FeatureEngine::volume()); null
  // is read as unknown (volume_burst stays silent).
  int evaluate(const Event& e, const BookTop& book, const float* features, StageTimes t,
               Alert* out, int max_out, const VolumeWindow* volume = nullptr);

  // Sizes the per-symbol state for ids [0, symbol_count).
  void reserve(size_t symbol_count);
  const RuleOptions& options() const { return opts_; }
  uint64_t overflow() const { return overflow_; }
  uint64_t alerts_fired() const { return next_id_ & ((uint64_t(1) << 48) - 1); }

 private:
  struct Ctx;  // per-call scratch: event, book, row, output buffer
  SymbolRuleState& state_for(SymbolId id);
  void new_day(SymbolRuleState& s, int64_t day);
  // Fires `type` if its gate allows; returns the alert to fill, or nullptr.
  Alert* gate_fire(Ctx& c, AlertType type, Severity sev, Price price);
  Alert* emit(Ctx& c, AlertType type, Severity sev, Price price);

  void check_trend(Ctx& c, Price p);
  void check_high_dive(Ctx& c, Price p);
  void check_large_trade(Ctx& c);
  void check_large_order(Ctx& c);
  void check_limit_up(Ctx& c);
  void check_limit_down(Ctx& c);
  void check_limit_touch(Ctx& c, Price p, bool up);
  void check_queue_shrink(Ctx& c, AlertType type, const QueueShrinkOptions& o, Price limit, Qty q);
  void check_book(Ctx& c, Price p);

  const SymbolTable& symbols_;
  RuleOptions opts_;
  int64_t cooldown_ns_[kRuleTypeCount];
  int64_t hold_ns_[kRuleTypeCount];
  uint64_t id_base_;
  uint64_t next_id_ = 0;
  uint64_t overflow_ = 0;
  std::vector<SymbolRuleState> states_;
};

}  // namespace ts
