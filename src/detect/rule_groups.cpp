#include "detect/rule_groups.h"

#include "core/config.h"
#include "core/config_suggest.h"

namespace ts {

RuleConfig RuleConfig::from_config(const Config& config) {
  RuleConfig c;
  c.base = RuleOptions::from_config(config);
  std::vector<SymbolGroupSpec> specs;
  for (const ConfigSection& g : config.section("rules").tables("groups")) {
    RuleGroup group;
    group.match.name = g.get("name", "");
    group.match.symbols = g.get("symbols", std::vector<std::string>{});
    group.match.regex = g.get("regex", "");
    group.match.markets = g.get("markets", std::vector<std::string>{});
    group.rules = RuleOptions::from_config(config, g.name(), c.base);
    for (const auto& k : g.unread_keys()) {
      const std::string hint = did_you_mean(k);
      throw ConfigError("unknown config key '" + k + "'" +
                        (hint.empty() ? " (a rule group has name, symbols, regex, markets, relative and the [rules.*] "
                                        "sections with their keys)"
                                      : hint));
    }
    specs.push_back(group.match);
    c.groups.push_back(std::move(group));
  }
  if (c.groups.size() >= 0xfe) throw ConfigError("[[rules.groups]]: at most 253 groups");
  auto compiled = SymbolGroups::compile(specs);
  if (!compiled) throw ConfigError("[[rules.groups]] " + compiled.status().message());
  return c;
}

RuleSet::RuleSet(const SymbolTable& symbols, const RuleConfig& config, uint32_t shard) : symbols_(symbols) {
  std::vector<SymbolGroupSpec> specs;
  for (const auto& g : config.groups) specs.push_back(g.match);
  auto compiled = SymbolGroups::compile(specs);  // from_config checked them
  if (compiled) groups_ = std::move(compiled).value();
  engines_.reserve(1 + config.groups.size());
  engines_.emplace_back(symbols, config.base, shard);
  for (const auto& g : config.groups) engines_.emplace_back(symbols, g.rules, shard);
}

void RuleSet::reserve(size_t symbol_count) {
  for (auto& e : engines_) e.reserve(symbol_count);
  if (engine_of_.size() < symbol_count) engine_of_.resize(symbol_count, kUnresolved);
}

RuleEngine& RuleSet::resolve(SymbolId id) {
  if (id >= engine_of_.size()) engine_of_.resize(size_t(id) + 1, kUnresolved);
  int g = -1;
  if (groups_.size() > 0 && id < symbols_.size()) g = groups_.match(symbols_.name(id));
  engine_of_[id] = uint8_t(g + 1);
  return engines_[engine_of_[id]];
}

std::string RuleSet::group_name(SymbolId id) {
  const RuleEngine& e = engine_for(id);
  const size_t i = size_t(&e - engines_.data());
  return i == 0 ? std::string() : groups_.name(i - 1);
}

uint64_t RuleSet::overflow() const {
  uint64_t n = 0;
  for (const auto& e : engines_) n += e.overflow();
  return n;
}

uint64_t RuleSet::alerts_fired() const {
  uint64_t n = 0;
  for (const auto& e : engines_) n += e.alerts_fired();
  return n;
}

}  // namespace ts
