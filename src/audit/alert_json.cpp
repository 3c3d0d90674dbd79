#include "audit/alert_json.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "audit/alert_format.h"
#include "core/decimal.h"

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

namespace {
// A notional or size as the JSON number of its exact decimal text: an integer when the value is
// whole ("1851025.00" → 1851025, not 1851025.0), else the double nearest to the text (printed
// back as that text).
nlohmann::json decimal_number(const std::string& text) {
  const size_t dot = text.find('.');
  const bool whole = dot == std::string::npos || text.find_first_not_of('0', dot + 1) == std::string::npos;
  if (whole && text.find_first_of("einIN") == std::string::npos) return std::strtoll(text.c_str(), nullptr, 10);
  return std::strtod(text.c_str(), nullptr);
}
// A stored notional or size (a double read back from SQLite/PostgreSQL) in the live sinks' JSON
// form: an integer when whole, else the double.
nlohmann::json stored_decimal(double v) {
  if (std::isfinite(v) && std::fabs(v) < 9.0e15 && std::floor(v) == v) return static_cast<int64_t>(v);
  return v;
}
nlohmann::json model_score_json(const Alert& a) {
  return {{"name", a.model.model}, {"version", a.model.version}, {"probability", a.model.probability},
          {"threshold", a.model.threshold}, {"shadow", a.model.shadow}};
}
}  // namespace

nlohmann::json alert_values_json(const Alert& a, const RefData* ref) {
  nlohmann::json values = nlohmann::json::array();
  for (int i = 0; i < a.value_count && i < Alert::kMaxValues; ++i) {
    const AlertValue& v = a.values[i];
    const ValueUnit unit = value_unit(v.name);
    nlohmann::json j = {{"name", v.name ? v.name : "?"}, {"value", v.value}, {"threshold", v.threshold},
                        {"cmp", v.cmp == Cmp::kInfo ? "info" : cmp_symbol(v.cmp)}};
    if (ref != nullptr && unit != ValueUnit::kPlain && std::isfinite(v.value) && std::isfinite(v.threshold)) {
      const std::string text = format_alert_value(v.value, unit, ref);
      j["value"] = decimal_number(text);
      j["threshold"] = decimal_number(format_alert_value(v.threshold, unit, ref));
      j["text"] = text;  // the same text as stdout and notifications
    }
    values.push_back(std::move(j));
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
  const RefData* ref = known ? &symbols.ref(a.symbol) : nullptr;
  nlohmann::json j;
  j["id"] = a.id;
  j["symbol"] = symbol_label(symbols, a.symbol);
  j["symbol_id"] = a.symbol;
  j["type"] = alert_type_name(a.type);
  j["severity"] = severity_name(a.severity);
  j["exch_ts_ns"] = std::to_string(a.exch_ts_ns);  // a string: exact in jq and JavaScript too
  j["event_seq"] = a.event_seq;
  j["price_ticks"] = a.price;
  if (ref != nullptr) {
    j["price"] = price_number(a.price, *ref);  // 224.89, never 224.89000000000001
    j["price_text"] = price_text(a.price, *ref);
  } else {
    j["price"] = price_in_currency(a.price, tick);
  }
  j["values"] = alert_values_json(a, ref);
  put_stage_times(j, a.t, alert_latency_ns(a.t));
  j["features"] = alert_features_json(a);
  if (a.type == AlertType::kModel) j["model"] = model_score_json(a);
  return j;
}

std::string alert_model_text(const Alert& a) {
  if (a.type != AlertType::kModel) return "";
  return model_score_json(a).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ModelScoreRecord parse_model_json(const std::string& text) {
  ModelScoreRecord m;
  if (text.empty()) return m;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("probability") || !j["probability"].is_number()) return m;
  m.name = j.value("name", std::string());
  m.version = j.value("version", uint32_t(0));
  m.probability = j["probability"].get<double>();
  m.threshold = j.value("threshold", 0.0);
  m.shadow = j.value("shadow", false);
  m.present = true;
  return m;
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
  for (const auto& v : r.values) {
    // Notionals and sizes as the live sinks write them (a whole value is an integer); the
    // decimal text (values[].text) is not kept by the stores.
    const bool decimal = value_unit(v.name.c_str()) != ValueUnit::kPlain;
    values.push_back({{"name", v.name},
                      {"value", decimal ? stored_decimal(v.value) : nlohmann::json(v.value)},
                      {"threshold", decimal ? stored_decimal(v.threshold) : nlohmann::json(v.threshold)},
                      {"cmp", v.cmp}});
  }
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
  if (r.model.present) {
    j["model"] = {{"name", r.model.name}, {"version", r.model.version}, {"probability", r.model.probability},
                  {"threshold", r.model.threshold}, {"shadow", r.model.shadow}};
  }
  return j;
}

nlohmann::json alert_book_json(const Alert& a, const RefData* ref) {
  auto side = [&](const Level* levels, int n) {
    nlohmann::json out = nlohmann::json::array();
    for (int i = 0; i < n && i < kAlertBookLevels; ++i) {
      const Level& l = levels[i];
      out.push_back({{"price_ticks", l.price},
                     {"price_text", ref ? price_text(l.price, *ref) : format_price(l.price, 0.01)},
                     {"size", l.qty},
                     {"size_text", ref ? format_units(l.qty, ref->size_increment) : std::to_string(l.qty)}});
    }
    return out;
  };
  return {{"bids", side(a.book.bids, a.book.bid_levels)}, {"asks", side(a.book.asks, a.book.ask_levels)}};
}

BookRecord parse_book_json(const std::string& text) {
  BookRecord b;
  if (text.empty()) return b;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("bids") || !j.contains("asks") || !j["bids"].is_array() || !j["asks"].is_array()) {
    return b;
  }
  auto side = [](const nlohmann::json& arr, std::vector<BookLevelRecord>& out) {
    for (const auto& l : arr) {
      if (!l.is_object()) continue;
      BookLevelRecord r;
      r.price_ticks = l.value("price_ticks", int64_t(0));
      r.price_text = l.value("price_text", std::string());
      r.size = l.value("size", int64_t(0));
      r.size_text = l.value("size_text", std::string());
      out.push_back(std::move(r));
    }
  };
  side(j["bids"], b.bids);
  side(j["asks"], b.asks);
  b.present = true;
  return b;
}

nlohmann::json book_record_json(const BookRecord& b) {
  if (!b.present) return nullptr;
  auto side = [](const std::vector<BookLevelRecord>& levels) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& l : levels) {
      out.push_back({{"price_ticks", l.price_ticks}, {"price_text", l.price_text}, {"size", l.size}, {"size_text", l.size_text}});
    }
    return out;
  };
  return {{"bids", side(b.bids)}, {"asks", side(b.asks)}};
}

}  // namespace ts
