#pragma once
// AlertHistory: GET /api/alerts, the audit trail searched by time, symbol and type.
//
// Query parameters (all optional):
//   symbol=AAPL   type=rapid_rise   severity=warning
//   since_ns=<exchange-time ns, inclusive>   until_ns=<exclusive>   limit=1..5000 (default 200)
// Answer: {"alerts": [alert, ...] newest first, "count": n} with each alert in the schema of
// src/audit/alert_json.h (alert_record_json: with the feature row and a model alert's score). A bad parameter (not a number, unknown
// type, limit out of range, unknown parameter) is a 400 with the reason.
//
// It reads the audit trail through a connection of its own: the SQLite file (WAL: readers never
// block the writer on the sink thread) or, with [sinks] audit_backend = "postgres", the shared
// PostgreSQL database (audit/postgres_store.h); both answer alike. Threading: handle() from any
// HTTP thread; one mutex guards the connection (neither SQLite's nor libpq's is shared);
// queries are small and off the hot path.
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit_store.h"
#include "core/status.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ts::http {

class AlertHistory {
 public:
  // Opens `db_path` (creating the schema if the file is new, like the writer does).
  static Result<std::unique_ptr<AlertHistory>> open(const std::string& db_path);
  // Connects to PostgreSQL with `dsn` (libpq connection string; creates the schema if missing).
  static Result<std::unique_ptr<AlertHistory>> open_postgres(const std::string& dsn);

  // Answers the request. Returns false when the request was bad (a 400 was sent).
  bool handle(const httplib::Request& req, httplib::Response& res);

  // GET /api/alerts/{id} (alert_detail.cpp): one alert with everything the store keeps about it,
  // for the dashboard's alert detail view and `ticksentry explain`'s readers:
  //   the /api/alerts schema (values with thresholds, the full feature row, stage times) plus
  //   "book": {"bids": [{"price_ticks", "price_text", "size", "size_text"}], "asks": [...]}
  //            (top 5 a side when it was raised, best first; null for alerts stored before)
  //   "model": {"name", "version", "probability", "threshold", "shadow", "rows", "cols",
  //             "window": [rows × cols floats, oldest row first]} (SQLite), the score alone
  //             {"name", "version", "probability", "threshold", "shadow"} (PostgreSQL keeps no
  //             windows), or null (rule alerts; model alerts stored before the score was kept).
  // 200 with that object; 400 when `id` is not a decimal integer; 404 when no alert has it.
  // Returns false when the request was bad (400 or 404 sent).
  bool handle_alert(const std::string& id, httplib::Response& res);

 private:
  using Query = std::function<Result<std::vector<AlertRecord>>(const AlertQuery&)>;
  using InputQuery = std::function<Result<std::optional<ModelInputRecord>>(uint64_t)>;
  AlertHistory(std::shared_ptr<void> store, Query query, InputQuery input = nullptr)
      : store_(std::move(store)), query_(std::move(query)), input_(std::move(input)) {}
  std::mutex mu_;
  std::shared_ptr<void> store_;  // the connection query_ reads through
  Query query_;
  InputQuery input_;  // null: the store keeps no model windows
};

}  // namespace ts::http
