#include "kafka/kafka_config.h"

#include <librdkafka/rdkafka.h>

#include <toml++/toml.h>

namespace ts {

namespace {

// Flattens `t` (the table at `table_path`) into dotted keys. A librdkafka property may be written
// quoted ("fetch.wait.max.ms" = 10, one key) or bare (fetch.wait.max.ms = 10, nested tables):
// both give "fetch.wait.max.ms". Each leaf is read through ConfigSection so that it counts as read.
void flatten(const toml::table& t, const std::string& prefix, const std::string& table_path, const Config& config,
             KafkaProps& out) {
  for (const auto& [k, node] : t) {
    const std::string leaf(k.str());
    const std::string key = prefix.empty() ? leaf : prefix + "." + leaf;
    if (const toml::table* sub = node.as_table()) {
      flatten(*sub, key, table_path + "." + leaf, config, out);
      continue;
    }
    ConfigSection s = config.section(table_path);
    if (node.is_string()) {
      out[key] = s.get(leaf, "");
    } else if (node.is_integer()) {
      out[key] = std::to_string(s.get(leaf, int64_t(0)));
    } else if (node.is_boolean()) {
      out[key] = s.get(leaf, false) ? "true" : "false";
    } else if (node.is_floating_point()) {
      out[key] = std::to_string(s.get(leaf, 0.0));
    } else {
      throw ConfigError("config key " + table_path + "." + leaf + ": expected a string, number or boolean");
    }
  }
}

}  // namespace

KafkaProps kafka_passthrough(const Config& config, const std::string& config_path, std::string_view section) {
  KafkaProps props;
  if (config_path.empty()) return props;
  toml::table root;
  try {
    root = toml::parse_file(config_path);
  } catch (const toml::parse_error& e) {
    throw ConfigError("config " + config_path + ": " + std::string(e.description()));
  }
  const toml::node* n = root.at_path(section).node();
  if (!n) return props;
  const toml::table* t = n->as_table();
  if (!t) throw ConfigError("config key " + std::string(section) + ": expected a table");
  flatten(*t, "", std::string(section), config, props);
  return props;
}

Result<rd_kafka_conf_s*> kafka_conf(const KafkaProps& props) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status(StatusCode::kInvalidArgument, "kafka property " + k + "=" + v + ": " + err);
    }
  }
  return conf;
}

}  // namespace ts
