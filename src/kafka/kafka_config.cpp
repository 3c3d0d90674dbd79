#include "kafka/kafka_config.h"

#include <librdkafka/rdkafka.h>

#include <toml++/toml.h>

namespace ts {

namespace {

// Flattens `t` into dotted keys; marks each leaf read as <section>.<dotted key> in `config`.
void flatten(const toml::table& t, const std::string& prefix, const Config& config, const std::string& section,
             KafkaProps& out) {
  for (const auto& [k, node] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = node.as_table()) {
      flatten(*sub, key, config, section, out);
      continue;
    }
    // Mark as read through the ordinary accessor (the section is the dotted path to the leaf's
    // parent, as Config::unread_keys() names it).
    const size_t dot = key.rfind('.');
    const std::string parent = dot == std::string::npos ? section : section + "." + key.substr(0, dot);
    const std::string leaf = dot == std::string::npos ? key : key.substr(dot + 1);
    ConfigSection s = config.section(parent);
    if (node.is_string()) {
      out[key] = s.get(leaf, "");
    } else if (node.is_integer()) {
      out[key] = std::to_string(s.get(leaf, int64_t(0)));
    } else if (node.is_boolean()) {
      out[key] = s.get(leaf, false) ? "true" : "false";
    } else if (node.is_floating_point()) {
      out[key] = std::to_string(s.get(leaf, 0.0));
    } else {
      throw ConfigError("config key " + section + "." + key + ": expected a string, number or boolean");
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
  flatten(*t, "", config, std::string(section), props);
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
