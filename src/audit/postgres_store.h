#pragma once
// The audit trail in PostgreSQL (libpq), for several ticksentry instances sharing one store; the
// embedded SQLite AuditStore stays the default. Chosen in config:
//   [sinks] audit_backend = "postgres", postgres_dsn = "host=… port=… dbname=… user=…"
//
// Table `alerts` (created if missing): the columns of the SQLite store (audit/audit_store.h)
// with alert_id BIGINT UNIQUE — ids are deterministic (detect/alert.h), and inserts are
// `ON CONFLICT (alert_id) DO NOTHING`: an alert re-raised by any instance is stored once.
// (A uint64 id is stored as the BIGINT with the same 64 bits.)
//
// Reading: query() answers the dashboard's /api/alerts (src/http/alert_history.h) with the
// SQLite store's semantics (AuditStore::query: symbol, type, [since, until) in exchange ns,
// newest first, limit). A reader opens its own connection (open()), never the writer's.
//
// Writes are batched like the SQLite store: write() inserts inside an open transaction (begun on
// the first write after a commit); flush() commits it. Every libpq call is checked; an error is
// a Status naming the call and the server's message, and the open transaction is rolled back
// (the dispatcher counts the failure; a later write starts afresh). Threading: one thread at a
// time (a libpq connection is not shared).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audit/alert_sink.h"
#include "audit/audit_store.h"

struct pg_conn;

namespace ts {

class PostgresStore : public AlertSink {
 public:
  // Connects with `dsn` (libpq connection string) and creates the schema if needed.
  static Result<std::unique_ptr<PostgresStore>> open(const std::string& dsn);
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  Status write(const Alert& a, const SymbolTable& symbols) override;
  Status flush() override;
  Status close() override;

  Result<int64_t> count();           // rows in alerts
  Result<int64_t> distinct_ids();    // distinct alert ids (equals count(): ids are unique)
  // Alerts matching `q`, newest first (exch_ts_ns, then insertion order), at most q.limit.
  Result<std::vector<AlertRecord>> query(const AlertQuery& q);

 private:
  explicit PostgresStore(pg_conn* conn) : conn_(conn) {}
  Status exec(const char* sql, const char* what);
  Result<int64_t> scalar(const char* sql);
  pg_conn* conn_ = nullptr;
  bool in_txn_ = false;
};

}  // namespace ts
