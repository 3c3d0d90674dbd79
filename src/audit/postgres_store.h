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

#include "audit/audit_store.h"
#include "detect/alert_sink.h"

struct pg_conn;
struct pg_result;

namespace ts {

// libpq helpers shared by the PostgreSQL stores (this one and the notifier's delivery audit,
// src/notify/delivery_audit_pg.cpp).
// Connects with `dsn` (connect_timeout 10 s unless the DSN sets its own; client_encoding UTF8;
// NOTICEs off) and runs `schema` under the advisory lock that serializes schema creation across
// instances. The caller owns the connection (PQfinish). Errors start with `who`.
Result<pg_conn*> pg_open(const std::string& dsn, const char* schema, const std::string& who);
// Runs `sql` (no parameters, no rows wanted); an error names `what` and the server's message.
Status pg_exec(pg_conn* conn, const char* sql, const char* what);
// An error Status: "postgres `what`: " and the connection's last message (no trailing newline).
Status pg_error(pg_conn* conn, const std::string& what);

// The rows of a query, in text format; freed with the object.
class PgRows {
 public:
  explicit PgRows(pg_result* r) : r_(r) {}
  PgRows(PgRows&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgRows& operator=(PgRows&&) = delete;
  ~PgRows();
  int size() const;
  const char* text(int row, int col) const;  // "" for NULL
  int64_t i64(int row, int col) const;

 private:
  pg_result* r_;
};
// Prepares `sql` (`n` parameters) as statement `name` on this connection.
Status pg_prepare(pg_conn* conn, const char* name, const char* sql, int n, const std::string& what);
// Runs prepared statement `name` (no rows wanted); `lengths` and `formats` may be null (all text).
Status pg_exec_prepared(pg_conn* conn, const char* name, int n, const char* const* values, const int* lengths,
                        const int* formats, const std::string& what);
// Runs `sql` with `n` text parameters (nullptr = NULL); an error names `what`.
Result<PgRows> pg_query(pg_conn* conn, const char* sql, int n, const char* const* values, const std::string& what);

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
  Status exec(const char* sql, const char* what) { return pg_exec(conn_, sql, what); }
  Result<int64_t> scalar(const char* sql);
  pg_conn* conn_ = nullptr;
  bool in_txn_ = false;
};

}  // namespace ts
