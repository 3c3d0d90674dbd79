#include "audit/audit_store.h"

#include <sqlite3.h>

#include <cstring>
#include <exception>

#include "audit/alert_format.h"
#include "audit/alert_json.h"
#include "core/clock.h"

namespace ts {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS alerts (
  row_id INTEGER PRIMARY KEY,
  alert_id INTEGER NOT NULL,
  symbol_id INTEGER NOT NULL,
  symbol TEXT NOT NULL,
  type TEXT NOT NULL,
  severity TEXT NOT NULL,
  exch_ts_ns INTEGER NOT NULL,
  event_seq INTEGER NOT NULL,
  price_ticks INTEGER NOT NULL,
  price REAL NOT NULL,
  recv_ns INTEGER NOT NULL,
  book_ns INTEGER NOT NULL,
  features_ns INTEGER NOT NULL,
  detect_ns INTEGER NOT NULL,
  emit_ns INTEGER NOT NULL,
  latency_ns INTEGER NOT NULL,
  values_json TEXT NOT NULL,
  features_json TEXT NOT NULL,
  features_blob BLOB NOT NULL,
  written_at_ns INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS alerts_alert_id ON alerts(alert_id);
CREATE INDEX IF NOT EXISTS alerts_symbol_ts ON alerts(symbol, exch_ts_ns);
CREATE INDEX IF NOT EXISTS alerts_type_ts ON alerts(type, exch_ts_ns);
CREATE TABLE IF NOT EXISTS model_inputs (
  alert_id INTEGER NOT NULL,
  model TEXT NOT NULL,
  version INTEGER NOT NULL,
  probability REAL NOT NULL,
  threshold REAL NOT NULL,
  shadow INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  cols INTEGER NOT NULL,
  window_blob BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS model_inputs_alert ON model_inputs(alert_id);
CREATE TABLE IF NOT EXISTS notify_deliveries (
  outbox_uid TEXT NOT NULL,
  notification_id INTEGER NOT NULL,
  receiver TEXT NOT NULL,
  group_key TEXT NOT NULL,
  status TEXT NOT NULL,
  alert_ids TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  enqueued_unix_ns INTEGER NOT NULL,
  alert_unix_ns INTEGER NOT NULL,
  delivered_unix_ns INTEGER,
  latency_ns INTEGER,
  alert_latency_ns INTEGER,
  last_error TEXT NOT NULL,
  updated_unix_ns INTEGER NOT NULL,
  PRIMARY KEY (outbox_uid, notification_id)
);
CREATE INDEX IF NOT EXISTS notify_deliveries_receiver ON notify_deliveries(receiver, state);
)sql";

// Never backwards: more attempts, or a final state over pending, wins (see write_delivery).
constexpr const char* kUpsertDelivery =
    "INSERT INTO notify_deliveries (outbox_uid, notification_id, receiver, group_key, status, alert_ids, state, "
    "attempts, enqueued_unix_ns, alert_unix_ns, delivered_unix_ns, latency_ns, alert_latency_ns, last_error, "
    "updated_unix_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
    "ON CONFLICT (outbox_uid, notification_id) DO UPDATE SET state = excluded.state, attempts = excluded.attempts, "
    "delivered_unix_ns = excluded.delivered_unix_ns, latency_ns = excluded.latency_ns, "
    "alert_latency_ns = excluded.alert_latency_ns, "
    "last_error = CASE WHEN excluded.last_error = '' THEN notify_deliveries.last_error ELSE excluded.last_error END, "
    "updated_unix_ns = excluded.updated_unix_ns "
    "WHERE notify_deliveries.state = 'pending' AND (excluded.state != 'pending' OR excluded.attempts > notify_deliveries.attempts)";

// Idempotent by alert id, like the alerts insert below.
constexpr const char* kInsertInput =
    "INSERT INTO model_inputs (alert_id, model, version, probability, threshold, shadow, rows, cols, window_blob) "
    "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE NOT EXISTS (SELECT 1 FROM model_inputs WHERE alert_id = ?1)";

// Idempotent by alert id (ids are deterministic, detect/alert.h): an alert re-raised from re-read
// input is written once. (A NOT EXISTS guard, not a UNIQUE index: audit files written before ids
// were deterministic may hold repeated ids.)
constexpr const char* kInsert =
    "INSERT INTO alerts (alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, "
    "recv_ns, book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_json, features_blob, "
    "written_at_ns) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19 "
    "WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE alert_id = ?1)";

constexpr const char* kColumns =
    "row_id, alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, recv_ns, "
    "book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_blob";

std::string column_text(sqlite3_stmt* s, int i) {
  const unsigned char* p = sqlite3_column_text(s, i);
  return p ? reinterpret_cast<const char*>(p) : "";
}

}  // namespace

Status AuditStore::check(int rc, const char* call) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::ok();
  return Status(StatusCode::kIoError,
                std::string("sqlite ") + call + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)));
}

