#pragma once
// Per-symbol and per-group rule thresholds: [[rules.groups]] (docs/rules.md, "Groups"), like
// [[model.groups]]. A ¥1,850 stock and a ¥3 stock need not share one notional threshold:
//
//   [[rules.groups]]
//   name = "moutai"
//   symbols = ["600519.SH"]            # globs; or regex = "..."; or markets = ["SH", "SZ"]
//   [rules.groups.large_trade]         # any [rules.*] section, the same keys
//   min_notional = 20000000
//   cooldown_ms = 30000
//
// A symbol takes the first group that matches it (detect/symbol_groups.h); each key a group sets
// replaces the value of [rules] (which itself starts from the defaults); keys it leaves out keep
// [rules]'s. A symbol in no group uses [rules].
//
// RuleSet is what a shard runs: one RuleEngine for [rules] and one per group, each symbol handed
// to its group's engine (decided on its first event). Symbols are independent in every rule, so
// a symbol's alerts are those a RuleEngine with its group's options raises; alert ids do not
// depend on the engine (detect/alert.h).
// Threading: RuleConfig is immutable after from_config; a RuleSet belongs to one shard thread.
#include <cstdint>
#include <string>
#include <vector>

#include "detect/rule_engine.h"
#include "detect/rule_options.h"
#include "detect/symbol_groups.h"

namespace ts {

class Config;

struct RuleGroup {
  SymbolGroupSpec match;
  RuleOptions rules;
};

struct RuleConfig {
  RuleOptions base;               // [rules]
  std::vector<RuleGroup> groups;  // [[rules.groups]], in order
  // Reads [rules] and [[rules.groups]]. Throws ConfigError naming the key: a bad value, a group
  // without name or anything to match on, a bad regex or market, an unknown key in a group.
  static RuleConfig from_config(const Config& config);
};

class RuleSet {
 public:
  RuleSet(const SymbolTable& symbols, const RuleConfig& config, uint32_t shard);

  void prefetch(SymbolId id) const {
    if (id < engine_of_.size() && engine_of_[id] != kUnresolved) engines_[engine_of_[id]].prefetch(id);
  }
  // As RuleEngine::evaluate, by the engine of the event symbol's group.
  int evaluate(const Event& e, const BookTop& book, const float* features, StageTimes t, Alert* out, int max_out,
               const VolumeWindow* volume = nullptr) {
    return engine_for(e.symbol).evaluate(e, book, features, t, out, max_out, volume);
  }
  void reserve(size_t symbol_count);
  const RuleOptions& options() const { return engines_[0].options(); }  // [rules]
  // The options a symbol's rules run with, and the name of its group ("" = [rules]).
  const RuleOptions& options_for(SymbolId id) { return engine_for(id).options(); }
  std::string group_name(SymbolId id);
  uint64_t overflow() const;
  uint64_t alerts_fired() const;

 private:
  static constexpr uint8_t kUnresolved = 0xff;
  RuleEngine& engine_for(SymbolId id) {
    if (id < engine_of_.size() && engine_of_[id] != kUnresolved) return engines_[engine_of_[id]];
    return resolve(id);
  }
  RuleEngine& resolve(SymbolId id);
  const SymbolTable& symbols_;
  SymbolGroups groups_;
  std::vector<RuleEngine> engines_;  // [0] = [rules], [1 + i] = group i
  std::vector<uint8_t> engine_of_;   // per symbol id
};

}  // namespace ts
