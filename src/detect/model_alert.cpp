#include "detect/model_alert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/clock.h"
#include "core/config_suggest.h"

namespace ts {

ModelAlertOptions ModelAlertOptions::from_config(const ConfigSection& s, int window_rows) {
  ModelAlertOptions o;
  auto bad = [&](const std::string& what) { throw ConfigError("[" + s.name() + "] " + what); };
  o.min_rows = s.get_in("min_rows", window_rows, 1, window_rows);
  const std::string trig = s.get("trigger", "row");
  if (trig == "row") o.trigger = Trigger::kRow;
  else if (trig == "event") o.trigger = Trigger::kEvent;
  else bad("trigger must be row or event, not '" + trig + "'");
  o.every_n = s.get_in("every_n", o.every_n, 1, 1'000'000);
  o.threshold = s.get("threshold", o.threshold);
  if (!(o.threshold > 0 && o.threshold <= 1)) bad("threshold must be in (0, 1]");
  o.hysteresis = s.get("hysteresis", o.hysteresis);
  if (o.hysteresis < 0 || o.hysteresis >= o.threshold) bad("hysteresis must be in [0, threshold)");
  o.cooldown_s = s.get_in("cooldown_s", o.cooldown_s, 0.0, 7.0 * 86400);
  // [[model.groups]]: per symbol group threshold / hysteresis / cooldown.
  std::vector<SymbolGroupSpec> specs;
  for (const ConfigSection& g : s.tables("groups")) {
    auto bad_group = [&](const std::string& what) { throw ConfigError("[" + g.name() + "] " + what); };
    DecisionGroup d;
    d.match.name = g.get("name", "");
    d.match.symbols = g.get("symbols", std::vector<std::string>{});
    d.match.regex = g.get("regex", "");
    d.match.markets = g.get("markets", std::vector<std::string>{});
    const double own = g.get("threshold", std::numeric_limits<double>::quiet_NaN());  // NaN: not written
    d.threshold_set = !std::isnan(own);
    d.threshold = d.threshold_set ? own : o.threshold;
    if (!(d.threshold > 0 && d.threshold <= 1)) bad_group("threshold must be in (0, 1]");
    d.hysteresis = g.get("hysteresis", std::min(o.hysteresis, d.threshold / 2));
    if (d.hysteresis < 0 || d.hysteresis >= d.threshold) bad_group("hysteresis must be in [0, threshold)");
    d.cooldown_s = g.get_in("cooldown_s", o.cooldown_s, 0.0, 7.0 * 86400);
    for (const auto& k : g.unread_keys()) {
      bad_group("unknown key '" + k + "' (name, symbols, regex, markets, threshold, hysteresis, cooldown_s)" +
                did_you_mean(k));
    }
    specs.push_back(d.match);
    o.groups.push_back(std::move(d));
  }
  auto compiled = SymbolGroups::compile(specs);
  if (!compiled) bad(compiled.status().message());
  return o;
}

std::unique_ptr<ModelDecision> make_model_decision(const ModelAlertOptions& o, const SymbolTable& symbols) {
  auto values = [](double threshold, double hysteresis, double cooldown_s) {
    ModelDecisionOptions d;
    d.threshold = threshold;
    d.hysteresis = hysteresis;
    d.cooldown_ns = int64_t(cooldown_s * 1e9);
    return d;
  };
  std::vector<ModelDecisionOptions> groups;
  std::vector<SymbolGroupSpec> specs;
  for (const auto& g : o.groups) {
    groups.push_back(values(g.threshold, g.hysteresis, g.cooldown_s));
    specs.push_back(g.match);
  }
  // ModelAlertOptions::from_config validated the groups; an error here is a caller's bug.
  auto compiled = SymbolGroups::compile(specs);
  auto matcher = std::make_shared<const SymbolGroups>(compiled ? std::move(compiled.value()) : SymbolGroups{});
  auto group_of = [matcher, &symbols](SymbolId id) { return matcher->match(symbols.name(id)); };
  return std::make_unique<ModelDecision>(values(o.threshold, o.hysteresis, o.cooldown_s), std::move(groups),
                                         std::move(group_of));
}

void make_model_alert(const ModelVerdict& v, std::string_view symbol_name, const char* model_name, Alert& a) {
  a = Alert{};
  a.type = AlertType::kModel;
  a.severity = v.probability >= 0.99 ? Severity::kCritical : Severity::kWarning;
  a.symbol = v.symbol;
  a.exch_ts_ns = v.exch_ts_ns;
  a.event_seq = v.event_seq;
  // Deterministic across runs and instances (detect/alert.h); a shadow version's alert on the
  // same event gets its own id.
  a.id = alert_id(symbol_name, AlertType::kModel, a.exch_ts_ns, a.event_seq) ^ (v.shadow ? 0x5a5a5a5a5a5a5a5aull & kAlertIdMask : 0);
  a.price = v.price;
  a.t = v.t;
  a.t.detect_ns = mono_ns();
  a.add_value("probability", v.probability, v.threshold, Cmp::kGe);
  if (v.window) std::memcpy(a.features, v.window + size_t(v.rows - 1) * kFeatureCount, sizeof(a.features));
  std::memcpy(a.model.model, model_name, sizeof(a.model.model));
  a.model.version = v.model_version;
  a.model.probability = float(v.probability);
  a.model.threshold = float(v.threshold);
  a.model.shadow = v.shadow;
  a.model.window_rows = uint16_t(v.rows);
}

}  // namespace ts