Status AuditStore::exec(const char* sql, const char* what) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = std::string("sqlite3_exec(") + what + "): " + (err ? err : sqlite3_errstr(rc));
    sqlite3_free(err);
    return Status(StatusCode::kIoError, msg);
  }
  return Status::ok();
}

Status AuditStore::prepare(const char* sql, sqlite3_stmt** stmt) {
  return check(sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr), "sqlite3_prepare_v2");
}

Result<std::unique_ptr<AuditStore>> AuditStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "audit store " + path + ": sqlite3_open_v2: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return Status(StatusCode::kIoError, msg);
  }
  std::unique_ptr<AuditStore> store(new AuditStore(db));
  auto fail = [&](const Status& s) { return s.with_context("audit store " + path); };
  if (Status s = store->check(sqlite3_busy_timeout(db, 5000), "sqlite3_busy_timeout"); !s) return fail(s);
  if (Status s = store->exec("PRAGMA journal_mode=WAL", "journal_mode=WAL"); !s) return fail(s);
  if (Status s = store->exec("PRAGMA synchronous=NORMAL", "synchronous=NORMAL"); !s) return fail(s);
  if (Status s = store->exec(kSchema, "schema"); !s) return fail(s);
  auto mode = store->journal_mode();
  if (!mode) return fail(mode.status());
  if (mode.value() != "wal") {
    return Status(StatusCode::kUnsupported, "audit store " + path + ": WAL mode refused (journal_mode=" + mode.value() + ")");
  }
  if (Status s = store->prepare(kInsert, &store->insert_); !s) return fail(s);
  if (Status s = store->prepare(kInsertInput, &store->insert_input_); !s) return fail(s);
  if (Status s = store->prepare(kUpsertDelivery, &store->upsert_delivery_); !s) return fail(s);
  return store;
}

AuditStore::~AuditStore() { (void)close(); }

