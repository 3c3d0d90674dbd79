#include "pipeline/pipeline.h"

#include "detect/rule_groups.h"

#include <algorithm>
#include <map>
#include <thread>

#include "core/clock.h"
#include "core/log.h"
#include "core/spsc_ring.h"
#include "pipeline/alert_dispatcher.h"
#include "pipeline/market_board.h"
#include "pipeline/pacer.h"
#include "pipeline/score_board.h"
#include "pipeline/shard_worker.h"

namespace ts {

PipelineOptions PipelineOptions::from_config(const ConfigSection& s) {
  // Ranges: docs/config.md. A ring is bounded so that no value can exhaust memory (event_ring
  // 2^22 events of ~400 bytes is 1.6 GB per shard) or overflow the power-of-two rounding.
  PipelineOptions o;
  o.shards = s.get_in("shards", o.shards, 1, kMaxShards);
  o.event_ring = size_t(s.get_in("event_ring", int64_t(o.event_ring), int64_t(2), int64_t(1) << 22));
  o.alert_ring = size_t(s.get_in("alert_ring", int64_t(o.alert_ring), int64_t(2), int64_t(1) << 20));
  o.speed = s.get_in("speed", o.speed, 0.0, 1e6);
  o.rate = s.get_in("rate", o.rate, 0.0, 1e9);
  o.duration_s = s.get_in("duration_s", o.duration_s, 0.0, 366.0 * 86400);
  o.progress_s = s.get_in("progress_s", o.progress_s, 0.0, 86400.0);
  o.metrics_s = s.get_in("metrics_s", o.metrics_s, 0.0, 86400.0);
  return o;
}

Pipeline::Pipeline(SymbolTable& symbols, const Config& config, PipelineOptions options)
    : symbols_(symbols), config_(config), options_(options) {
  // Read (and so validate) the stages' sections now, at start-up: a bad value throws
  // ConfigError here rather than inside a shard thread, and the keys count as read.
  (void)FeatureOptions::from_config(config.section("features"));
  (void)RuleConfig::from_config(config);
}

Pipeline::~Pipeline() = default;

void Pipeline::add_sink(std::string name, std::shared_ptr<AlertSink> sink) {
  sinks_.emplace_back(std::move(name), std::move(sink));
}

void Pipeline::set_model(serve::ModelServer* server, const ModelAlertOptions& alerts, std::string name,
                         std::shared_ptr<const DecisionValues> values) {
  model_server_ = server;
  model_alerts_ = alerts;
  decision_values_ = std::move(values);
  model_name_ = std::move(name);
}

namespace {

struct ShardThread {
  std::unique_ptr<SpscRing<Event>> ring;
  std::unique_ptr<ShardWorker> worker;
  std::thread thread;
};

// A shard's loop: pop and process until the source is done and the ring is empty. With a
// market board, each processed event offers its symbol's book top to the dashboard (the board
// copies it at most every 100 ms per symbol; otherwise one compare).
void shard_loop(SpscRing<Event>& ring, ShardWorker& worker, const std::atomic<bool>& source_done, MarketBoard* board) {
  BackoffIdle idle;
  Event e;
  auto process = [&] {
    worker.process(e);
    if (board) board->maybe_publish(e.symbol, e.recv_ts_ns, worker.books().top(e.symbol));
  };
  for (;;) {
    size_t n = 0;
    while (n < 256 && ring.try_pop(e)) {
      process();
      ++n;
    }
    n += worker.poll_model();  // model results → decisions → model alerts
    if (n == 0 && source_done.load(std::memory_order_acquire)) {
      while (ring.try_pop(e)) process();
      // Every request out gets its result (the server answers all): wait for them, so no
      // model alert of the run's data is lost.
      while (worker.model_busy()) {
        if (worker.poll_model() == 0) std::this_thread::yield();
      }
      return;
    }
    idle.idle(n);
  }
}

}  // namespace

RunSummary Pipeline::run(Source& source, InputErrors& source_errors, const std::atomic<bool>& stop) {
  RunSummary summary;
  const int nshards = options_.shards;
  DispatcherOptions dopts;
  dopts.ring_capacity = options_.alert_ring;
  AlertDispatcher dispatcher(symbols_, nshards, dopts);
  for (auto& [name, sink] : sinks_) dispatcher.add_sink(name, sink);
  dispatcher.start();

  std::atomic<bool> source_done{false};
  std::vector<ShardThread> shards(nshards);
  for (int i = 0; i < nshards; ++i) {
    shards[i].ring = std::make_unique<SpscRing<Event>>(options_.event_ring);
    shards[i].worker = std::make_unique<ShardWorker>(i, symbols_, config_, &dispatcher, options_.order_tracking);
    if (has_markets_) shards[i].worker->set_markets(markets_);
    if (model_server_) {
      shards[i].worker->attach_model(&model_server_->port(i), model_server_->options(), model_alerts_, model_name_,
                                     decision_values_, model_server_->model_version());
      shards[i].worker->set_score_board(score_board_);
    }
  }
  if (model_server_ && score_board_) {
    score_board_->set_shards(nshards);
    score_board_->set_threshold(model_alerts_.threshold);
  }
  for (auto& s : shards) {
    s.thread = std::thread(shard_loop, std::ref(*s.ring), std::ref(*s.worker), std::cref(source_done), board_);
  }

  // The source loop runs on this thread.
  Pacer pacer(options_.speed, options_.rate);
  const int64_t start_ns = mono_ns();
  // Deadlines saturate at INT64_MAX ("never"): an unset period, or one too long for the clock,
  // must not wrap around (UBSan found start + INT64_MAX in the default no-progress case).
  const auto period_ns = [](double s) -> int64_t {
    return s > 0 && s * 1e9 < 9.2e18 ? int64_t(s * 1e9) : INT64_MAX;
  };
  const auto after = [](int64_t t, int64_t d) { return d > INT64_MAX - t ? INT64_MAX : t + d; };
  const int64_t end_ns = after(start_ns, period_ns(options_.duration_s));
  const int64_t progress_every_ns = period_ns(options_.progress_s);
  int64_t next_progress_ns = after(start_ns, progress_every_ns);
  const int64_t metrics_every_ns = period_ns(options_.metrics_s);
  int64_t next_metrics_ns = after(start_ns, metrics_every_ns);
  uint64_t by_kind[kEventKindCount] = {};
  // Metrics are published as deltas from this (source) thread: counters read from the shards
  // are their own plain counts, read racily but monotonically (a progress figure, not billing).
  prometheus::Counter& events_total = metrics_.counter("events_total", "Input records accepted by the sources");
  prometheus::Counter& stalls_total =
      metrics_.counter("source_stalls_total", "Times the source waited on a full shard ring");
  uint64_t events_published = 0, stalls_published = 0;
  InputErrors errors_published;
  // Feed staleness, per source (the first word of its description: lobster, sse-l2, kafka, sim):
  // the newest exchange time read and the wall time it was received. Alert on
  // `time() - ticksentry_feed_last_receive_time_seconds > 30` (docs/dashboard.md, "Metrics").
  const std::string desc = source.describe();
  const std::map<std::string, std::string> feed = {{"source", desc.substr(0, desc.find(' '))}};
  prometheus::Gauge& feed_exch = metrics_.gauge("feed_last_exchange_time_seconds",
                                                "Newest exchange time read from the source (Unix seconds)", feed);
  prometheus::Gauge& feed_recv = metrics_.gauge("feed_last_receive_time_seconds",
                                                "Wall time the source last delivered an event (Unix seconds)", feed);
  int64_t last_exch_ns = 0, last_recv_wall_ns = 0;
  // The source's feed health (a venue decoder's sequence_gap, ...) as counters per feed.
  FeedCounters feed_now, feed_published;
  auto publish_feed = [&] {
    feed_now.clear();
    source.feed_counters(feed_now);
    for (const auto& [name, counters] : feed_now) {
      for (const auto& [counter, value] : counters) {
        // Created at 0 too, so that `increase(ticksentry_feed_sequence_gap_total[5m]) > 0` has a
        // series from the start.
        prometheus::Counter& c = metrics_.counter("feed_" + counter + "_total",
                                                  "Feed health counted by the source (" + counter + ")", {{"feed", name}});
        uint64_t& before = feed_published[name][counter];
        if (value > before) {
          c.Increment(double(value - before));
          before = value;
        }
      }
    }
  };
  auto publish = [&](const InputErrors& source_errs) {
    publish_feed();
    if (last_recv_wall_ns > 0) {
      feed_exch.Set(double(last_exch_ns) / 1e9);
      feed_recv.Set(double(last_recv_wall_ns) / 1e9);
    }
    events_total.Increment(double(summary.events - events_published));
    events_published = summary.events;
    stalls_total.Increment(double(summary.source_stalls - stalls_published));
    stalls_published = summary.source_stalls;
    for (size_t k = 0; k < kInputErrorCount; ++k) {
      const auto kind = static_cast<InputError>(k);
      const uint64_t now_count = source_errs.count(kind), before = errors_published.count(kind);
      if (now_count > before) {
        metrics_.counter("input_errors_total", "Bad input records, by kind", {{"kind", input_error_name(kind)}})
            .Increment(double(now_count - before));
      }
    }
    errors_published = source_errs;
    dispatcher.publish_metrics(metrics_);
  };
  std::vector<Event> batch(256);
  BackoffIdle idle;
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) {
      summary.interrupted = true;
      break;
    }
    const int64_t now = mono_ns();
    if (now >= end_ns) {
      summary.interrupted = true;
      break;
    }
    if (now >= next_metrics_ns) {
      next_metrics_ns = after(now, metrics_every_ns);
      publish(source_errors);
    }
    if (now >= next_progress_ns) {
      next_progress_ns = after(now, progress_every_ns);
      uint64_t alerts = 0;
      for (auto& s : shards) alerts += s.worker->alerts_emitted();
      publish(source_errors);
      spdlog::info("progress: {} events in {:.1f} s ({:.0f}/s), {} alerts, {} bad records", summary.events,
                   double(now - start_ns) / 1e9, double(summary.events) * 1e9 / double(now - start_ns), alerts,
                   source_errors.total());
    }
    const size_t n = source.next_batch(batch);
    if (n == 0) {
      if (source.done()) break;
      idle.idle(0);
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      Event& e = batch[i];
      // A paced run can sleep long for one event (a market's lunch break): the wait itself
      // ends at the deadline or on SIGINT, and the event it waited for is not released.
      const std::optional<int64_t> released = pacer.wait_until_due(e.exch_ts_ns, stop, end_ns);
      if (!released) {
        summary.events += i;
        summary.interrupted = true;
        goto drained;  // NOLINT: leave both loops; the rest of the batch is not consumed
      }
      e.recv_ts_ns = *released;
      ++by_kind[static_cast<int>(e.kind)];
      auto& ring = *shards[e.symbol % uint32_t(nshards)].ring;
      if (!ring.try_push(e)) {
        ++summary.source_stalls;
        while (!ring.try_push(e)) std::this_thread::yield();
      }
      // Paced runs can wait long inside a batch: check the limits per event there.
      if (!pacer.unpaced() && (e.recv_ts_ns >= end_ns || stop.load(std::memory_order_relaxed))) {
        summary.events += i + 1;
        summary.interrupted = true;
        goto drained;  // NOLINT: leave both loops; the rest of the batch is not consumed
      }
    }
    summary.events += n;
    last_recv_wall_ns = wall_ns();  // one clock read a batch
    last_exch_ns = std::max(last_exch_ns, batch[n - 1].exch_ts_ns);
  }
