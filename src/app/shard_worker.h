#pragma once
// One shard: owns its symbols' books, feature state and rule state outright (no locks) and runs
// book → features → rules for each event it is given. Alerts go to the dispatcher's ring for
// this shard; a full alert ring blocks (alerts are never dropped).
// Threading: process() is called by exactly one thread (the shard's loop, or the caller in
// single-threaded benchmarks).
#include <cstdint>

#include "book/book_set.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "core/latency_histogram.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "detect/rule_engine.h"
#include "features/feature_engine.h"

namespace ts {

class AlertDispatcher;

class ShardWorker {
 public:
  // `dispatcher` may be null (benchmarks): alerts are then counted and discarded.
  // `tracking`: whether books keep an order-id map (feeds that cancel/trade by order number
  // without a price, like SSE, need it; LOBSTER and the simulator carry price and side).
  ShardWorker(int shard, const SymbolTable& symbols, const Config& config, AlertDispatcher* dispatcher,
              OrderTracking tracking = OrderTracking::kAuto);

  // Runs one event through book → features → rules. Stamps stage times; records latencies.
  void process(const Event& e);

  int shard() const { return shard_; }
  uint64_t processed() const { return processed_; }
  uint64_t alerts_emitted() const { return alerts_emitted_; }
  const InputErrors& errors() const { return errors_; }
  InputErrors& mutable_errors() { return errors_; }
  const LatencyHistogram& alert_latency() const { return alert_latency_; }
  const LatencyHistogram& event_latency() const { return event_latency_; }
  const BookSet& books() const { return books_; }
  const FeatureEngine& features() const { return features_; }
  // Time-stamping costs two clock reads per event; benchmarks of pure throughput may turn it off.
  void set_stage_timing(bool on) { stage_timing_ = on; }

 private:
  void emit(Alert& a);

  int shard_;
  BookSet books_;
  FeatureEngine features_;
  RuleEngine rules_;
  AlertDispatcher* dispatcher_;
  InputErrors errors_;
  LatencyHistogram alert_latency_;
  LatencyHistogram event_latency_;
  uint64_t processed_ = 0;
  uint64_t alerts_emitted_ = 0;
  Alert fired_[kAlertTypeCount];  // rules write here; one per type at most, so no overflow
  bool stage_timing_ = true;
};

}  // namespace ts
