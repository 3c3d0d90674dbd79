#pragma once
// One shard: owns its symbols' books, feature state and rule state outright (no locks) and runs
// book → features → rules for each event it is given. Alerts go to the dispatcher's ring for
// this shard; a full alert ring blocks (alerts are never dropped).
// Threading: process() is called by exactly one thread (the shard's loop, or the caller in
// single-threaded benchmarks).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "book/book_set.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "core/latency_histogram.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "detect/decision_values.h"
#include "detect/model_alert.h"
#include "detect/model_decision.h"
#include "detect/rule_groups.h"
#include "features/feature_engine.h"
#include "serve/serve_options.h"
#include "serve/shard_port.h"

namespace ts {

class AlertDispatcher;
class ScoreBoard;

// What a run knows of its markets (all optional): the calendars that give each symbol its
// session schedule (phases: book/phase_resolver.h), how bare tickers are read when a symbol has
// no instrument, and the volume profiles to start from (features/volume_profile.h).
struct MarketContext {
  const MarketCalendars* calendars = nullptr;
  InstrumentDefaults defaults;
  const ProfileStore* profiles_in = nullptr;
};

class ShardWorker {
 public:
  // `dispatcher` may be null (benchmarks): alerts are then counted and discarded.
  // `tracking`: whether books keep an order-id map (feeds that cancel/trade by order number
  // without a price, like SSE, need it; LOBSTER and the simulator carry price and side).
  ShardWorker(int shard, const SymbolTable& symbols, const Config& config, AlertDispatcher* dispatcher,
              OrderTracking tracking = OrderTracking::kAuto);

  // Phases from the schedule and the starting volume profiles. Before the first process().
  void set_markets(const MarketContext& markets);
  const PhaseCounters& phase_counters() const { return phases_ ? phases_->counters() : no_phases_; }

  // Runs one event through book → features → rules. Stamps stage times; records latencies.
  // With a model attached, also queues the symbol's window as an inference request when the
  // trigger says so (ModelAlertOptions::trigger / every_n / min_rows).
  void process(const Event& e);

  // Model alerts (src/serve): requests go to `port`, results come back through poll_model();
  // `serving` gives the deadline and lossless policy, `alerts` the trigger and the decision
  // (detect/model_alert.h). Before the shard thread starts. `port` must outlive the worker's use of it.
  // `values`: the decision values published per version (a hot swap's new threshold); the
  // shard's decision follows the serving results' version (detect/decision_values.h). Null: the
  // decision keeps `alerts` for the whole run. `version`: the serving version at start.
  void attach_model(serve::ShardPort* port, const serve::ServeOptions& serving, const ModelAlertOptions& alerts,
                    const std::string& model_name, std::shared_ptr<const DecisionValues> values = nullptr,
                    uint32_t version = 0);
  // The dashboard's model view: every serving-version result (symbol, probability, end-to-end
  // latency) is handed to `board` (pipeline/score_board.h: no allocation, never waits). Before the
  // shard thread starts; null = none.
  void set_score_board(ScoreBoard* board) { scores_ = board; }
  // Handles the inference results waiting: decision → model alert. Returns the number handled.
  size_t poll_model();
  // Whether requests are still out (results not yet polled).
  bool model_busy() const { return port_ && port_->free_slots() != port_->slot_count(); }
  const serve::ShardPort* model_port() const { return port_; }

  int shard() const { return shard_; }
  uint64_t processed() const { return processed_; }
  // Read by the pipeline's progress line while the shard thread runs (one writer, relaxed).
  uint64_t alerts_emitted() const { return alerts_emitted_.load(std::memory_order_relaxed); }
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
  void emit(Alert& a, const float* window);  // a model alert with the window that fed it
  void capture_book(Alert& a) const;          // the symbol's top levels into a.book
  // The shard thread is the only writer: a relaxed load and store, no locked add per alert.
  void count_alert() { alerts_emitted_.store(alerts_emitted_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  int shard_;
  const SymbolTable& symbols_;
  BookSet books_;
  std::unique_ptr<PhaseResolver> phases_;
  PhaseCounters no_phases_;
  FeatureEngine features_;
  RuleSet rules_;  // [rules] and [[rules.groups]]
  AlertDispatcher* dispatcher_;
  InputErrors errors_;
  LatencyHistogram alert_latency_;
  LatencyHistogram event_latency_;
  uint64_t processed_ = 0;
  std::atomic<uint64_t> alerts_emitted_{0};
  Alert fired_[kRuleTypeCount];  // rules write here; one per type at most, so no overflow
  // Model alerts.
  struct ModelSymbolState {
    uint64_t pushes = 0;  // window rows seen at the last request check
    uint64_t count = 0;   // trigger count (rows or events)
  };
  void maybe_request(const Event& e, const StageTimes& t, const float* row);
  serve::ShardPort* port_ = nullptr;
  ModelAlertOptions alert_opts_;
  int64_t deadline_us_ = 0;
  bool lossless_ = false;
  char model_name_[ModelScore::kMaxName] = {};
  ScoreBoard* scores_ = nullptr;
  std::unique_ptr<ModelDecision> decision_;
  std::unique_ptr<ModelDecision> shadow_decision_;
  std::unique_ptr<DecisionFollower> follower_;  // the serving decision follows hot swaps  // the shadow version's own hysteresis/cooldown
  std::vector<ModelSymbolState> model_state_;
  Alert model_alert_;
  bool stage_timing_ = true;
};

}  // namespace ts