drained:
  source_done.store(true, std::memory_order_release);
  for (auto& s : shards) s.thread.join();
  dispatcher.stop();
  summary.wall_s = double(mono_ns() - start_ns) / 1e9;

  InputErrors all = source_errors;
  for (auto& s : shards) {
    all.merge(s.worker->errors());
    summary.alert_latency.merge(s.worker->alert_latency());
    summary.event_latency.merge(s.worker->event_latency());
    summary.events_processed += s.worker->processed();
    if (has_markets_) {
      const PhaseCounters& pc = s.worker->phase_counters();
      summary.phases["disagreements"] += pc.disagreements;
      summary.phases["refinements"] += pc.refinements;
      summary.phases["no_schedule"] += pc.no_schedule;
    }
    if (profiles_out_) s.worker->features().save_profiles(*profiles_out_);
  }
  summary.errors = all.by_kind();
  publish(all);
  summary.feed = feed_now;
  for (size_t i = 0; i < sinks_.size(); ++i) {
    if (const uint64_t n = dispatcher.sink_errors(i)) summary.errors["sink_" + sinks_[i].first] = n;
  }
  for (int k = 0; k < kEventKindCount; ++k) {
    if (by_kind[k]) summary.events_by_kind[event_kind_name(static_cast<EventKind>(k))] = by_kind[k];
  }
  for (int t = 0; t < kAlertTypeCount; ++t) {
    const uint64_t c = dispatcher.alerts_by_type(static_cast<AlertType>(t));
    if (c) summary.alerts[alert_type_name(static_cast<AlertType>(t))] = c;
  }
  return summary;
}

}  // namespace ts
