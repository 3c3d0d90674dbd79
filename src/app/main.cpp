// ticksentry command line: run, replay, record (the alert pipeline) and build, bench, inspect,
// infer (the inference engine, trtexec-like; src/app/engine_commands.h).
// Exit codes: 0 success (bad records are counted, not fatal); 2 usage errors, missing files,
// unknown formats, bad config; 1 unexpected internal failure.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>

#include "app/audit_command.h"
#include "app/commands.h"
#include "app/engine_commands.h"
#include "app/eval_command.h"
#include "app/features_command.h"
#include "app/replay_failure_command.h"
#include "app/models_command.h"
#include "app/kafka_commands.h"
#include "ingest/open_source.h"
#include "app/notify_command.h"
#include "app/silence_command.h"
#include "core/log.h"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ticksentry: low-latency market-data anomaly alerts"};
  app.require_subcommand(1);
  ts::CommonOptions common;
  ts::RunOptions run_opts;
  ts::ReplayOptions replay_opts;
  ts::RecordOptions record_opts;

  auto add_common = [&](CLI::App* c) {
    c->add_option("--config", common.config_path, "TOML config file (every key has a default)");
    c->add_option("--duration", common.duration_s, "stop after this many wall-clock seconds");
    c->add_option("--speed", common.speed, "pacing: 0 = as fast as possible, 1 = real time, 10 = 10x");
    c->add_option("--rate", common.rate, "fixed-rate pacing in events/s (overrides --speed)");
    c->add_option("--shards", common.shards, "shard threads");
    c->add_option("--jsonl", common.jsonl_path, "JSON Lines alert file ('' = none)");
    c->add_option("--audit-db", common.audit_db, "SQLite audit store ('' = none)");
    c->add_flag("--append", common.append, "add to the JSONL file / audit store of a previous run (default: refuse)");
    c->add_option("--out-dir", common.out_dir, "write this run's files (JSONL, audit store, summary) to this folder");
    c->add_flag("--no-stdout", common.no_stdout, "do not print alerts to stdout");
    c->add_flag("--no-notify", common.no_notify, "send no notification ([notify] is still checked): replaying history");
    c->add_option("--model", common.model_path, "ONNX model or plan for model alerts (overrides [model] path)");
    c->add_option("--summary-json", common.summary_json, "write the run summary as JSON");
    c->add_option("--instruments", common.instruments_path, "instrument reference CSV (overrides [instruments] path)");
    c->add_option("--state-in", common.state_in, "per-symbol state file (volume profiles) to start from");
    c->add_option("--state-out", common.state_out, "write the per-symbol state here after the run");
    c->add_option("--log-level", common.log_level, "trace, debug, info, warn, error, off");
    c->add_option("--http", common.http_listen, "dashboard and admin API: HOST:PORT, PORT or off (run: 127.0.0.1:8080)");
    c->add_option("--http-token", common.http_token, "admin API / dashboard token (default: random, printed)");
  };

  auto* run = app.add_subcommand("run", "simulator → pipeline → alerts (the default job)");
  add_common(run);
  run->add_option("--symbols", run_opts.symbols, "simulated symbols (default 1000, up to 5000)");
  run->add_option("--seed", run_opts.seed, "simulator seed");
  run->add_option("--sim-seconds", run_opts.sim_seconds, "simulated seconds to generate (0 = endless)");
  run->add_option("--labels", run_opts.labels_path, "write the injected events (ground truth) as CSV");
  run->add_option("--source", run_opts.source, "sim (default) | kafka | ws");
  run->add_option("--venue", run_opts.ws.venue, "ws: binance | coinbase | kraken | bitstamp");
  run->add_option("--url", run_opts.ws.url, "ws: the venue's websocket URL (wss://host/path, or ws:// without TLS)");
  run->add_option("--rest-url", run_opts.ws.rest_urls, "ws: a REST depth snapshot URL, fetched after every connect (repeatable)");
  run->add_option("--subscribe", run_opts.ws.subscribe, "ws: a text frame sent after every connect (repeatable)");
  run->add_option("--ca-file", run_opts.ws.ca_file, "ws: PEM file of CAs trusted for wss:// and https:// (default: the system store)");
  run->add_option("--ws-max-attempts", run_opts.ws.max_attempts, "ws: stop after this many failed connects in a row (0 = never)");
  run->add_option("--brokers", run_opts.kafka.brokers, "kafka: bootstrap.servers HOST:PORT[,...]");
  run->add_option("--topic", run_opts.kafka.topic, "kafka: market-data topic");
  run->add_option("--group", run_opts.kafka.group, "kafka: consumer group (default ticksentry)");
  run->add_option("--dlq-topic", run_opts.kafka.dlq_topic, "kafka: dead-letter topic for bad messages");
  run->add_option("--alerts-topic", run_opts.kafka.alerts_topic, "kafka: publish alerts here (JSON, keyed by symbol)");
  run->add_flag("--exit-at-eof", run_opts.kafka.exit_at_eof, "kafka: stop once every assigned partition is consumed");
  run->add_option("--encoding", run_opts.kafka.encoding,
                  "kafka: ticksentry (default: its json/binary wire) | binance-json | coinbase-json | kraken-json | "
                  "bitstamp-json | bitstamp-l3 (the venue's own messages)");

  auto* replay = app.add_subcommand("replay", "replay recorded market data through the pipeline");
  add_common(replay);
  replay->add_option("--format", replay_opts.format, ts::join_formats(" | "))->required();
  replay->add_option("--layout", replay_opts.layout, "mapped: layout TOML file, or a shipped layout (sse-l2, szse-l2)");
  replay->add_option("paths", replay_opts.paths, "message files, day folders or CSV files")->required();
  ts::add_input_selection_flags(replay, replay_opts.select);

  auto* record = app.add_subcommand("record", "write any source to ticksentry's normalized CSV");
  record->add_option("--format", record_opts.format, ts::join_formats(" | ") + " | sim")->required();
  record->add_option("--layout", record_opts.layout, "mapped: layout TOML file, or a shipped layout");
  record->add_option("--out", record_opts.out, "output .csv or .csv.gz")->required();
  record->add_option("paths", record_opts.paths, "inputs (none for sim)");
  record->add_option("--symbols", record_opts.symbols, "sim: symbols");
  record->add_option("--seed", record_opts.seed, "sim: seed");
  record->add_option("--sim-seconds", record_opts.sim_seconds, "sim: simulated seconds");
  ts::add_input_selection_flags(record, record_opts.select);

  ts::EngineCommands engine_commands(app);  // build, bench, inspect, infer
  ts::FeaturesCommand features_command(app);  // features --export
  ts::EvalCommand eval_command(app);          // eval
  ts::ReplayFailureCommand replay_failure(app);  // replay-failure
  ts::ModelsCommand models_command(app);      // models: list, promote, rollback
  ts::KafkaCommands kafka_commands(app);      // publish, mock-kafka
  ts::AuditCommand audit_command(app);        // audit deliveries, audit alerts
  ts::ExplainCommand explain_command(app);    // explain ID
  ts::SilenceCommand silence_command(app);    // silence add, list, expire
  ts::NotifyCommand notify_command(app);      // notify test-route

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  ts::init_logging(common.log_level);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    if (*run) return ts::command_run(common, run_opts, g_stop);
    if (*replay) return ts::command_replay(common, replay_opts, g_stop);
    if (*record) return ts::command_record(record_opts, g_stop);
    if (auto rc = engine_commands.run()) return *rc;
    if (auto rc = features_command.run(g_stop)) return *rc;
    if (auto rc = eval_command.run()) return *rc;
    if (auto rc = replay_failure.run()) return *rc;
    if (auto rc = models_command.run()) return *rc;
    if (auto rc = kafka_commands.run(g_stop)) return *rc;
    if (auto rc = audit_command.run()) return *rc;
    if (auto rc = explain_command.run()) return *rc;
    if (auto rc = silence_command.run()) return *rc;
    if (auto rc = notify_command.run()) return *rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ticksentry: %s\n", e.what());
    return 2;
  }
  return 2;
}
