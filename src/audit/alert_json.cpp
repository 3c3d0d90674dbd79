#include "audit/alert_json.h"

#include <cmath>
#include <string>

#include "audit/alert_format.h"

namespace ts {

namespace {
int64_t stage_delta(int64_t later, int64_t earlier) { return later > 0 && earlier > 0 ? later - earlier : -1; }

// stage_ns (strings: exact in jq) and latency_ns: one schema for live alerts and stored records.
void put_stage_times(nlohmann::json& j, const StageTimes& t, int64_t total_ns) {
  j["stage_ns"] = {{"recv", std::to_string(t.recv_ns)},         {"book", std::to_string(t.book_ns)},
                   {"features", std::to_string(t.features_ns)}, {"detect", std::to_string(t.detect_ns)},
                   {"emit", std::to_string(t.emit_ns)}};
  j["latency_ns"] = {{"book", stage_delta(t.book_ns, t.recv_ns)},
                     {"features", stage_delta(t.features_ns, t.book_ns)},
                     {"detect", stage_delta(t.detect_ns, t.features_ns)},
                     {"emit", stage_delta(t.emit_ns, t.detect_ns)},
                     {"total", total_ns}};
}
}  // namespace

nlohmann::json alert_values_json(const Alert& a) {
  nlohmann::json values = nlohmann::json::array();
  for (int i = 0; i < a.value_count && i < Alert::kMaxValues; ++i) {
    const AlertValue& v = a.values[i];
    values.push_back({{"name", v.name ? v.name : "?"},
                      {"value", v.value},
                      {"threshold", v.threshold},
                      {"cmp", v.cmp == Cmp::kInfo ? "info" : cmp_symbol(v.cmp)}});
  }
  return values;
}

nlohmann::json alert_features_json(const Alert& a) {
  nlohmann::json f = nlohmann::json::object();
  for (int i = 0; i < kFeatureCount; ++i) {
    if (std::isfinite(a.features[i])) {
      f[feature_name(i)] = a.features[i];
    } else {
      f[feature_name(i)] = nullptr;
    }
  }
  return f;
}

nlohmann::json alert_to_json(const Alert& a, const SymbolTable& symbols) {
  const bool known = a.symbol < symbols.size();
  const double tick = known ? symbols.ref(a.symbol).tick_size : 0.01;
  nlohmann::json j;
  j["id"] = a.id;
  j["symbol"] = symbol_label(symbols, a.symbol);
  j["symbol_id"] = a.symbol;
  j["type"] = alert_type_name(a.type);
  j["severity"] = severity_name(a.severity);
  j["exch_ts_ns"] = std::to_string(a.exch_ts_ns);  // a string: exact in jq and JavaScript too
  j["event_seq"] = a.event_seq;
  j["price_ticks"] = a.price;
  j["price"] = price_in_currency(a.price, tick);
  j["values"] = alert_values_json(a);
  put_stage_times(j, a.t, alert_latency_ns(a.t));
  j["features"] = alert_features_json(a);
  if (a.type == AlertType::kModel) {
    j["model"] = {{"name", a.model.model}, {"version", a.model.version}, {"probability", a.model.probability},
                  {"threshold", a.model.threshold}, {"shadow", a.model.shadow}};
  }
  return j;
}

nlohmann::json alert_record_json(const AlertRecord& r) {
  nlohmann::json j;
  j["id"] = r.alert_id;
  j["symbol"] = r.symbol;
  j["symbol_id"] = r.symbol_id;
  j["type"] = r.type;
  j["severity"] = r.severity;
  j["exch_ts_ns"] = std::to_string(r.exch_ts_ns);
  j["event_seq"] = r.event_seq;
  j["price_ticks"] = r.price_ticks;
  j["price"] = r.price;
  nlohmann::json values = nlohmann::json::array();
  for (const auto& v : r.values) values.push_back({{"name", v.name}, {"value", v.value}, {"threshold", v.threshold}, {"cmp", v.cmp}});
  j["values"] = std::move(values);
  put_stage_times(j, r.t, r.latency_ns);
  nlohmann::json f = nlohmann::json::object();
  for (int i = 0; i < kFeatureCount && size_t(i) < r.features.size(); ++i) {
    if (std::isfinite(r.features[size_t(i)])) {
      f[feature_name(i)] = r.features[size_t(i)];
    } else {
      f[feature_name(i)] = nullptr;
    }
  }
  j["features"] = std::move(f);
  return j;
}

}  // namespace ts
