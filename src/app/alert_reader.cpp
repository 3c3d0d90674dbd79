#include "app/alert_reader.h"

#include <CLI/CLI.hpp>

#include <filesystem>

#include "audit/postgres_store.h"
#include "core/config.h"

namespace ts {

void add_alert_store_options(CLI::App* cmd, AlertStoreChoice* choice) {
  auto* db = cmd->add_option("--audit-db", choice->audit_db, "SQLite audit database (default ticksentry-audit.db)");
  auto* pg = cmd->add_option("--postgres-dsn", choice->postgres_dsn, "PostgreSQL audit store (libpq connection string)");
  auto* cfg = cmd->add_option("--config", choice->config_path, "the audit store of this config's [sinks]");
  db->excludes(pg)->excludes(cfg);
  pg->excludes(cfg);
}

AlertReader::~AlertReader() = default;

Result<std::unique_ptr<AlertReader>> AlertReader::open(AlertStoreChoice c) {
  if (!c.config_path.empty()) {
    Config config = Config::load_file(c.config_path);
    auto s = config.section("sinks");
    if (s.get("audit_backend", "sqlite") == "postgres") {
      c.postgres_dsn = s.get("postgres_dsn", "");
    } else {
      c.audit_db = s.get("audit_db", "ticksentry-audit.db");
    }
  }
  std::unique_ptr<AlertReader> r(new AlertReader());
  if (!c.postgres_dsn.empty()) {
    auto pg = PostgresStore::open(c.postgres_dsn);
    if (!pg.is_ok()) return pg.status();
    r->pg_ = std::move(pg).value();
    r->where_ = "the PostgreSQL audit store";
    return r;
  }
  if (!std::filesystem::exists(c.audit_db)) {
    return Status(StatusCode::kNotFound, c.audit_db + ": no such audit database");
  }
  auto db = AuditStore::open(c.audit_db);
  if (!db.is_ok()) return db.status();
  r->sqlite_ = std::move(db).value();
  r->where_ = "audit store " + c.audit_db;
  return r;
}

Result<std::vector<AlertRecord>> AlertReader::query(const AlertQuery& q) {
  return sqlite_ ? sqlite_->query(q) : pg_->query(q);
}

Result<std::optional<ModelInputRecord>> AlertReader::model_input(uint64_t alert_id) {
  if (!sqlite_) return std::optional<ModelInputRecord>();
  return sqlite_->model_input(alert_id);
}

std::string AlertReader::describe() const { return where_; }

}  // namespace ts
