#pragma once
// `ticksentry audit deliveries [--audit-db FILE | --postgres-dsn DSN | --config FILE] [--receiver R]
// [--state S] [--limit N] [--json]`:
// the notification delivery record (table notify_deliveries, src/audit/audit_store.h) in the
// SQLite audit file, or in PostgreSQL (--postgres-dsn, or --config whose [sinks] audit_backend =
// "postgres"; --config with the SQLite backend reads its audit_db), the same output from both: per
// notification its receiver, state (pending / delivered / failed), attempts, first-enqueue →
// delivered and alert → delivered latency, alert ids and last error, newest first, then a
// summary per receiver of the rows shown.
// Exit codes: 0 success (also when there are no rows), 2 bad arguments, no such database or
// server unreachable.
#include <optional>
#include <string>

#include "app/audit_alerts.h"

namespace CLI {
class App;
}

namespace ts {

class AuditCommand {
 public:
  explicit AuditCommand(CLI::App& app);
  std::optional<int> run();

 private:
  CLI::App* cmd_ = nullptr;
  CLI::App* deliveries_ = nullptr;
  CLI::App* alerts_ = nullptr;  // audit alerts (app/audit_alerts.h)
  AuditAlertsOptions alerts_options_;
  std::string audit_db_ = "ticksentry-audit.db";
  std::string postgres_dsn_;
  std::string config_path_;
  std::string receiver_;
  std::string state_;
  int limit_ = 50;
  bool json_ = false;
};

}  // namespace ts
