#pragma once
// The Kafka commands (docs/kafka.md):
//   ticksentry publish --format FMT PATH... --brokers HOST:PORT[,...] --topic NAME
//                      [--encoding binary|json] [--speed X | --rate N] [--config FILE]
//                      [--symbol GLOB]... [--from TIME] [--to TIME]
//     writes any replayable source (lobster, sse-l2, csv, sim) into a topic, one event per
//     message, keyed by symbol; as fast as possible by default. Prints one summary line on
//     stderr; exit 0 when every message was delivered, 1 when some failed delivery.
//   ticksentry mock-kafka [--brokers 3] [--topic NAME --partitions N]...
//     starts librdkafka's mock cluster on loopback, prints "bootstrap.servers=HOST:PORT,..." on
//     stdout, and serves until SIGINT/SIGTERM.
// Exit codes as for every command: 0 success, 2 bad arguments or inputs, 1 delivery failures.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/input_selection.h"
#include "core/config.h"
#include "core/status.h"
#include "ingest/kafka_source.h"

namespace CLI {
class App;
}

namespace ts {

class AlertSink;

// `run --source kafka` flags; each falls back to the [kafka] section of the config file:
//   brokers (bootstrap.servers), topic, group ("ticksentry"), dlq_topic (""), alerts_topic ("").
struct KafkaRunOptions {
  std::optional<std::string> brokers;
  std::optional<std::string> topic;
  std::optional<std::string> group;
  std::optional<std::string> dlq_topic;
  std::optional<std::string> alerts_topic;
  bool exit_at_eof = false;  // stop once every assigned partition is consumed to its end
  std::optional<std::string> encoding;  // --encoding: "" / ticksentry, or a venue's ("binance-json")
};

// A [kafka] string key: the flag when given, else the section's value, else `def`.
std::string kafka_key(const Config& config, const std::optional<std::string>& flag, const char* key, const char* def);
// The consumer's options: flags > [kafka] > defaults, [kafka.consumer] / [kafka.producer]
// librdkafka properties passed through (marked read in `config`). Throws ConfigError.
KafkaSourceOptions kafka_source_options(const Config& config, const std::string& config_path,
                                        const KafkaRunOptions& flags);
// The alerts-topic sink when an alerts topic is set (flag or [kafka] alerts_topic), else null.
// Errors: no brokers, or a producer librdkafka refuses.
Result<std::shared_ptr<AlertSink>> make_kafka_alert_sink(const Config& config, const std::string& config_path,
                                                         const KafkaRunOptions& flags);

struct PublishOptions {
  std::string format;                  // lobster | sse-l2 | csv | sim
  std::vector<std::string> paths;      // inputs (none for sim)
  std::string brokers;                 // bootstrap.servers
  std::string topic;
  std::string encoding = "binary";     // binary | json
  std::string config_path;             // [kafka.producer] librdkafka properties
  double speed = 0;                    // 0 = as fast as possible, 1 = exchange-time real time
  double rate = 0;                     // > 0: fixed events/s
  std::optional<int> symbols;          // sim
  std::optional<uint64_t> seed;        // sim
  std::optional<double> sim_seconds;   // sim (default 60)
  InputSelectionOptions select;        // --symbol, --from, --to
};

struct PublishSummary {
  uint64_t events = 0;       // messages produced
  uint64_t bad_records = 0;  // input records the source skipped
  uint64_t delivery_errors = 0;
  double seconds = 0;
};

class KafkaCommands {
 public:
  explicit KafkaCommands(CLI::App& app);
  // Runs `publish` or `mock-kafka` if one was the subcommand given.
  std::optional<int> run(const std::atomic<bool>& stop) const;

 private:
  int publish(const std::atomic<bool>& stop) const;
  int mock_kafka(const std::atomic<bool>& stop) const;
  PublishOptions pub_;
  int mock_brokers_ = 3;
  std::vector<std::string> mock_topics_;
  std::vector<int> mock_partitions_;
  CLI::App* publish_cmd_ = nullptr;
  CLI::App* mock_cmd_ = nullptr;
};

}  // namespace ts
