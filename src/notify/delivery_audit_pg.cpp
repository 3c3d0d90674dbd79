// The PostgreSQL backend of the delivery audit ([sinks] audit_backend = "postgres"): table
// notify_deliveries in the shared database, the SQLite table's columns with PostgreSQL types
// (BIGINT for the INTEGER columns; alert_ids the same JSON array text), created if missing.
// Its own connection (libpq helpers of audit/postgres_store.h), never the alert writer's.
#include <libpq-fe.h>

#include <string_view>

#include <nlohmann/json.hpp>

#include "audit/postgres_store.h"
#include "notify/delivery_audit_store.h"

namespace ts::notify {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS notify_deliveries (
  outbox_uid TEXT NOT NULL,
  notification_id BIGINT NOT NULL,
  receiver TEXT NOT NULL,
  group_key TEXT NOT NULL,
  status TEXT NOT NULL,
  alert_ids TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  enqueued_unix_ns BIGINT NOT NULL,
  alert_unix_ns BIGINT NOT NULL,
  delivered_unix_ns BIGINT,
  latency_ns BIGINT,
  alert_latency_ns BIGINT,
  last_error TEXT NOT NULL,
  updated_unix_ns BIGINT NOT NULL,
  PRIMARY KEY (outbox_uid, notification_id)
);
CREATE INDEX IF NOT EXISTS notify_deliveries_receiver ON notify_deliveries(receiver, state);
)sql";

// The SQLite store's upsert (audit_store.cpp): never backwards; an empty last_error keeps the stored one.
constexpr const char* kUpsertName = "ticksentry_upsert_delivery";
constexpr const char* kUpsert =
    "INSERT INTO notify_deliveries (outbox_uid, notification_id, receiver, group_key, status, alert_ids, state, "
    "attempts, enqueued_unix_ns, alert_unix_ns, delivered_unix_ns, latency_ns, alert_latency_ns, last_error, "
    "updated_unix_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) "
    "ON CONFLICT (outbox_uid, notification_id) DO UPDATE SET state = excluded.state, attempts = excluded.attempts, "
    "delivered_unix_ns = excluded.delivered_unix_ns, latency_ns = excluded.latency_ns, "
    "alert_latency_ns = excluded.alert_latency_ns, "
    "last_error = CASE WHEN excluded.last_error = '' THEN notify_deliveries.last_error ELSE excluded.last_error END, "
    "updated_unix_ns = excluded.updated_unix_ns "
    "WHERE notify_deliveries.state = 'pending' AND (excluded.state <> 'pending' OR excluded.attempts > notify_deliveries.attempts)";
constexpr int kParams = 15;

constexpr const char* kSelect =
    "SELECT outbox_uid, notification_id, receiver, group_key, status, alert_ids, state, attempts, enqueued_unix_ns, "
    "alert_unix_ns, COALESCE(delivered_unix_ns, 0), COALESCE(latency_ns, -1), COALESCE(alert_latency_ns, -1), "
    "last_error, updated_unix_ns FROM notify_deliveries WHERE ($1::text IS NULL OR receiver = $1) "
    "AND ($2::text IS NULL OR state = $2) ORDER BY enqueued_unix_ns DESC, notification_id DESC LIMIT $3::int";

constexpr const char* kResumeId =
    "SELECT COALESCE((SELECT MIN(notification_id) FROM notify_deliveries WHERE outbox_uid = $1 AND state = 'pending'), "
    "(SELECT COALESCE(MAX(notification_id), 0) + 1 FROM notify_deliveries WHERE outbox_uid = $1))";

// Bytes of the valid UTF-8 sequence at s[i], or 0 when it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