Status AuditStore::write(const Alert& a, const SymbolTable& symbols) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  if (!in_txn_) {
    TS_RETURN_IF_ERROR(exec("BEGIN", "BEGIN"));
    in_txn_ = true;
  }
  const bool known = a.symbol < symbols.size();
  const std::string symbol = symbol_label(symbols, a.symbol);
  const double tick = known ? symbols.ref(a.symbol).tick_size : 0.01;
  std::string values, features;
  try {
    values = alert_values_json(a).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    features = alert_features_json(a).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, std::string("audit store: encoding alert: ") + e.what());
  }
  sqlite3_stmt* s = insert_;
  int rc = SQLITE_OK;
  auto bind = [&](int r) {
    if (rc == SQLITE_OK) rc = r;
  };
  bind(sqlite3_bind_int64(s, 1, static_cast<sqlite3_int64>(a.id)));
  bind(sqlite3_bind_int64(s, 2, a.symbol));
  bind(sqlite3_bind_text(s, 3, symbol.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_text(s, 4, alert_type_name(a.type), -1, SQLITE_STATIC));
  bind(sqlite3_bind_text(s, 5, severity_name(a.severity), -1, SQLITE_STATIC));
  bind(sqlite3_bind_int64(s, 6, a.exch_ts_ns));
  bind(sqlite3_bind_int64(s, 7, static_cast<sqlite3_int64>(a.event_seq)));
  bind(sqlite3_bind_int64(s, 8, a.price));
  bind(sqlite3_bind_double(s, 9, price_in_currency(a.price, tick)));
  bind(sqlite3_bind_int64(s, 10, a.t.recv_ns));
  bind(sqlite3_bind_int64(s, 11, a.t.book_ns));
  bind(sqlite3_bind_int64(s, 12, a.t.features_ns));
  bind(sqlite3_bind_int64(s, 13, a.t.detect_ns));
  bind(sqlite3_bind_int64(s, 14, a.t.emit_ns));
  bind(sqlite3_bind_int64(s, 15, alert_latency_ns(a.t)));
  bind(sqlite3_bind_text(s, 16, values.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_text(s, 17, features.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_blob(s, 18, a.features, sizeof(a.features), SQLITE_TRANSIENT));
  bind(sqlite3_bind_int64(s, 19, wall_ns()));
  Status st = check(rc, "sqlite3_bind");
  if (st) {
    const int step = sqlite3_step(s);
    st = step == SQLITE_DONE ? Status::ok() : check(step == SQLITE_ROW ? SQLITE_MISUSE : step, "sqlite3_step(INSERT)");
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (st) ++pending_;
  return st;
}

Status AuditStore::write_model_input(const Alert& a, const float* window, int rows, int cols) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  if (!in_txn_) {
    TS_RETURN_IF_ERROR(exec("BEGIN", "BEGIN"));
    in_txn_ = true;
  }
  sqlite3_stmt* s = insert_input_;
  int rc = SQLITE_OK;
  auto bind = [&](int r) {
    if (rc == SQLITE_OK) rc = r;
  };
  bind(sqlite3_bind_int64(s, 1, static_cast<sqlite3_int64>(a.id)));
  bind(sqlite3_bind_text(s, 2, a.model.model, -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_int64(s, 3, a.model.version));
  bind(sqlite3_bind_double(s, 4, a.model.probability));
  bind(sqlite3_bind_double(s, 5, a.model.threshold));
  bind(sqlite3_bind_int(s, 6, a.model.shadow ? 1 : 0));
  bind(sqlite3_bind_int(s, 7, rows));
  bind(sqlite3_bind_int(s, 8, cols));
  bind(sqlite3_bind_blob(s, 9, window, int(sizeof(float) * size_t(rows) * size_t(cols)), SQLITE_TRANSIENT));
  Status st = check(rc, "sqlite3_bind(model_inputs)");
  if (st) {
    const int step = sqlite3_step(s);
    st = step == SQLITE_DONE ? Status::ok() : check(step == SQLITE_ROW ? SQLITE_MISUSE : step, "sqlite3_step(INSERT model_inputs)");
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return st;
}

Result<std::vector<ModelInputRecord>> AuditStore::model_inputs() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  TS_RETURN_IF_ERROR(prepare("SELECT alert_id, model, version, probability, threshold, shadow, rows, cols, window_blob "
                             "FROM model_inputs ORDER BY rowid", &s));
  std::vector<ModelInputRecord> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    ModelInputRecord r;
    r.alert_id = uint64_t(sqlite3_column_int64(s, 0));
    r.model = column_text(s, 1);
    r.version = uint32_t(sqlite3_column_int64(s, 2));
    r.probability = sqlite3_column_double(s, 3);
    r.threshold = sqlite3_column_double(s, 4);
    r.shadow = sqlite3_column_int(s, 5) != 0;
    r.rows = sqlite3_column_int(s, 6);
    r.cols = sqlite3_column_int(s, 7);
    const auto* blob = static_cast<const float*>(sqlite3_column_blob(s, 8));
    const size_t n = size_t(sqlite3_column_bytes(s, 8)) / sizeof(float);
    if (blob) r.window.assign(blob, blob + n);
    out.push_back(std::move(r));
  }
  Status st = check(rc, "sqlite3_step(SELECT model_inputs)");
  sqlite3_finalize(s);
  if (!st) return st;
  return out;
}

Status AuditStore::write_delivery(const DeliveryAuditRecord& r) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  if (!in_txn_) {
    TS_RETURN_IF_ERROR(exec("BEGIN", "BEGIN"));
    in_txn_ = true;
  }
  std::string ids = "[";
  for (size_t i = 0; i < r.alert_ids.size(); ++i) {
    if (i) ids += ',';
    ids += std::to_string(r.alert_ids[i]);
  }
  ids += "]";
  sqlite3_stmt* s = upsert_delivery_;
  int rc = SQLITE_OK;
  auto bind = [&](int x) {
    if (rc == SQLITE_OK) rc = x;
  };
  auto bind_opt = [&](int i, int64_t v, bool present) {
    bind(present ? sqlite3_bind_int64(s, i, v) : sqlite3_bind_null(s, i));
  };
  const bool delivered = r.state == "delivered";
  bind(sqlite3_bind_text(s, 1, r.outbox_uid.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_int64(s, 2, r.notification_id));
  bind(sqlite3_bind_text(s, 3, r.receiver.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_text(s, 4, r.group_key.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_text(s, 5, r.status.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_text(s, 6, ids.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_text(s, 7, r.state.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_int(s, 8, r.attempts));
  bind(sqlite3_bind_int64(s, 9, r.enqueued_unix_ns));
  bind(sqlite3_bind_int64(s, 10, r.alert_unix_ns));
  bind_opt(11, r.delivered_unix_ns, delivered);
  bind_opt(12, r.latency_ns, delivered);
  bind_opt(13, r.alert_latency_ns, delivered);
  bind(sqlite3_bind_text(s, 14, r.last_error.c_str(), -1, SQLITE_TRANSIENT));
  bind(sqlite3_bind_int64(s, 15, r.updated_unix_ns));
  Status st = check(rc, "sqlite3_bind(notify_deliveries)");
  if (st) {
    const int step = sqlite3_step(s);
    st = step == SQLITE_DONE ? Status::ok() : check(step == SQLITE_ROW ? SQLITE_MISUSE : step, "sqlite3_step(UPSERT notify_deliveries)");
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return st;
}

Result<std::vector<DeliveryAuditRecord>> AuditStore::deliveries(const DeliveryQuery& q) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  TS_RETURN_IF_ERROR(prepare("SELECT outbox_uid, notification_id, receiver, group_key, status, alert_ids, state, attempts, "
                             "enqueued_unix_ns, alert_unix_ns, IFNULL(delivered_unix_ns, 0), IFNULL(latency_ns, -1), "
                             "IFNULL(alert_latency_ns, -1), last_error, updated_unix_ns FROM notify_deliveries "
                             "WHERE (?1 IS NULL OR receiver = ?1) AND (?2 IS NULL OR state = ?2) "
                             "ORDER BY enqueued_unix_ns DESC, notification_id DESC LIMIT ?3", &s));
  int rc = SQLITE_OK;
  auto bind = [&](int x) {
    if (rc == SQLITE_OK) rc = x;
  };
  bind(q.receiver ? sqlite3_bind_text(s, 1, q.receiver->c_str(), -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, 1));
  bind(q.state ? sqlite3_bind_text(s, 2, q.state->c_str(), -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, 2));
  bind(sqlite3_bind_int(s, 3, q.limit));
  if (Status st = check(rc, "sqlite3_bind(notify_deliveries)"); !st) {
    sqlite3_finalize(s);
    return st;
  }
  std::vector<DeliveryAuditRecord> out;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    DeliveryAuditRecord r;
    r.outbox_uid = column_text(s, 0);
    r.notification_id = sqlite3_column_int64(s, 1);
    r.receiver = column_text(s, 2);
    r.group_key = column_text(s, 3);
    r.status = column_text(s, 4);
    const nlohmann::json ids = nlohmann::json::parse(column_text(s, 5), nullptr, false);
    if (ids.is_array()) {
      for (const auto& id : ids) {
        if (id.is_number_unsigned()) r.alert_ids.push_back(id.get<uint64_t>());
      }
    }
    r.state = column_text(s, 6);
    r.attempts = sqlite3_column_int(s, 7);
    r.enqueued_unix_ns = sqlite3_column_int64(s, 8);
    r.alert_unix_ns = sqlite3_column_int64(s, 9);
    r.delivered_unix_ns = sqlite3_column_int64(s, 10);
    r.latency_ns = sqlite3_column_int64(s, 11);
    r.alert_latency_ns = sqlite3_column_int64(s, 12);
    r.last_error = column_text(s, 13);
    r.updated_unix_ns = sqlite3_column_int64(s, 14);
    out.push_back(std::move(r));
  }
  Status st = check(rc, "sqlite3_step(SELECT notify_deliveries)");
  sqlite3_finalize(s);
  if (!st) return st;
  return out;
}

Result<int64_t> AuditStore::delivery_resume_id(const std::string& outbox_uid) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  TS_RETURN_IF_ERROR(prepare("SELECT IFNULL((SELECT MIN(notification_id) FROM notify_deliveries WHERE outbox_uid = ?1 "
                             "AND state = 'pending'), (SELECT IFNULL(MAX(notification_id), 0) + 1 FROM notify_deliveries "
                             "WHERE outbox_uid = ?1))", &s));
  int rc = sqlite3_bind_text(s, 1, outbox_uid.c_str(), -1, SQLITE_TRANSIENT);
  int64_t id = 1;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) id = sqlite3_column_int64(s, 0);
  }
  Status st = check(rc, "sqlite3_step(notify_deliveries resume id)");
  sqlite3_finalize(s);
  if (!st) return st;
  return id;
}

Status AuditStore::flush() {
  if (!db_ || !in_txn_) return Status::ok();
  Status s = exec("COMMIT", "COMMIT");
  if (!s) {
    // Leave no half-open transaction behind: the batch is lost, later batches are not.
    if (!sqlite3_get_autocommit(db_)) (void)exec("ROLLBACK", "ROLLBACK");
  }
  in_txn_ = false;
  pending_ = 0;
  return s;
}

Status AuditStore::close() {
  if (!db_) return Status::ok();
  Status s = flush();
  sqlite3_finalize(insert_);
  insert_ = nullptr;
  sqlite3_finalize(insert_input_);
  insert_input_ = nullptr;
  sqlite3_finalize(upsert_delivery_);
  upsert_delivery_ = nullptr;
  const int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK && s) s = check(rc, "sqlite3_close");
  db_ = nullptr;
  return s;
}

Result<std::string> AuditStore::journal_mode() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  TS_RETURN_IF_ERROR(prepare("PRAGMA journal_mode", &s));
  const int rc = sqlite3_step(s);
  std::string mode = rc == SQLITE_ROW ? column_text(s, 0) : "";
  Status st = check(rc, "sqlite3_step(PRAGMA journal_mode)");
  sqlite3_finalize(s);
  if (!st) return st;
  return mode;
}

Result<int64_t> AuditStore::count() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  TS_RETURN_IF_ERROR(prepare("SELECT COUNT(*) FROM alerts", &s));
  const int rc = sqlite3_step(s);
  const int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
  Status st = check(rc, "sqlite3_step(SELECT COUNT)");
  sqlite3_finalize(s);
  if (!st) return st;
  return n;
}

