#include "app/commands.h"

#include <cstdio>
#include <memory>

#include "app/first_input_error.h"
#include "app/market_wiring.h"
#include "app/run_wiring.h"
#include "app/input_selection.h"
#include "core/config.h"
#include "core/log.h"
#include "ingest/csv_writer.h"
#include "ingest/kafka_source.h"
#include "ingest/open_source.h"
#include "ingest/sim/simulator.h"
#include "ingest/ws/ws_source.h"

namespace ts {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

Config load_config(const std::string& path) {
  if (path.empty()) return Config();
  return Config::load_file(path);
}

SimOptions sim_options(const Config& config, std::optional<int> symbols, std::optional<uint64_t> seed,
                       std::optional<double> sim_seconds) {
  SimOptions o = SimOptions::from_config(config.section("sim"));
  if (symbols) o.symbols = *symbols;
  if (seed) o.seed = *seed;
  if (sim_seconds) o.duration_s = *sim_seconds;
  return o;
}

// What a live run (kafka, ws) sets up before its source: the config, the symbol table with the
// markets' instruments and calendars, and the source's error counts. [sim] is read too so one
// config file serves every command without "unknown key" warnings.
struct LiveStart {
  Config config;
  SymbolTable symbols;
  InputErrors source_errors;
  MarketWiring markets;
  bool build(const CommonOptions& c) {
    config = load_config(c.config_path);
    if (!markets.build(config, c, symbols, source_errors)) return false;
    (void)SimOptions::from_config(config.section("sim"));
    return true;
  }
};

// `run --source kafka`: consume market data from a topic (docs/kafka.md). Offsets are committed
// only after the pipeline has drained and every sink (the audit store among them) has flushed.
int run_kafka(const CommonOptions& c, const KafkaRunOptions& k, const std::atomic<bool>& stop) {
  LiveStart start;
  if (!start.build(c)) return kExitUsage;
  Config& config = start.config;
  SymbolTable& symbols = start.symbols;
  InputErrors& source_errors = start.source_errors;
  MarketWiring& markets = start.markets;
  const KafkaSourceOptions ko = kafka_source_options(config, c.config_path, k);
  RunWiring wiring(config, c, symbols);
  if (!wiring.build(
          {.default_speed = 0.0, .order_tracking = OrderTracking::kAuto, .dashboard_default = false, .kafka = k})) {
    return kExitUsage;
  }
  markets.attach(wiring.pipeline());
  auto source = KafkaSource::open(ko, symbols, source_errors, &wiring.pipeline().metrics());
  if (!source.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", source.status().to_string().c_str());
    return kExitUsage;
  }
  spdlog::info("run: {} at {}", source.value()->describe(), ko.brokers);
  RunSummary summary = wiring.run(*source.value(), source_errors, stop);
  if (Status st = source.value()->commit(); !st.is_ok()) spdlog::error("{}", st.to_string());
  source.value()->flush_metrics();
  const KafkaSourceStats ks = source.value()->stats();
  spdlog::info("kafka: {} messages, {} events, {} bad ({} to the dead-letter topic), {} lost, lag {}", ks.messages,
               ks.decoded, ks.decode_errors, ks.dlq, ks.lost_messages, ks.lag_messages);
  if (ks.lost_messages > 0) summary.errors["lost_messages"] += ks.lost_messages;
  if (!markets.finish(summary)) return kExitUsage;
  const int rc = wiring.finish(summary);
  if (rc == kExitOk && ks.lost_messages > 0 && source.value()->loss_is_error()) {
    std::fprintf(stderr,
                 "ticksentry: kafka: %llu messages of %s were lost before this run could read them (%llu read); "
                 "the log above names the partitions and offsets. Set [kafka.consumer] auto.offset.reset "
                 "to accept starting where the topic now begins.\n",
                 (unsigned long long)ks.lost_messages, ko.topic.c_str(), (unsigned long long)ks.messages);
    return kExitFailed;
  }
  return rc;
}

// `run --source ws`: a venue websocket decoded live (docs/formats.md "Websocket source").
int run_ws(const CommonOptions& c, const WsRunOptions& w, const std::atomic<bool>& stop) {
  LiveStart start;
  if (!start.build(c)) return kExitUsage;
  if (w.venue.empty() || w.url.empty()) {
    std::fprintf(stderr, "ticksentry: --source ws needs --venue and --url\n");
    return kExitUsage;
  }
  if (w.max_attempts < 0) {
    std::fprintf(stderr, "ticksentry: --ws-max-attempts must be >= 0\n");
    return kExitUsage;
  }
  RunWiring wiring(start.config, c, start.symbols);
  // Venue books are kept by the decoder (snapshots with resync): no order-id map.
  if (!wiring.build({.default_speed = 0.0, .order_tracking = OrderTracking::kOff, .dashboard_default = false})) {
    return kExitUsage;
  }
  start.markets.attach(wiring.pipeline());
  WsClientOptions o;
  o.url = w.url;
  o.rest_snapshot_urls = w.rest_urls;
  o.subscribe = w.subscribe;
  o.max_attempts = w.max_attempts;
  o.ca_file = w.ca_file;
  auto source = WsSource::open(w.venue, o, start.symbols, start.source_errors);
  if (!source.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", source.status().to_string().c_str());
    return kExitUsage;
  }
  spdlog::info("run: {}", source.value()->describe());
  RunSummary summary = wiring.run(*source.value(), start.source_errors, stop);
  source.value()->stop();
  summary.feed.clear();  // the counts after the client stopped, not as of the pipeline's last batch
  source.value()->feed_counters(summary.feed);
  const WsClientStats& cs = source.value()->client_stats();
  const crypto::DecoderCounters& dc = source.value()->counters();
  spdlog::info("ws: {} connections, {} messages, {} snapshots, {} failed connects; decoder: {} gaps, {} stale books, "
               "{} checksum mismatches{}",
               cs.connections.load(), cs.messages.load(), cs.snapshots.load(), cs.failed_attempts.load(),
               dc.sequence_gap, dc.stale_books, dc.checksum_mismatch,
               source.value()->last_error().empty() ? "" : "; last error: " + source.value()->last_error());
  if (!start.markets.finish(summary)) return kExitUsage;
  const int rc = wiring.finish(summary);
  // A certificate that does not verify is a setting to fix (--ca-file, the URL's host), not a
  // feed that ended: exit 2 with the reason. A client that never connected failed its job.
  if (source.value()->fatal()) {
    std::fprintf(stderr, "ticksentry: %s: %s\n", w.url.c_str(), source.value()->last_error().c_str());
    return kExitUsage;
  }
  if (rc == kExitOk && cs.connections.load() == 0 && !summary.interrupted) {
    std::fprintf(stderr, "ticksentry: %s: no connection in %llu attempts; the last error: %s\n", w.url.c_str(),
                 (unsigned long long)cs.failed_attempts.load(), source.value()->last_error().c_str());
    return kExitFailed;
  }
  return rc;
}

}  // namespace

