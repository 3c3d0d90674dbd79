#pragma once
// LiveFeed: the dashboard's clock. Once per `interval_ms` (default 1000) its own thread
//  - reads the MarketBoard for every symbol and publishes the ones that changed as one SSE
//    "ticks" message: [{"s": "AAPL", "p": last price, "v": cum volume, "b": best bid,
//    "a": best ask, "t": exchange time, Unix s}] (prices in currency). "t" is the exchange time
//    of the symbol's last book change (a replay's chart shows the replayed day), the wall clock
//    only for a symbol whose feed carries no exchange time;
//  - appends each changed symbol's (t, price, volume) to its history: one point per tick for the
//    last `history_points`, and one per exchange minute for the last `minute_points`;
//  - takes each scored symbol's peak model probability of the last tick from the ScoreBoard
//    (when one is attached), keeps it as the symbol's probability history and publishes an SSE
//    "scores" message: [{"s", "m": peak probability, "t": Unix s, the symbol's exchange time as
//    for "ticks"}];
//  - takes the AlertStream's latency window and the pipeline's counters (events/s over the last
//    5 ticks: the pipeline publishes its counter about once a second too) and publishes an SSE
//    "stats" message: {"t", "events_per_s", "alerts_per_s", "alerts_silenced", "events_total",
//    "alerts_total", "latency_us": {stage: {"p50","p99","p999","count"}}}, kept for the last
//    `stats_points` ticks (stats_json()). While a model serves, the message gains "model": the
//    serving panels' numbers (serving_stats.h).
// Symbol names are read from the SymbolTable for ids below its size() (safe from any thread,
// see core/symbol_table.h); the feed keeps its own name → id map for lookups by the API.
// Threading: start()/stop() from the owner; the *_json() readers from any HTTP thread.
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <prometheus/counter.h>

#include "core/metrics.h"
#include "core/symbol_table.h"
#include "http/alert_stream.h"
#include "http/event_hub.h"
#include "http/serving_stats.h"
#include "pipeline/market_board.h"
#include "pipeline/score_board.h"

namespace ts::http {

struct LiveFeedOptions {
  int interval_ms = 1000;
  size_t history_points = 600;  // per symbol (10 min at 1 s)
  size_t minute_points = 1440;  // per symbol, one per exchange minute (a day)
  size_t stats_points = 600;
};

class LiveFeed {
 public:
  // Everything passed must outlive the feed. `board` and `alerts` may be null (no market view,
  // no latency stats).
  LiveFeed(const SymbolTable& symbols, MarketBoard* board, AlertStream* alerts, EventHub& hub, Metrics& metrics,
           LiveFeedOptions options = {});
  ~LiveFeed();  // stop()

  // Runs `fn` on the feed's thread at every tick (e.g. GpuTelemetry::sample); before start().
  void set_on_tick(std::function<void()> fn) { on_tick_ = std::move(fn); }
  // The model's probabilities and end-to-end latency (src/app feeds it); before start().
  void set_scores(ScoreBoard* scores) {
    scores_ = scores;
    serving_ = ServingStats(metrics_, scores);
  }
  void start();
  void stop();
  // Runs one tick on the caller's thread (tests; the feed thread calls it every interval).
  void tick();

  // {"symbols": [{"s", "name", "p", "v", "b", "a", "market"}]} sorted by symbol (symbols published
  // so far; "name" and "market" as in symbol_json).
  std::string symbols_json() const;
  // {"symbol", "name" (the instruments reference file's `name` column; "" where it gives none),
  //  "tick_size", "last", "volume", "bids": [[price, qty]], "asks": [...],
  //  "history": [[t, price, volume]], "probability": [[t, peak probability]], "threshold",
  //  "market": {"exch_ts_ns" (string), "phase", "prev_close" (0 = unknown), "change_pct"
  //  (null without a previous close), "currency", "lot_size" (shares per board lot),
  //  "price_decimals", "time_zone" (IANA), "utc_offset_s", "limit_up", "limit_down" (0 = none)}};
  // empty string when the symbol is unknown. "threshold" is 0 when no model serves.
  std::string symbol_json(const std::string& name) const;
  // {"symbol", "points": [[t, price, volume]]} with exchange time t (Unix s) in
  // [from_ns, to_ns]: the per-tick points where they reach back, per-minute points before;
  // empty string when the symbol is unknown.
  std::string history_json(const std::string& name, int64_t from_ns, int64_t to_ns) const;
  // {"points": [stats message, ...]} oldest first.
  std::string stats_json() const;
  uint64_t ticks() const { return ticks_.load(std::memory_order_relaxed); }

 private:
  struct SymbolView {
    uint64_t version = 0;
    QuoteSnapshot quote;
    std::deque<std::array<double, 3>> history;  // t (exchange Unix s), price, volume
    std::deque<std::array<double, 3>> minutes;  // the same, the last point of each minute
    std::deque<std::array<double, 2>> scores;   // t (Unix s), peak probability in that tick
  };
  void run();
  double total_counter(const std::string& family) const;

  const SymbolTable& symbols_;
  MarketBoard* board_;
  AlertStream* alerts_;
  EventHub& hub_;
  Metrics& metrics_;
  const LiveFeedOptions options_;
  ScoreBoard* scores_ = nullptr;
  ServingStats serving_{metrics_, nullptr};  // feed thread only

  mutable std::mutex mu_;  // guards everything below (feed thread writes, HTTP threads read)
  std::vector<SymbolView> views_;
  std::unordered_map<std::string, SymbolId> ids_;
  std::deque<std::string> stats_;
  std::deque<std::pair<int64_t, double>> events_seen_;  // (mono ns, events_total), last 5 ticks
  double last_alerts_ = 0;
  int64_t last_tick_ns_ = 0;

  std::function<void()> on_tick_;
  std::atomic<uint64_t> ticks_{0};
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ts::http