Result<std::vector<AlertRecord>> AuditStore::read_rows(sqlite3_stmt* s) {
  std::vector<AlertRecord> rows;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    AlertRecord r;
    r.row_id = sqlite3_column_int64(s, 0);
    r.alert_id = static_cast<uint64_t>(sqlite3_column_int64(s, 1));
    r.symbol_id = static_cast<SymbolId>(sqlite3_column_int64(s, 2));
    r.symbol = column_text(s, 3);
    r.type = column_text(s, 4);
    r.severity = column_text(s, 5);
    r.exch_ts_ns = sqlite3_column_int64(s, 6);
    r.event_seq = static_cast<uint64_t>(sqlite3_column_int64(s, 7));
    r.price_ticks = sqlite3_column_int64(s, 8);
    r.price = sqlite3_column_double(s, 9);
    r.t.recv_ns = sqlite3_column_int64(s, 10);
    r.t.book_ns = sqlite3_column_int64(s, 11);
    r.t.features_ns = sqlite3_column_int64(s, 12);
    r.t.detect_ns = sqlite3_column_int64(s, 13);
    r.t.emit_ns = sqlite3_column_int64(s, 14);
    r.latency_ns = sqlite3_column_int64(s, 15);
    const std::string values = column_text(s, 16);
    const nlohmann::json vj = nlohmann::json::parse(values, nullptr, false);
    if (vj.is_array()) {
      for (const auto& v : vj) {
        r.values.push_back({v.value("name", ""), v.value("value", 0.0), v.value("threshold", 0.0), v.value("cmp", "")});
      }
    }
    const void* blob = sqlite3_column_blob(s, 17);
    const int bytes = sqlite3_column_bytes(s, 17);
    r.features.resize(size_t(bytes) / sizeof(float));
    if (blob && bytes > 0) std::memcpy(r.features.data(), blob, r.features.size() * sizeof(float));
    rows.push_back(std::move(r));
  }
  Status st = check(rc, "sqlite3_step(SELECT)");
  sqlite3_finalize(s);
  if (!st) return st;
  return rows;
}

