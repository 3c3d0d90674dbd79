#pragma once
// AlertHistory: GET /api/alerts, the audit trail searched by time, symbol and type.
//
// Query parameters (all optional):
//   symbol=AAPL   type=rapid_rise   severity=warning
//   since_ns=<exchange-time ns, inclusive>   until_ns=<exclusive>   limit=1..5000 (default 200)
// Answer: {"alerts": [alert, ...] newest first, "count": n} with each alert in the schema of
// src/audit/alert_json.h (without the feature row). A bad parameter (not a number, unknown
// type, limit out of range, unknown parameter) is a 400 with the reason.
//
// It reads the audit store's SQLite file through its own connection (WAL: readers never block
// the writer on the sink thread). Threading: handle() from any HTTP thread; one mutex guards
// the connection (SQLite connection rules); queries are small and off the hot path.
#include <memory>
#include <mutex>
#include <string>

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

  // Answers the request. Returns false when the request was bad (a 400 was sent).
  bool handle(const httplib::Request& req, httplib::Response& res);

 private:
  explicit AlertHistory(std::unique_ptr<AuditStore> store) : store_(std::move(store)) {}
  std::mutex mu_;
  std::unique_ptr<AuditStore> store_;
};

}  // namespace ts::http
