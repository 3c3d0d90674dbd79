#pragma once
// The pipeline: source (the calling thread) → per-shard event rings → shard threads
// (book → features → rules) → alert dispatcher (sink thread: stdout, JSONL, SQLite audit).
// Symbols are sharded by id % shards. The event ring from the source to a shard blocks when
// full (replay is back-pressured, nothing is dropped); stalls are counted.
// Shutdown: `stop` (set by SIGINT/SIGTERM) or the duration ends the source loop; the shards
// drain their rings, then the dispatcher drains and flushes every queued alert.
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "book/book_set.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "core/metrics.h"
#include "core/symbol_table.h"
#include "detect/alert_sink.h"
#include "detect/model_alert.h"
#include "ingest/source.h"
#include "pipeline/run_summary.h"
#include "pipeline/shard_worker.h"
#include "serve/model_server.h"

namespace ts {

class MarketBoard;
class ScoreBoard;

struct PipelineOptions {
  static constexpr int kMaxShards = 256;
  int shards = 1;                                              // shard threads; symbols are split by id % shards
  size_t event_ring = 1 << 16;                                 // events per shard ring (power of two)
  size_t alert_ring = 1 << 12;                                 // alerts per shard ring to the sink thread
  double speed = 0;                                            // 0 = as fast as possible; 1 = real time by exchange time
  double rate = 0;                                             // > 0: fixed-rate pacing in events/s (overrides speed)
  double duration_s = 0;                                       // wall-clock limit; 0 = until the source ends or a signal
  double progress_s = 5;                                       // progress line to stderr every N s; 0 = never
  double metrics_s = 1;                                        // Prometheus counters published every N s (and at the end)
  OrderTracking order_tracking = OrderTracking::kAuto;         // set by the command from the source format
  static PipelineOptions from_config(const ConfigSection& s);  // section "pipeline"
};

class Pipeline {
 public:
  Pipeline(SymbolTable& symbols, const Config& config, PipelineOptions options);
  ~Pipeline();
  // `name` labels the sink's error counters ("stdout", "jsonl", "sqlite").
  void add_sink(std::string name, std::shared_ptr<AlertSink> sink);
  // The dashboard's per-symbol view (pipeline/market_board.h): each shard thread offers it the
  // book top of the symbol it just processed; the board keeps at most one copy per symbol per
  // interval (no lock, no allocation). Before run(); `board` must outlive it; null = none.
  void set_market_board(MarketBoard* board) { board_ = board; }
  // The dashboard's model view (pipeline/score_board.h): with a model, each shard hands every
  // serving-version result (symbol, probability, end-to-end latency) to the board. Before run();
  // `board` must outlive it; null = none.
  void set_score_board(ScoreBoard* board) { score_board_ = board; }
  // Model alerts: shard i sends its requests to server->port(i) (the server must have been
  // started for options.shards shards and outlive run()) when `alerts`' trigger says so, and
  // decides on the results with `alerts`' values. The summary gains `model`.
  // `values`: the decision values published per model version (a hot swap's threshold; see
  // detect/decision_values.h); null = `alerts` for the whole run.
  void set_model(serve::ModelServer* server, const ModelAlertOptions& alerts, std::string name,
                 std::shared_ptr<const DecisionValues> values = nullptr);
  // Markets: each shard resolves phases with `markets.calendars` and starts volume profiles from
  // `markets.profiles_in`; after the run, every symbol's profile is copied into `profiles_out`
  // (null: not kept). The summary gains phases{...}. Before run(); both must outlive it.
  void set_markets(const MarketContext& markets, ProfileStore* profiles_out) {
    markets_ = markets;
    has_markets_ = true;
    profiles_out_ = profiles_out;
  }
  // Runs `source` to its end (or until `stop`/duration). `source_errors` are the errors the
  // source reported (merged into the summary). Call once.
  RunSummary run(Source& source, InputErrors& source_errors, const std::atomic<bool>& stop);
  // The run's Prometheus registry (served on /metrics by src/http). Updated from the source
  // thread every metrics_s and at the end: ticksentry_events_total,
  // ticksentry_input_errors_total{kind}, ticksentry_alerts_total{type}, sink errors, publish
  // waits, ticksentry_source_stalls_total.
  Metrics& metrics() { return metrics_; }

 private:
  SymbolTable& symbols_;
  const Config& config_;
  PipelineOptions options_;
  std::vector<std::pair<std::string, std::shared_ptr<AlertSink>>> sinks_;
  Metrics metrics_;
  MarketBoard* board_ = nullptr;
  ScoreBoard* score_board_ = nullptr;
  serve::ModelServer* model_server_ = nullptr;
  ModelAlertOptions model_alerts_;
  std::shared_ptr<const DecisionValues> decision_values_;
  std::string model_name_;
  MarketContext markets_;
  bool has_markets_ = false;
  ProfileStore* profiles_out_ = nullptr;
};

}  // namespace ts
