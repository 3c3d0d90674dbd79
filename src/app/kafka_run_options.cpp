// The [kafka] section as `run --source kafka` reads it (flags > [kafka] > defaults). In a file of
// its own, apart from the publish / mock-kafka commands, so that the config fuzz target
// (fuzz/config_fuzz.cpp) reads [kafka] with the run's own code and without the commands.
#include "app/kafka_commands.h"
#include "kafka/kafka_config.h"

namespace ts {

std::string kafka_key(const Config& config, const std::optional<std::string>& flag, const char* key, const char* def) {
  const std::string from_file = config.section("kafka").get(key, def);
  return flag ? *flag : from_file;
}

KafkaSourceOptions kafka_source_options(const Config& config, const std::string& config_path, const KafkaRunOptions& flags) {
  KafkaSourceOptions o;
  o.brokers = kafka_key(config, flags.brokers, "brokers", "");
  o.topic = kafka_key(config, flags.topic, "topic", "");
  o.group = kafka_key(config, flags.group, "group", "ticksentry");
  o.dlq_topic = kafka_key(config, flags.dlq_topic, "dlq_topic", "");
  o.exit_at_eof = flags.exit_at_eof;
  o.encoding = kafka_key(config, flags.encoding, "encoding", "");
  if (o.encoding == "ticksentry") o.encoding.clear();
  o.eof_idle_ms = config.section("kafka").get_in("eof_idle_ms", o.eof_idle_ms, 0, 3'600'000);
  o.props = kafka_passthrough(config, config_path, "kafka.consumer");
  o.dlq_props = kafka_passthrough(config, config_path, "kafka.producer");
  return o;
}

}  // namespace ts
