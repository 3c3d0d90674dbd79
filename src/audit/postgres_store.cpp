#include "audit/postgres_store.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/alert_format.h"
#include "audit/alert_json.h"
#include "core/clock.h"

namespace ts {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS alerts (
  row_id BIGSERIAL PRIMARY KEY,
  alert_id BIGINT NOT NULL UNIQUE,
  symbol_id BIGINT NOT NULL,
  symbol TEXT NOT NULL,
  type TEXT NOT NULL,
  severity TEXT NOT NULL,
  exch_ts_ns BIGINT NOT NULL,
  event_seq BIGINT NOT NULL,
  price_ticks BIGINT NOT NULL,
  price DOUBLE PRECISION NOT NULL,
  recv_ns BIGINT NOT NULL,
  book_ns BIGINT NOT NULL,
  features_ns BIGINT NOT NULL,
  detect_ns BIGINT NOT NULL,
  emit_ns BIGINT NOT NULL,
  latency_ns BIGINT NOT NULL,
  values_json TEXT NOT NULL,
  features_json TEXT NOT NULL,
  features_blob BYTEA NOT NULL,
  written_at_ns BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS alerts_symbol_ts ON alerts(symbol, exch_ts_ns);
CREATE INDEX IF NOT EXISTS alerts_type_ts ON alerts(type, exch_ts_ns);
-- Added after the first schema: stores made before gain the column (old rows get '').
ALTER TABLE alerts ADD COLUMN IF NOT EXISTS book_json TEXT NOT NULL DEFAULT '';
ALTER TABLE alerts ADD COLUMN IF NOT EXISTS model_json TEXT NOT NULL DEFAULT '';
)sql";

constexpr const char* kInsertName = "ticksentry_insert_alert";
constexpr const char* kInsert =
    "INSERT INTO alerts (alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, "
    "recv_ns, book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_json, features_blob, "
    "written_at_ns, book_json, model_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, "
    "$16, $17, $18, $19, $20, $21) ON CONFLICT (alert_id) DO NOTHING";
constexpr int kParams = 21;

}  // namespace

