#include "app/kafka_commands.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>
#include <thread>

#include "app/first_input_error.h"
#include "audit/kafka_alert_sink.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "core/log.h"
#include "core/symbol_table.h"
#include "ingest/open_source.h"
#include "ingest/sim/simulator.h"
#include "ingest/wire_binary.h"
#include "ingest/wire_json.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_producer.h"
#include "pipeline/pacer.h"

namespace ts {

namespace {
constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2;
}  // namespace

Result<std::shared_ptr<AlertSink>> make_kafka_alert_sink(const Config& config, const std::string& config_path,
                                                         const KafkaRunOptions& flags) {
  const std::string topic = kafka_key(config, flags.alerts_topic, "alerts_topic", "");
  const std::string brokers = kafka_key(config, flags.brokers, "brokers", "");
  if (topic.empty()) return std::shared_ptr<AlertSink>();
  KafkaProps props = kafka_passthrough(config, config_path, "kafka.producer");
  if (!brokers.empty()) props["bootstrap.servers"] = brokers;
  if (!props.count("bootstrap.servers")) {
    return Status(StatusCode::kInvalidArgument, "alerts topic " + topic + ": no brokers (--brokers or [kafka] brokers)");
  }
  auto sink = KafkaAlertSink::create(props, topic);
  if (!sink.is_ok()) return sink.status();
  return std::shared_ptr<AlertSink>(std::move(sink).value());
}

KafkaCommands::KafkaCommands(CLI::App& app) {
  publish_cmd_ = app.add_subcommand("publish", "write any replayable source into a Kafka topic, keyed by symbol");
  auto* p = publish_cmd_;
  p->add_option("--format", pub_.format, "lobster | sse-l2 | csv | sim")->required();
  p->add_option("paths", pub_.paths, "inputs (none for sim)");
  p->add_option("--brokers", pub_.brokers, "bootstrap.servers, HOST:PORT[,...]")->required();
  p->add_option("--topic", pub_.topic, "topic to write")->required();
  p->add_option("--encoding", pub_.encoding, "binary (default) | json");
  p->add_option("--config", pub_.config_path, "TOML file: [kafka.producer] librdkafka properties");
  p->add_option("--speed", pub_.speed, "0 = as fast as possible (default), 1 = real time by exchange time");
  p->add_option("--rate", pub_.rate, "fixed rate in events/s");
  p->add_option("--symbols", pub_.symbols, "sim: symbols");
  p->add_option("--seed", pub_.seed, "sim: seed");
  p->add_option("--sim-seconds", pub_.sim_seconds, "sim: simulated seconds (default 60)");
  add_input_selection_flags(p, pub_.select);

  mock_cmd_ = app.add_subcommand("mock-kafka", "run librdkafka's mock Kafka cluster on loopback until Ctrl-C");
  mock_cmd_->add_option("--brokers", mock_brokers_, "number of brokers (default 3)");
  mock_cmd_->add_option("--topic", mock_topics_, "create this topic (repeatable)");
  mock_cmd_->add_option("--partitions", mock_partitions_, "partitions of each --topic (default 4)");
}

std::optional<int> KafkaCommands::run(const std::atomic<bool>& stop) const {
  if (*publish_cmd_) return publish(stop);
  if (*mock_cmd_) return mock_kafka(stop);
  return std::nullopt;
}

int KafkaCommands::publish(const std::atomic<bool>& stop) const {
  WireEncoding encoding;
  if (!parse_wire_encoding(pub_.encoding, encoding)) {
    std::fprintf(stderr, "ticksentry: --encoding must be binary or json, not '%s'\n", pub_.encoding.c_str());
    return kExitUsage;
  }
  Config config = pub_.config_path.empty() ? Config() : Config::load_file(pub_.config_path);
  // zstd batches: a LOBSTER day of binary events takes ~19 bytes an event instead of ~150, so
  // one symbol's day (one partition) fits the mock cluster's 5 MiB per partition (about 270,000
  // events). [kafka.producer] overrides either.
  KafkaProps props = {{"compression.type", "zstd"}, {"linger.ms", "20"}};
  for (auto& [k, v] : kafka_passthrough(config, pub_.config_path, "kafka.producer")) props[k] = v;
  (void)kafka_passthrough(config, pub_.config_path, "kafka.consumer");  // one file serves every command
  props["bootstrap.servers"] = pub_.brokers;

  SymbolTable symbols;
  InputErrors errors;
  FirstInputError first_error;
  std::unique_ptr<Source> source;
  if (pub_.format == "sim") {
    SimOptions so = SimOptions::from_config(config.section("sim"));
    if (pub_.symbols) so.symbols = *pub_.symbols;
    if (pub_.seed) so.seed = *pub_.seed;
    so.duration_s = pub_.sim_seconds.value_or(60.0);
    source = std::make_unique<Simulator>(so, symbols);
  } else {
    auto opened = open_source(pub_.format, pub_.paths, symbols, errors);
    if (!opened.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", opened.status().to_string().c_str());
      return kExitUsage;
    }
    source = std::move(opened).value();
  }
  auto selected = InputSelection::open(*source, symbols, pub_.select);
  if (!selected.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", selected.status().to_string().c_str());
    return kExitUsage;
  }
  Source& input = selected.value()->source();
  auto producer = KafkaProducer::create(props);
  if (!producer.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", producer.status().to_string().c_str());
    return kExitUsage;
  }
  KafkaProducer& prod = *producer.value();
  spdlog::info("publish: {} → {} on {} ({})", input.describe(), pub_.topic, pub_.brokers, pub_.encoding);

  Pacer pacer(pub_.speed, pub_.rate);
  std::vector<Event> batch(1024);
  std::string value;
  uint8_t buf[kWireBinaryMaxBytes];
  PublishSummary sum;
  const int64_t start_ns = mono_ns();
  while (!stop.load()) {
    const size_t n = input.next_batch(batch);
    if (n == 0) {
      if (input.done()) break;
      continue;
    }
    for (size_t i = 0; i < n && !stop.load(); ++i) {
      const Event& e = batch[i];
      if (!pacer.wait_until_due(e.exch_ts_ns, stop)) break;  // SIGINT during the wait: not sent
      const RefData& ref = symbols.ref(e.symbol);
      WireEvent w{e, ref.name, ref.prev_close, ref.is_st};
      std::span<const uint8_t> bytes;
      if (encoding == WireEncoding::kBinary) {
        bytes = {buf, wire_binary_encode(w, buf)};
      } else {
        value.clear();
        wire_json_append(w, value);
        bytes = {reinterpret_cast<const uint8_t*>(value.data()), value.size()};
      }
      if (Status st = prod.produce(pub_.topic, ref.name, bytes); !st.is_ok()) {
        std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
        return kExitFailed;
      }
      ++sum.events;
    }
    prod.poll();
  }
  const Status flushed = prod.flush(30000);
  sum.seconds = double(mono_ns() - start_ns) / 1e9;
  sum.bad_records = errors.total();
  sum.delivery_errors = prod.delivery_errors();
  std::fprintf(stderr,
               "published %llu events from %s to %s in %.2f s (%.0f/s, %s), %llu bad records skipped, "
               "%llu delivery errors\n",
               (unsigned long long)sum.events, input.describe().c_str(), pub_.topic.c_str(), sum.seconds,
               sum.seconds > 0 ? double(sum.events) / sum.seconds : 0.0, pub_.encoding.c_str(),
               (unsigned long long)sum.bad_records, (unsigned long long)sum.delivery_errors);
  selected.value()->report();
  if (!flushed.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", flushed.to_string().c_str());
    return kExitFailed;
  }
  // An input with no valid record at all (a wrong --format, a wrong file) is an error.
  if (first_error.no_valid_record(sum.events + selected.value()->skipped(), errors, input.describe())) {
    return kExitUsage;
  }
  return kExitOk;
}

int KafkaCommands::mock_kafka(const std::atomic<bool>& stop) const {
  auto cluster = KafkaMockCluster::start(mock_brokers_);
  if (!cluster.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", cluster.status().to_string().c_str());
    return kExitUsage;
  }
  for (size_t i = 0; i < mock_topics_.size(); ++i) {
    const int parts = i < mock_partitions_.size() ? mock_partitions_[i] : 4;
    if (Status st = cluster.value()->create_topic(mock_topics_[i], parts); !st.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
      return kExitUsage;
    }
  }
  std::printf("bootstrap.servers=%s\n", cluster.value()->bootstraps().c_str());
  std::fflush(stdout);
  spdlog::info("mock-kafka: {} brokers at {}; Ctrl-C to stop", mock_brokers_, cluster.value()->bootstraps());
  // Watch the partitions: the mock drops a partition's oldest batches beyond ~5 MiB, and a
  // consumer that starts later never sees them. Say so here too (the consumer counts them).
  std::map<std::pair<std::string, int32_t>, int64_t> reported;  // partition → first offset reported
  int64_t next_check_ns = mono_ns() + 1'000'000'000;
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (mono_ns() < next_check_ns) continue;
    next_check_ns = mono_ns() + 1'000'000'000;
    auto ranges = cluster.value()->partition_ranges(1000);
    if (!ranges.is_ok()) continue;
    for (const auto& r : ranges.value()) {
      int64_t& seen = reported[{r.topic, r.partition}];
      if (r.first_offset <= seen) continue;
      spdlog::warn("mock-kafka: {}[{}] dropped offsets {}..{} (now {}..{}): librdkafka's mock keeps about 5 MiB "
                   "per partition; a consumer that reads them later counts them as lost_messages",
                   r.topic, r.partition, seen, r.first_offset - 1, r.first_offset, r.next_offset - 1);
      seen = r.first_offset;
    }
  }
  return kExitOk;
}

}  // namespace ts