int command_run(const CommonOptions& c, const RunOptions& r, const std::atomic<bool>& stop) {
  if (r.source == "kafka") return run_kafka(c, r.kafka, stop);
  if (r.source == "ws") return run_ws(c, r.ws, stop);
  if (r.source != "sim") {
    std::fprintf(stderr, "ticksentry: --source must be sim, kafka or ws, not '%s'\n", r.source.c_str());
    return kExitUsage;
  }
  Config config = load_config(c.config_path);
  SymbolTable symbols;
  SimOptions so = sim_options(config, r.symbols, r.seed, r.sim_seconds);
  if (so.symbols < 1 || so.symbols > 5000) {
    std::fprintf(stderr, "ticksentry: --symbols must be in 1..5000\n");
    return kExitUsage;
  }
  InputErrors source_errors;
  MarketWiring markets;
  if (!markets.build(config, c, symbols, source_errors)) return kExitUsage;
  Simulator sim(so, symbols);
  // `run` is a live demo by default: the simulator is paced at real time, with its dashboard.
  RunWiring wiring(config, c, symbols);
  // The simulator gives price and side on every update: no order-id map.
  if (!wiring.build({.default_speed = 1.0, .order_tracking = OrderTracking::kOff, .dashboard_default = true})) {
    return kExitUsage;
  }
  markets.attach(wiring.pipeline());
  const PipelineOptions& po = wiring.options();
  spdlog::info("run: simulator with {} symbols, seed {}, speed {}{}", so.symbols, so.seed, po.speed,
               po.duration_s > 0 ? fmt::format(", {} s", po.duration_s) : ", until Ctrl-C");
  RunSummary summary = wiring.run(sim, source_errors, stop);
  const std::string labels = !r.labels_path.empty() ? r.labels_path : so.labels_path;
  if (!labels.empty()) {
    if (Status st = sim.write_labels(labels); !st.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
    }
  }
  if (!markets.finish(summary)) return kExitUsage;
  return wiring.finish(summary);
}

