#pragma once
// `ticksentry audit alerts [--symbol S] [--type T] [--since TIME] [--until TIME] [--limit N]
// [--json]` and `ticksentry explain ID`, over the SQLite or PostgreSQL audit store
// (app/alert_reader.h; docs/audit.md).
//
// audit alerts: newest first, one line per alert (exchange time in UTC with its date, symbol,
// type, severity, price, the values that fired against their thresholds, the id), or with --json
// one object per line in the JSONL schema. TIME: ns since the epoch or RFC 3339 with a zone
// ([since, until) in exchange time).
// explain: everything the store holds about one alert: what fired (values and thresholds), the
// full feature row, the per-stage microseconds, the book when it was raised (top 5 levels a
// side, exact decimals) and, for a model alert, the model, its version, probability, threshold
// and the window it scored.
// Exit codes: 0 found (audit alerts: also when nothing matches), 1 explain: no such alert,
// 2 bad arguments, no such database, server unreachable.
#include <cstdint>
#include <optional>
#include <string>

#include "app/alert_reader.h"

namespace CLI {
class App;
}

namespace ts {

struct AuditAlertsOptions {
  AlertStoreChoice store;
  std::string symbol;
  std::string type;
  std::string since;
  std::string until;
  int limit = 50;
  bool json = false;
};

// Registers `audit alerts` under `audit`.
CLI::App* add_audit_alerts(CLI::App* audit, AuditAlertsOptions* o);
int run_audit_alerts(const AuditAlertsOptions& o);

class ExplainCommand {
 public:
  explicit ExplainCommand(CLI::App& app);
  std::optional<int> run();

 private:
  CLI::App* cmd_ = nullptr;
  AlertStoreChoice store_;
  uint64_t id_ = 0;
  bool json_ = false;
};

}  // namespace ts
