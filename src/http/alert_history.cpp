#include "http/alert_history.h"

#include "audit/alert_json.h"

#include <charconv>
#include <set>

#include "audit/postgres_store.h"
#include "detect/alert.h"
#include "http/http_json.h"

namespace ts::http {

namespace {

bool parse_i64(const std::string& s, int64_t* out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && p == end && !s.empty();
}

bool known_type(const std::string& t) {
  for (int i = 0; i < kAlertTypeCount; ++i) {
    if (t == alert_type_name(static_cast<AlertType>(i))) return true;
  }
  return false;
}


}  // namespace

Result<std::unique_ptr<AlertHistory>> AlertHistory::open(const std::string& db_path) {
  auto store = AuditStore::open(db_path);
  if (!store.is_ok()) return store.status().with_context("alert history");
  std::shared_ptr<AuditStore> s = std::move(store).value();
  AuditStore* raw = s.get();
  return std::unique_ptr<AlertHistory>(new AlertHistory(s, [raw](const AlertQuery& q) { return raw->query(q); },
                                                        [raw](uint64_t id) { return raw->model_input(id); }));
}

Result<std::unique_ptr<AlertHistory>> AlertHistory::open_postgres(const std::string& dsn) {
  auto store = PostgresStore::open(dsn);
  if (!store.is_ok()) return store.status().with_context("alert history");
  std::shared_ptr<PostgresStore> s = std::move(store).value();
  PostgresStore* raw = s.get();
  return std::unique_ptr<AlertHistory>(new AlertHistory(s, [raw](const AlertQuery& q) { return raw->query(q); }));
}

bool AlertHistory::handle(const httplib::Request& req, httplib::Response& res) {
  static const std::set<std::string> kKnown = {"symbol", "type", "severity", "since_ns", "until_ns", "limit", "token"};
  for (const auto& [key, value] : req.params) {
    if (!kKnown.count(key)) {
      reply_error(res, 400, "bad_parameter", "unknown parameter '" + key + "' (symbol, type, severity, since_ns, until_ns, limit)");
      return false;
    }
  }
  AlertQuery q;
  q.limit = 200;
  if (req.has_param("symbol")) q.symbol = req.get_param_value("symbol");
  if (req.has_param("type")) {
    q.type = req.get_param_value("type");
    if (!known_type(*q.type)) {
      reply_error(res, 400, "bad_parameter", "unknown alert type '" + *q.type + "'");
      return false;
    }
  }
  std::string severity;
  if (req.has_param("severity")) {
    severity = req.get_param_value("severity");
    if (severity != "info" && severity != "warning" && severity != "critical") {
      reply_error(res, 400, "bad_parameter", "severity must be info, warning or critical");
      return false;
    }
  }
  struct NumParam { const char* name; int64_t* out; int64_t lo, hi; };
  int64_t limit = q.limit;
  for (NumParam p : {NumParam{"since_ns", &q.since_exch_ns, INT64_MIN, INT64_MAX},
                     NumParam{"until_ns", &q.until_exch_ns, INT64_MIN, INT64_MAX},
                     NumParam{"limit", &limit, 1, 5000}}) {
    if (!req.has_param(p.name)) continue;
    const std::string v = req.get_param_value(p.name);
    if (!parse_i64(v, p.out) || *p.out < p.lo || *p.out > p.hi) {
      reply_error(res, 400, "bad_parameter", std::string(p.name) + " must be an integer" +
                                                 (p.lo == 1 ? " in 1..5000" : " (ns)") + ", got '" + v + "'");
      return false;
    }
  }
  q.limit = int(limit);
  if (!severity.empty()) q.limit = 5000;  // severity is filtered here, after the SQL query
  Result<std::vector<AlertRecord>> rows = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return query_(q);
  }();
  if (!rows.is_ok()) {
    reply_error(res, 500, "audit_store", rows.status().message());
    return true;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows.value()) {
    if (!severity.empty() && r.severity != severity) continue;
    if (int64_t(list.size()) >= limit) break;
    list.push_back(alert_record_json(r));
  }
  const size_t n = list.size();
  reply_json(res, nlohmann::json{{"alerts", std::move(list)}, {"count", n}}.dump(-1, ' ', false,
                                                                                 nlohmann::json::error_handler_t::replace));
  return true;
}

}  // namespace ts::http
