#pragma once
// librdkafka configuration for ticksentry's Kafka clients.
//
// Every librdkafka property passes through unchanged from the TOML file: the keys of
// [kafka.consumer] go to consumers, [kafka.producer] to producers (a dotted TOML key such as
// `fetch.wait.max.ms = 10` is the librdkafka property of that name; values may be strings,
// integers, floats or booleans). `--brokers` sets bootstrap.servers, overriding the file.
// librdkafka itself rejects an unknown property or a bad value: kafka_conf() returns that as
// a kInvalidArgument Status naming the key (the CLI exits 2).
// Threading: start-up only.
#include <map>
#include <string>
#include <string_view>

#include "core/config.h"
#include "core/status.h"

struct rd_kafka_conf_s;

namespace ts {

using KafkaProps = std::map<std::string, std::string>;

// The leaf keys under `section` ("kafka.consumer") of the TOML file at `config_path` (empty:
// none), flattened with dots and converted to strings; each is marked as read in `config` so
// that Config::unread_keys() accepts it. Throws ConfigError for a value that is an array or a
// table of tables (not a librdkafka value).
KafkaProps kafka_passthrough(const Config& config, const std::string& config_path, std::string_view section);

// A new librdkafka conf with `props` applied in order (owned by the caller, or by rd_kafka_new
// once handed to it). Errors name the property and librdkafka's message.
Result<rd_kafka_conf_s*> kafka_conf(const KafkaProps& props);

}  // namespace ts
