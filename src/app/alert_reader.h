#pragma once
// Reading alerts back for `ticksentry audit alerts` and `ticksentry explain`: the SQLite audit
// file or the PostgreSQL store, picked by --audit-db, --postgres-dsn or --config ([sinks]), the
// same answers from both (the stores' query semantics: src/audit/audit_store.h).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit_store.h"
#include "core/status.h"

namespace CLI {
class App;
}

namespace ts {

class PostgresStore;

struct AlertStoreChoice {
  std::string audit_db = "ticksentry-audit.db";
  std::string postgres_dsn;
  std::string config_path;
};

// Adds --audit-db, --postgres-dsn and --config (mutually exclusive) to `cmd`.
void add_alert_store_options(CLI::App* cmd, AlertStoreChoice* choice);

class AlertReader {
 public:
  // kNotFound when the SQLite file does not exist (never created by a reader); a bad config
  // throws ConfigError.
  static Result<std::unique_ptr<AlertReader>> open(AlertStoreChoice choice);
  ~AlertReader();

  Result<std::vector<AlertRecord>> query(const AlertQuery& q);
  // The model window of a model alert; nullopt when none was stored (PostgreSQL stores none).
  Result<std::optional<ModelInputRecord>> model_input(uint64_t alert_id);
  std::string describe() const;  // "audit store x.db" / "the PostgreSQL audit store"

 private:
  AlertReader() = default;
  std::string where_;
  std::unique_ptr<AuditStore> sqlite_;
  std::unique_ptr<PostgresStore> pg_;
};

}  // namespace ts
