#include "audit/postgres_store.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

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
)sql";

constexpr const char* kInsertName = "ticksentry_insert_alert";
constexpr const char* kInsert =
    "INSERT INTO alerts (alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, "
    "recv_ns, book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_json, features_blob, "
    "written_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) "
    "ON CONFLICT (alert_id) DO NOTHING";
constexpr int kParams = 19;

}  // namespace

Result<std::unique_ptr<PostgresStore>> PostgresStore::open(const std::string& dsn) {
  pg_conn* conn = PQconnectdb(dsn.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = "postgres audit store: PQconnectdb(" + dsn + "): " + PQerrorMessage(conn);
    PQfinish(conn);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    return Status(StatusCode::kIoError, msg);
  }
  std::unique_ptr<PostgresStore> s(new PostgresStore(conn));
  // CREATE ... IF NOT EXISTS would print a NOTICE on stderr for every existing relation.
  TS_RETURN_IF_ERROR(s->exec("SET client_min_messages = warning", "SET client_min_messages"));
  // Several instances may create the schema at once: serialize on an advisory lock.
  TS_RETURN_IF_ERROR(s->exec("SELECT pg_advisory_lock(7254001)", "schema lock"));
  Status schema = s->exec(kSchema, "schema");
  TS_RETURN_IF_ERROR(s->exec("SELECT pg_advisory_unlock(7254001)", "schema unlock"));
  TS_RETURN_IF_ERROR(schema);
  PGresult* r = PQprepare(conn, kInsertName, kInsert, kParams, nullptr);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (!ok) return Status(StatusCode::kIoError, std::string("postgres PQprepare(insert): ") + PQerrorMessage(conn));
  return s;
}

PostgresStore::~PostgresStore() { (void)close(); }

Status PostgresStore::exec(const char* sql, const char* what) {
  PGresult* r = PQexec(conn_, sql);
  const ExecStatusType st = PQresultStatus(r);
  PQclear(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string msg = std::string("postgres PQexec(") + what + "): " + PQerrorMessage(conn_);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    return Status(StatusCode::kIoError, msg);
  }
  return Status::ok();
}

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
      std::to_string(a.price), std::to_string(double(a.price) * ref.tick_size), std::to_string(a.t.recv_ns),
      std::to_string(a.t.book_ns), std::to_string(a.t.features_ns), std::to_string(a.t.detect_ns),
      std::to_string(a.t.emit_ns), std::to_string(latency), alert_values_json(a).dump(),
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
  PGresult* r = PQexecPrepared(conn_, kInsertName, kParams, values, lengths, formats, 0);
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (!ok) {
    Status st(StatusCode::kIoError, std::string("postgres insert alert: ") + PQerrorMessage(conn_));
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
  PGresult* r = PQexec(conn_, sql);
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    std::string msg = std::string("postgres query: ") + PQerrorMessage(conn_);
    PQclear(r);
    return Status(StatusCode::kIoError, msg);
  }
  const int64_t v = std::stoll(PQgetvalue(r, 0, 0));
  PQclear(r);
  return v;
}

Result<int64_t> PostgresStore::count() { return scalar("SELECT count(*) FROM alerts"); }
Result<int64_t> PostgresStore::distinct_ids() { return scalar("SELECT count(DISTINCT alert_id) FROM alerts"); }

namespace {
constexpr const char* kQuery =
    "SELECT row_id, alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, recv_ns, "
    "book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_blob FROM alerts "
    "WHERE ($1::text IS NULL OR symbol = $1) AND ($2::text IS NULL OR type = $2) "
    "AND exch_ts_ns >= $3::bigint AND exch_ts_ns < $4::bigint ORDER BY exch_ts_ns DESC, row_id DESC LIMIT $5::int";

int64_t column_i64(const PGresult* r, int row, int col) { return std::strtoll(PQgetvalue(r, row, col), nullptr, 10); }
}  // namespace

Result<std::vector<AlertRecord>> PostgresStore::query(const AlertQuery& q) {
  if (!conn_) return Status(StatusCode::kInvalidArgument, "postgres audit store: closed");
  const std::string since = std::to_string(q.since_exch_ns), until = std::to_string(q.until_exch_ns),
                    limit = std::to_string(q.limit);
  const char* values[5] = {q.symbol ? q.symbol->c_str() : nullptr, q.type ? q.type->c_str() : nullptr, since.c_str(),
                           until.c_str(), limit.c_str()};
  PGresult* r = PQexecParams(conn_, kQuery, 5, nullptr, values, nullptr, nullptr, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    std::string msg = std::string("postgres query alerts: ") + PQerrorMessage(conn_);
    PQclear(r);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    return Status(StatusCode::kIoError, msg);
  }
  std::vector<AlertRecord> rows;
  rows.reserve(size_t(PQntuples(r)));
  for (int i = 0; i < PQntuples(r); ++i) {
    AlertRecord a;
    a.row_id = column_i64(r, i, 0);
    a.alert_id = static_cast<uint64_t>(column_i64(r, i, 1));
    a.symbol_id = static_cast<SymbolId>(column_i64(r, i, 2));
    a.symbol = PQgetvalue(r, i, 3);
    a.type = PQgetvalue(r, i, 4);
    a.severity = PQgetvalue(r, i, 5);
    a.exch_ts_ns = column_i64(r, i, 6);
    a.event_seq = static_cast<uint64_t>(column_i64(r, i, 7));
    a.price_ticks = column_i64(r, i, 8);
    a.price = std::strtod(PQgetvalue(r, i, 9), nullptr);
    a.t.recv_ns = column_i64(r, i, 10);
    a.t.book_ns = column_i64(r, i, 11);
    a.t.features_ns = column_i64(r, i, 12);
    a.t.detect_ns = column_i64(r, i, 13);
    a.t.emit_ns = column_i64(r, i, 14);
    a.latency_ns = column_i64(r, i, 15);
    const nlohmann::json vj = nlohmann::json::parse(PQgetvalue(r, i, 16), nullptr, false);
    if (vj.is_array()) {
      for (const auto& v : vj) {
        a.values.push_back({v.value("name", ""), v.value("value", 0.0), v.value("threshold", 0.0), v.value("cmp", "")});
      }
    }
    size_t bytes = 0;  // bytea comes as text ("\\x..."): unescape it
    unsigned char* blob = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r, i, 17)), &bytes);
    if (blob) {
      a.features.resize(bytes / sizeof(float));
      std::memcpy(a.features.data(), blob, a.features.size() * sizeof(float));
      PQfreemem(blob);
    }
    rows.push_back(std::move(a));
  }
  PQclear(r);
  return rows;
}

}  // namespace ts