Result<std::vector<AlertRecord>> AuditStore::load_all() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  const std::string sql = std::string("SELECT ") + kColumns + " FROM alerts ORDER BY row_id";
  TS_RETURN_IF_ERROR(prepare(sql.c_str(), &s));
  return read_rows(s);
}

Result<std::vector<AlertRecord>> AuditStore::query(const AlertQuery& q) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  sqlite3_stmt* s = nullptr;
  const std::string sql = std::string("SELECT ") + kColumns +
                          " FROM alerts WHERE (?1 IS NULL OR symbol = ?1) AND (?2 IS NULL OR type = ?2)"
                          " AND exch_ts_ns >= ?3 AND exch_ts_ns < ?4 ORDER BY exch_ts_ns DESC, row_id DESC LIMIT ?5";
  TS_RETURN_IF_ERROR(prepare(sql.c_str(), &s));
  int rc = SQLITE_OK;
  auto bind = [&](int r) {
    if (rc == SQLITE_OK) rc = r;
  };
  bind(q.symbol ? sqlite3_bind_text(s, 1, q.symbol->c_str(), -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, 1));
  bind(q.type ? sqlite3_bind_text(s, 2, q.type->c_str(), -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, 2));
  bind(sqlite3_bind_int64(s, 3, q.since_exch_ns));
  bind(sqlite3_bind_int64(s, 4, q.until_exch_ns));
  bind(sqlite3_bind_int(s, 5, q.limit));
  if (Status st = check(rc, "sqlite3_bind"); !st) {
    sqlite3_finalize(s);
    return st;
  }
  return read_rows(s);
}

}  // namespace ts
