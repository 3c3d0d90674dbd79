#pragma once
// The CLI's commands, callable from main() and from tests. Each returns the process exit code.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/input_selection.h"
#include "app/kafka_commands.h"

namespace ts {

// Flags shared by `run` and `replay`. Unset optionals fall back to the config file, then to the
// built-in defaults.
struct CommonOptions {
  std::string config_path;
  std::optional<double> duration_s;
  std::optional<double> speed;
  std::optional<double> rate;
  std::optional<int> shards;
  std::optional<std::string> jsonl_path;   // default: sinks.jsonl ("ticksentry-alerts.jsonl")
  std::optional<std::string> audit_db;     // default: sinks.audit_db ("ticksentry-audit.db")
  // A JSONL file or SQLite audit store that already holds alerts is refused (exit 2) unless
  // --append (or [sinks] append = true): then this run adds the alerts not there yet.
  bool append = false;
  std::string out_dir;  // --out-dir: relative output paths resolve here (created if missing)
  bool no_stdout = false;
  bool no_notify = false;  // --no-notify: [notify] is checked but no receiver is contacted
  std::string model_path;                 // --model: ONNX/plan for model alerts (overrides [model] path)
  std::string summary_json;
  std::string instruments_path;           // --instruments: reference CSV (overrides [instruments] path)
  std::string state_in;                   // --state-in: per-symbol state (volume profiles) to start from
  std::string state_out;                  // --state-out: where to write the state after the run
  std::string log_level = "info";
  std::optional<std::string> http_listen;  // --http HOST:PORT | off; default: [http] (run: on)
  std::optional<std::string> http_token;   // --http-token; default: [http] token, $TICKSENTRY_TOKEN, random
};

// `run --source ws` (docs/formats.md "Websocket source").
struct WsRunOptions {
  std::string venue;                     // --venue binance | coinbase | kraken | bitstamp
  std::string url;                       // --url ws://host:port/path or wss://host/path
  std::vector<std::string> rest_urls;    // --rest-url (repeatable): depth snapshots, one per symbol
  std::vector<std::string> subscribe;    // --subscribe (repeatable): text frames sent after connecting
  int max_attempts = 0;                  // --ws-max-attempts: failed connections in a row before stopping
  std::string ca_file;                   // --ca-file: PEM CAs trusted for wss/https ("" = the system store)
};

struct RunOptions {
  std::optional<int> symbols;
  std::optional<uint64_t> seed;
  std::optional<double> sim_seconds;
  std::string labels_path;
  std::string source = "sim";  // sim | kafka (docs/kafka.md) | ws
  KafkaRunOptions kafka;       // --brokers, --topic, --group, --dlq-topic, --alerts-topic, --exit-at-eof
  WsRunOptions ws;
};

struct ReplayOptions {
  std::string format;
  std::string layout;  // --layout: --format mapped's TOML file or shipped layout (docs/formats.md)
  std::vector<std::string> paths;
  InputSelectionOptions select;  // --symbol, --from, --to (app/input_selection.h)
};

struct RecordOptions {
  std::string format;
  std::string layout;  // --layout, as for replay
  std::string out;
  std::vector<std::string> paths;
  std::optional<int> symbols;
  std::optional<uint64_t> seed;
  std::optional<double> sim_seconds;
  InputSelectionOptions select;  // --symbol, --from, --to
};

int command_run(const CommonOptions& common, const RunOptions& opts, const std::atomic<bool>& stop);
int command_replay(const CommonOptions& common, const ReplayOptions& opts, const std::atomic<bool>& stop);
int command_record(const RecordOptions& opts, const std::atomic<bool>& stop);

}  // namespace ts