// PostgreSQL text holds neither NUL nor invalid UTF-8, and a receiver's error message may carry
// either (SQLite stores them as given): NULs are dropped, each invalid byte becomes U+FFFD.
std::string pg_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\0') {
      ++i;
    } else if (const size_t n = utf8_sequence(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// Writes are pipelined (libpq pipeline mode): write() keeps the row, commit() sends BEGIN, the
// upserts and COMMIT in chunks of kChunk statements, one round trip each, instead of one round
// trip per row (on loopback ~90 us/row one by one; see the commit message for the numbers).
class PostgresDeliveryAudit final : public DeliveryAuditStore {
 public:
  static constexpr size_t kChunk = 256;  // statements in flight: their results fit the socket buffers

  explicit PostgresDeliveryAudit(pg_conn* conn) : conn_(conn) {}
  ~PostgresDeliveryAudit() override {
    if (!batch_.empty() && connected()) (void)commit();
    PQfinish(conn_);
  }

  Status prepare() { return pg_prepare(conn_, kUpsertName, kUpsert, kParams, "upsert notify_deliveries"); }

  Status write(const DeliveryAuditRecord& r) override {
    batch_.push_back(r);
    return Status::ok();
  }

  Status commit() override {
    if (batch_.empty()) return Status::ok();
    std::vector<DeliveryAuditRecord> rows;
    rows.swap(batch_);
    if (PQenterPipelineMode(conn_) != 1) return pg_error(conn_, "PQenterPipelineMode");
    Status st = send_pipelined(rows);
    (void)PQexitPipelineMode(conn_);
    if (!st && connected() && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      (void)pg_exec(conn_, "ROLLBACK", "ROLLBACK");  // the batch is lost, later batches are not
    }
    return st;
  }

  Result<std::vector<DeliveryAuditRecord>> deliveries(const DeliveryQuery& q) override {
    const std::string limit = std::to_string(q.limit);
    const char* values[3] = {q.receiver ? q.receiver->c_str() : nullptr, q.state ? q.state->c_str() : nullptr,
                             limit.c_str()};
    auto result = pg_query(conn_, kSelect, 3, values, "SELECT notify_deliveries");
    if (!result.is_ok()) return result.status();
    const PgRows& rows = result.value();
    std::vector<DeliveryAuditRecord> out(size_t(rows.size()));
    for (int i = 0; i < rows.size(); ++i) {
      DeliveryAuditRecord& d = out[size_t(i)];
      d.outbox_uid = rows.text(i, 0);
      d.notification_id = rows.i64(i, 1);
      d.receiver = rows.text(i, 2);
      d.group_key = rows.text(i, 3);
      d.status = rows.text(i, 4);
      const nlohmann::json ids = nlohmann::json::parse(rows.text(i, 5), nullptr, false);
      if (ids.is_array()) {
        for (const auto& id : ids) {
          if (id.is_number_unsigned()) d.alert_ids.push_back(id.get<uint64_t>());
        }
      }
      d.state = rows.text(i, 6);
      d.attempts = int(rows.i64(i, 7));
      d.enqueued_unix_ns = rows.i64(i, 8);
      d.alert_unix_ns = rows.i64(i, 9);
      d.delivered_unix_ns = rows.i64(i, 10);
      d.latency_ns = rows.i64(i, 11);
      d.alert_latency_ns = rows.i64(i, 12);
      d.last_error = rows.text(i, 13);
      d.updated_unix_ns = rows.i64(i, 14);
    }
    return out;
  }

  Result<int64_t> resume_id(const std::string& outbox_uid) override {
    const std::string uid = pg_text(outbox_uid);
    const char* values[1] = {uid.c_str()};
    auto rows = pg_query(conn_, kResumeId, 1, values, "notify_deliveries resume id");
    if (!rows.is_ok()) return rows.status();
    return rows.value().i64(0, 0);  // one row, always
  }

  bool connected() const override { return PQstatus(conn_) == CONNECTION_OK; }

  std::string describe() const override {
    return std::string("PostgreSQL database ") + PQdb(conn_) + " on " + PQhost(conn_) + ":" + PQport(conn_);
  }

 private:
  bool send(const char* sql) { return PQsendQueryParams(conn_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1; }

  bool send_upsert(const DeliveryAuditRecord& r) {
    const std::string ids = nlohmann::json(r.alert_ids).dump();  // "[7,8]", as in SQLite
    const std::string text[kParams] = {
        pg_text(r.outbox_uid), std::to_string(r.notification_id), pg_text(r.receiver), pg_text(r.group_key),
        pg_text(r.status), ids, pg_text(r.state), std::to_string(r.attempts), std::to_string(r.enqueued_unix_ns),
        std::to_string(r.alert_unix_ns), std::to_string(r.delivered_unix_ns), std::to_string(r.latency_ns),
        std::to_string(r.alert_latency_ns), pg_text(r.last_error), std::to_string(r.updated_unix_ns)};
    const char* values[kParams];
    for (int i = 0; i < kParams; ++i) values[i] = text[i].c_str();
    if (r.state != "delivered") values[10] = values[11] = values[12] = nullptr;  // NULL unless delivered, as in SQLite
    return PQsendQueryPrepared(conn_, kUpsertName, kParams, values, nullptr, nullptr, 0) == 1;
  }

  // BEGIN, the upserts, COMMIT: kChunk statements then a sync, whose results are read before
  // the next chunk goes. The first error stops it (the rest of its chunk is aborted by the server).
  Status send_pipelined(const std::vector<DeliveryAuditRecord>& rows) {
    size_t next = 0;
    bool began = false;
    for (;;) {
      size_t queued = 0;
      if (!began) {
        if (!send("BEGIN")) return pg_error(conn_, "send BEGIN");
        began = true;
        ++queued;
      }
      for (; next < rows.size() && queued < kChunk; ++next, ++queued) {
        if (!send_upsert(rows[next])) return pg_error(conn_, "send upsert notify_deliveries");
      }
      const bool last = next == rows.size();
      if (last) {
        if (!send("COMMIT")) return pg_error(conn_, "send COMMIT");
        ++queued;
      }
      if (PQpipelineSync(conn_) != 1) return pg_error(conn_, "PQpipelineSync");
      TS_RETURN_IF_ERROR(read_results(queued));
      if (last) return Status::ok();
    }
  }

  // The results of `n` pipelined statements and of the sync after them.
  Status read_results(size_t n) {
    Status first = Status::ok();
    for (size_t k = 0; k < n; ++k) {
      PGresult* r = PQgetResult(conn_);
      if (!r) return pg_error(conn_, "pipeline: a result is missing");
      if (PQresultStatus(r) != PGRES_COMMAND_OK && first.is_ok()) first = pg_error(conn_, "upsert notify_deliveries");
      PQclear(r);
      while ((r = PQgetResult(conn_)) != nullptr) PQclear(r);  // up to the NULL that ends each statement
    }
    PGresult* sync = PQgetResult(conn_);
    const bool synced = sync && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
    PQclear(sync);
    if (!synced && first.is_ok()) first = pg_error(conn_, "pipeline sync");
    return first;
  }

  pg_conn* conn_;
  std::vector<DeliveryAuditRecord> batch_;  // written, not yet committed
};

}  // namespace

DeliveryAuditOpener postgres_delivery_audit(std::string dsn) {
  return [dsn = std::move(dsn)]() -> Result<std::unique_ptr<DeliveryAuditStore>> {
    auto conn = pg_open(dsn, kSchema, "notify delivery audit");
    if (!conn.is_ok()) return conn.status();
    std::unique_ptr<PostgresDeliveryAudit> store(new PostgresDeliveryAudit(conn.value()));
    TS_RETURN_IF_ERROR(store->prepare().with_context("notify delivery audit"));
    return std::unique_ptr<DeliveryAuditStore>(std::move(store));
  };
}

}  // namespace ts::notify