Result<pg_conn*> pg_open(const std::string& dsn, const char* schema, const std::string& who) {
  // Keywords before the expanded `dsn` are defaults: the DSN's own connect_timeout wins.
  const char* keys[] = {"connect_timeout", "client_encoding", "dbname", nullptr};
  const char* values[] = {"10", "UTF8", dsn.c_str(), nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (PQstatus(conn) != CONNECTION_OK) {
    Status st = pg_error(conn, "PQconnectdb(" + dsn + ")").with_context(who);
    PQfinish(conn);
    return st;
  }
  // CREATE ... IF NOT EXISTS would print a NOTICE on stderr for every existing relation.
  Status st = pg_exec(conn, "SET client_min_messages = warning", "SET client_min_messages");
  // Several instances may create the schema at once: serialize on an advisory lock.
  if (st) st = pg_exec(conn, "SELECT pg_advisory_lock(7254001)", "schema lock");
  if (st) {
    st = pg_exec(conn, schema, "schema");
    Status unlock = pg_exec(conn, "SELECT pg_advisory_unlock(7254001)", "schema unlock");
    if (st) st = unlock;
  }
  if (!st) {
    PQfinish(conn);
    return st.with_context(who);
  }
  return conn;
}

Status pg_error(pg_conn* conn, const std::string& what) {
  std::string msg = "postgres " + what + ": " + PQerrorMessage(conn);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return Status(StatusCode::kIoError, msg);
}

Status pg_exec(pg_conn* conn, const char* sql, const char* what) {
  PGresult* r = PQexec(conn, sql);
  const ExecStatusType st = PQresultStatus(r);
  PQclear(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return pg_error(conn, std::string("PQexec(") + what + ")");
  return Status::ok();
}

PgRows::~PgRows() { PQclear(r_); }
int PgRows::size() const { return PQntuples(r_); }
const char* PgRows::text(int row, int col) const { return PQgetvalue(r_, row, col); }
int64_t PgRows::i64(int row, int col) const { return std::strtoll(PQgetvalue(r_, row, col), nullptr, 10); }

Status pg_prepare(pg_conn* conn, const char* name, const char* sql, int n, const std::string& what) {
  PGresult* r = PQprepare(conn, name, sql, n, nullptr);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  return ok ? Status::ok() : pg_error(conn, "PQprepare(" + what + ")");
}

Status pg_exec_prepared(pg_conn* conn, const char* name, int n, const char* const* values, const int* lengths,
                        const int* formats, const std::string& what) {
  PGresult* r = PQexecPrepared(conn, name, n, values, lengths, formats, 0);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  return ok ? Status::ok() : pg_error(conn, what);
}

Result<PgRows> pg_query(pg_conn* conn, const char* sql, int n, const char* const* values, const std::string& what) {
  PGresult* r = PQexecParams(conn, sql, n, nullptr, values, nullptr, nullptr, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    PQclear(r);
    return pg_error(conn, what);
  }
  return PgRows(r);
}

Result<std::unique_ptr<PostgresStore>> PostgresStore::open(const std::string& dsn) {
  auto conn = pg_open(dsn, kSchema, "postgres audit store");
  if (!conn.is_ok()) return conn.status();
  std::unique_ptr<PostgresStore> s(new PostgresStore(conn.value()));
  TS_RETURN_IF_ERROR(pg_prepare(s->conn_, kInsertName, kInsert, kParams, "insert"));
  return s;
}

PostgresStore::~PostgresStore() { (void)close(); }

Status PostgresStore::write(const Alert& a, const SymbolTable& symbols) {
  if (!conn_) return Status(StatusCode::kInvalidArgument, "postgres audit store: write after close");
  if (!in_txn_) {
    TS_RETURN_IF_ERROR(exec("BEGIN", "BEGIN"));
    in_txn_ = true;
  }
  const RefData& ref = symbols.ref(a.symbol);
  const int64_t latency = a.t.detect_ns > 0 && a.t.recv_ns > 0 ? a.t.detect_ns - a.t.recv_ns : -1;
  const std::string text[] = {
      std::to_string(int64_t(a.id)), std::to_string(a.symbol), ref.name, alert_type_name(a.type),
      severity_name(a.severity), std::to_string(a.exch_ts_ns), std::to_string(int64_t(a.event_seq)),
      std::to_string(a.price), price_text(a.price, ref), std::to_string(a.t.recv_ns),
      std::to_string(a.t.book_ns), std::to_string(a.t.features_ns), std::to_string(a.t.detect_ns),
      std::to_string(a.t.emit_ns), std::to_string(latency), alert_values_json(a, &ref).dump(),
      alert_features_json(a).dump()};
  const char* values[kParams];
  int lengths[kParams] = {};
  int formats[kParams] = {};
  for (int i = 0; i < 17; ++i) values[i] = text[i].c_str();
  values[17] = reinterpret_cast<const char*>(a.features);  // bytea, binary: kFeatureCount float32 LE
  lengths[17] = int(sizeof(a.features));
  formats[17] = 1;
  const std::string written = std::to_string(wall_ns());
  values[18] = written.c_str();
  const std::string book = alert_book_json(a, &ref).dump();
  values[19] = book.c_str();
  const std::string model = alert_model_text(a);
  values[20] = model.c_str();
  Status st = pg_exec_prepared(conn_, kInsertName, kParams, values, lengths, formats, "insert alert");
  if (!st) {
    (void)exec("ROLLBACK", "ROLLBACK");
    in_txn_ = false;
    return st;
  }
  return Status::ok();
}

Status PostgresStore::flush() {
  if (!conn_ || !in_txn_) return Status::ok();
  in_txn_ = false;
  return exec("COMMIT", "COMMIT");
}

Status PostgresStore::close() {
  if (!conn_) return Status::ok();
  Status st = flush();
  PQfinish(conn_);
  conn_ = nullptr;
  return st;
}

Result<int64_t> PostgresStore::scalar(const char* sql) {
  if (!conn_) return Status(StatusCode::kInvalidArgument, "postgres audit store: closed");
  auto rows = pg_query(conn_, sql, 0, nullptr, "query");
  if (!rows.is_ok()) return rows.status();
  if (rows.value().size() != 1) return Status(StatusCode::kIoError, std::string("postgres query: no row from ") + sql);
  return rows.value().i64(0, 0);
}

Result<int64_t> PostgresStore::count() { return scalar("SELECT count(*) FROM alerts"); }
Result<int64_t> PostgresStore::distinct_ids() { return scalar("SELECT count(DISTINCT alert_id) FROM alerts"); }

namespace {
constexpr const char* kQuery =
    "SELECT row_id, alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, recv_ns, "
    "book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_blob, book_json, model_json FROM alerts "
    "WHERE ($1::text IS NULL OR symbol = $1) AND ($2::text IS NULL OR type = $2) "
    "AND exch_ts_ns >= $3::bigint AND exch_ts_ns < $4::bigint AND ($6::bigint IS NULL OR alert_id = $6) "
    "ORDER BY exch_ts_ns DESC, row_id DESC LIMIT $5::int";
}  // namespace

Result<std::vector<AlertRecord>> PostgresStore::query(const AlertQuery& q) {
  if (!conn_) return Status(StatusCode::kInvalidArgument, "postgres audit store: closed");
  const std::string since = std::to_string(q.since_exch_ns), until = std::to_string(q.until_exch_ns),
                    limit = std::to_string(q.limit);
  const std::string id = q.alert_id ? std::to_string(int64_t(*q.alert_id)) : "";
  const char* values[6] = {q.symbol ? q.symbol->c_str() : nullptr, q.type ? q.type->c_str() : nullptr, since.c_str(),
                           until.c_str(), limit.c_str(), q.alert_id ? id.c_str() : nullptr};
  auto result = pg_query(conn_, kQuery, 6, values, "query alerts");
  if (!result.is_ok()) return result.status();
  const PgRows& r = result.value();
  std::vector<AlertRecord> rows;
  rows.reserve(size_t(r.size()));
  for (int i = 0; i < r.size(); ++i) {
    AlertRecord a;
    a.row_id = r.i64(i, 0);
    a.alert_id = static_cast<uint64_t>(r.i64(i, 1));
    a.symbol_id = static_cast<SymbolId>(r.i64(i, 2));
    a.symbol = r.text(i, 3);
    a.type = r.text(i, 4);
    a.severity = r.text(i, 5);
    a.exch_ts_ns = r.i64(i, 6);
    a.event_seq = static_cast<uint64_t>(r.i64(i, 7));
    a.price_ticks = r.i64(i, 8);
    a.price = std::strtod(r.text(i, 9), nullptr);
    a.t.recv_ns = r.i64(i, 10);
    a.t.book_ns = r.i64(i, 11);
    a.t.features_ns = r.i64(i, 12);
    a.t.detect_ns = r.i64(i, 13);
    a.t.emit_ns = r.i64(i, 14);
    a.latency_ns = r.i64(i, 15);
    const nlohmann::json vj = nlohmann::json::parse(r.text(i, 16), nullptr, false);
    if (vj.is_array()) {
      for (const auto& v : vj) {
        a.values.push_back({v.value("name", ""), v.value("value", 0.0), v.value("threshold", 0.0), v.value("cmp", "")});
      }
    }
    size_t bytes = 0;  // bytea comes as text ("\\x..."): unescape it
    unsigned char* blob = PQunescapeBytea(reinterpret_cast<const unsigned char*>(r.text(i, 17)), &bytes);
    if (blob) {
      a.features.resize(bytes / sizeof(float));
      // An alert without features has no vector storage: memcpy of a null pointer is undefined
      // even for 0 bytes (UBSan, PostgresHistory.OneAlertWithItsBookAndAnOlderTableMigrated).
      if (!a.features.empty()) std::memcpy(a.features.data(), blob, a.features.size() * sizeof(float));
      PQfreemem(blob);
    }
    a.book = parse_book_json(r.text(i, 18));
    a.model = parse_model_json(r.text(i, 19));
    rows.push_back(std::move(a));
  }
  return rows;
}

}  // namespace ts
