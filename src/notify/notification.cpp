#include "notify/notification.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "audit/alert_format.h"

namespace ts::notify {

using nlohmann::json;

NotifyAlert make_notify_alert(const Alert& a, const SymbolTable& symbols, int64_t now_mono_ns, int64_t now_unix_ns) {
  NotifyAlert n;
  n.alert_id = a.id;
  n.type = a.type;
  n.labels = alert_labels(a, symbols);
  n.exch_ts_ns = a.exch_ts_ns;
  const int64_t emitted = a.t.emit_ns ? a.t.emit_ns : now_mono_ns;
  n.alert_unix_ns = now_unix_ns - std::max<int64_t>(0, now_mono_ns - emitted);
  const bool known = a.symbol < symbols.size();
  const Market market = known ? symbols.ref(a.symbol).market : Market::kUnknown;
  // Appends, not a + chain: GCC 12 warns (-Wrestrict) falsely on `string + " " + ...` here.
  std::string s = n.labels.get("symbol");
  s += ' ';
  s += alert_type_name(a.type);
  s += ' ';
  s += severity_name(a.severity);
  if (a.price != 0 && known) {
    s += ' ';
    s += price_text(a.price, symbols.ref(a.symbol));
  }
  append_alert_values(s, a, known ? &symbols.ref(a.symbol) : nullptr);
  if (a.exch_ts_ns) {
    s += " at ";
    s += format_exchange_time(a.exch_ts_ns, market);
  }
  n.summary = std::move(s);
  return n;
}

Labels Notification::common_labels() const {
  Labels out;
  if (alerts.empty()) return out;
  for (const auto& kv : alerts.front().labels.items()) {
    // kv, not [k, v]: a lambda that captures a structured binding is refused by clang before 16
    // (the fuzz preset's compiler).
    const auto& k = kv.first;
    const auto& v = kv.second;
    if (std::all_of(alerts.begin(), alerts.end(),
                    [&](const NotifyAlert& a) { return a.labels.has(k) && a.labels.get(k) == v; })) {
      out.set(k, v);
    }
  }
  return out;
}

int64_t Notification::first_alert_unix_ns() const {
  if (news_unix_ns) return news_unix_ns;
  int64_t t = INT64_MAX;
  for (const auto& a : alerts) t = std::min(t, a.alert_unix_ns);
  return alerts.empty() ? created_unix_ns : t;
}

namespace {
json labels_json(const Labels& l) {
  json j = json::object();
  for (const auto& [k, v] : l.items()) j[k] = v;
  return j;
}
Labels labels_from(const json& j) {
  Labels l;
  for (auto it = j.begin(); it != j.end(); ++it) l.set(it.key(), it.value().get<std::string>());
  return l;
}
json alert_json(const NotifyAlert& a) {
  return json{{"alert_id", a.alert_id}, {"type", alert_type_name(a.type)}, {"labels", labels_json(a.labels)},
              {"summary", a.summary},   {"exch_ts_ns", a.exch_ts_ns},      {"alert_unix_ns", a.alert_unix_ns},
              {"resolved", a.resolved}, {"ends_unix_ns", a.ends_unix_ns}};
}
NotifyAlert alert_from(const json& j) {
  NotifyAlert a;
  a.alert_id = j.at("alert_id").get<uint64_t>();
  auto t = alert_type_from_name(j.at("type").get<std::string>());
  if (!t) throw std::runtime_error("unknown alert type " + j.at("type").get<std::string>());
  a.type = *t;
  a.labels = labels_from(j.at("labels"));
  a.summary = j.at("summary").get<std::string>();
  a.exch_ts_ns = j.at("exch_ts_ns").get<int64_t>();
  a.alert_unix_ns = j.at("alert_unix_ns").get<int64_t>();
  a.resolved = j.at("resolved").get<bool>();
  a.ends_unix_ns = j.at("ends_unix_ns").get<int64_t>();
  return a;
}
}  // namespace

std::string notification_to_json(const Notification& n) {
  json alerts = json::array();
  for (const auto& a : n.alerts) alerts.push_back(alert_json(a));
  json j{{"receiver", n.receiver},
         {"route_id", n.route_id},
         {"group_key", n.group_key},
         {"group_labels", labels_json(n.group_labels)},
         {"resolved", n.resolved},
         {"alerts", std::move(alerts)},
         {"created_unix_ns", n.created_unix_ns}};
  return j.dump();
}

Result<Notification> notification_from_json(const std::string& text) {
  try {
    json j = json::parse(text);
    Notification n;
    n.receiver = j.at("receiver").get<std::string>();
    n.route_id = j.at("route_id").get<std::string>();
    n.group_key = j.at("group_key").get<std::string>();
    n.group_labels = labels_from(j.at("group_labels"));
    n.resolved = j.at("resolved").get<bool>();
    for (const auto& a : j.at("alerts")) n.alerts.push_back(alert_from(a));
    n.created_unix_ns = j.at("created_unix_ns").get<int64_t>();
    return n;
  } catch (const std::exception& e) {
    return Status(StatusCode::kParseError, std::string("notification JSON: ") + e.what());
  }
}

std::string notify_alert_to_json(const NotifyAlert& a) { return alert_json(a).dump(); }

Result<NotifyAlert> notify_alert_from_json(const std::string& text) {
  try {
    return alert_from(json::parse(text));
  } catch (const std::exception& e) {
    return Status(StatusCode::kParseError, std::string("alert JSON: ") + e.what());
  }
}

}  // namespace ts::notify