int command_replay(const CommonOptions& c, const ReplayOptions& r, const std::atomic<bool>& stop) {
  Config config = load_config(c.config_path);
  SymbolTable symbols;
  InputErrors source_errors;
  MarketWiring markets;
  if (!markets.build(config, c, symbols, source_errors)) return kExitUsage;
  FirstInputError first_error;
  auto source = open_source(r.format, r.paths, symbols, source_errors, r.layout);
  if (!source.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", source.status().to_string().c_str());
    return kExitUsage;
  }
  auto selected = InputSelection::open(*source.value(), symbols, r.select);
  if (!selected.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", selected.status().to_string().c_str());
    return kExitUsage;
  }
  Source& filtered = selected.value()->source();
  // One config file serves every command: read [sim] too so its keys are not "unknown" here.
  (void)SimOptions::from_config(config.section("sim"));
  RunWiring wiring(config, c, symbols);
  // LOBSTER messages carry price and side; SSE deletes and trades (and mapped layouts of such
  // feeds) name orders by number only.
  const OrderTracking tracking = r.format == "lobster" ? OrderTracking::kOff : OrderTracking::kAuto;
  if (!wiring.build({.default_speed = 0.0, .order_tracking = tracking, .dashboard_default = false})) return kExitUsage;
  markets.attach(wiring.pipeline());
  spdlog::info("replay: {}", filtered.describe());
  RunSummary summary = wiring.run(filtered, source_errors, stop);
  summary.unpaced_replay = wiring.options().speed <= 0 && wiring.options().rate <= 0;
  selected.value()->report();
  if (!markets.finish(summary)) return kExitUsage;
  const int code = wiring.finish(summary);
  // A file that yields no valid record at all (a wrong --format, a wrong file) is an error.
  if (first_error.no_valid_record(summary.events + selected.value()->skipped(), source_errors, filtered.describe())) {
    return kExitUsage;
  }
  return code;
}

int command_record(const RecordOptions& r, const std::atomic<bool>& stop) {
  SymbolTable symbols;
  InputErrors errors;
  FirstInputError first_error;
  std::unique_ptr<Source> source;
  if (r.format == "sim") {
    Config config;
    SimOptions so = sim_options(config, r.symbols, r.seed, r.sim_seconds.value_or(60.0));
    source = std::make_unique<Simulator>(so, symbols);
  } else {
    auto opened = open_source(r.format, r.paths, symbols, errors, r.layout);
    if (!opened.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", opened.status().to_string().c_str());
      return kExitUsage;
    }
    source = std::move(opened).value();
  }
  auto selected = InputSelection::open(*source, symbols, r.select);
  if (!selected.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", selected.status().to_string().c_str());
    return kExitUsage;
  }
  Source& filtered = selected.value()->source();
  auto writer = CsvWriter::open(r.out);
  if (!writer.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", writer.status().to_string().c_str());
    return kExitUsage;
  }
  std::vector<Event> batch(1024);
  uint64_t written = 0;
  while (!stop.load()) {
    const size_t n = filtered.next_batch(batch);
    if (n == 0 && filtered.done()) break;
    for (size_t i = 0; i < n; ++i) {
      if (Status st = writer.value().write(batch[i], symbols); !st.is_ok()) {
        std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
        return 1;
      }
    }
    written += n;
  }
  if (Status st = writer.value().close(); !st.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
    return 1;
  }
  std::fprintf(stderr, "recorded %llu events from %s to %s (%llu bad records skipped)\n", (unsigned long long)written,
               filtered.describe().c_str(), r.out.c_str(), (unsigned long long)errors.total());
  selected.value()->report();
  if (first_error.no_valid_record(written + selected.value()->skipped(), errors, filtered.describe())) return kExitUsage;
  return kExitOk;
}

}  // namespace ts
