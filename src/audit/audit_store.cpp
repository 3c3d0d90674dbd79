#include "audit/audit_store.h"

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
  written_at_ns INTEGER NOT NULL,
  book_json TEXT NOT NULL DEFAULT '',
  model_json TEXT NOT NULL DEFAULT ''
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
    "WHERE notify_deliveries.state = 'pending' AND (excluded.state != 'pending' OR excluded.attempts > "
    "notify_deliveries.attempts)";

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
    "written_at_ns, book_json, model_json) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
    "?16, ?17, ?18, ?19, ?20, ?21 WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE alert_id = ?1)";

constexpr const char* kColumns =
    "row_id, alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, price_ticks, price, recv_ns, "
    "book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, features_blob, book_json, model_json";

// Stores made before a column existed gain it here (old rows get the column's default), so a
// newer build reads and appends to an older store. One entry per added column, oldest first.
struct AddedColumn {
  const char* table;
  const char* column;
  const char* definition;
};
constexpr AddedColumn kAddedColumns[] = {
    {"alerts", "book_json", "TEXT NOT NULL DEFAULT ''"},   // the book around the alert (2026-12)
    {"alerts", "model_json", "TEXT NOT NULL DEFAULT ''"},  // a model alert's score (2026-12)
};

}  // namespace

Result<std::unique_ptr<AuditStore>> AuditStore::open(const std::string& path) {
  // One owner thread (the dispatcher's sink thread, or a reader): no SQLite mutex.
  auto db = SqlDb::open(path, SqlOpenOptions{/*sync_full=*/false, /*single_thread=*/true, /*require_wal=*/true});
  if (!db) return db.status().with_context("audit store");
  std::unique_ptr<AuditStore> store(new AuditStore(std::move(db).value()));
  auto fail = [&](const Status& s) { return s.with_context("audit store " + path); };
  if (Status s = store->db_->exec(kSchema); !s) return fail(s);
  for (const AddedColumn& c : kAddedColumns) {
    bool present = false;
    {  // the statement is finalized before the ALTER
      auto info = store->db_->prepare(std::string("SELECT 1 FROM pragma_table_info('") + c.table + "') WHERE name = ?1");
      if (!info) return fail(info.status());
      auto row = info.value().bind(1, std::string(c.column)).step();
      if (!row) return fail(row.status());
      present = row.value();
    }
    if (present) continue;
    if (Status s = store->db_->exec(std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.column + " " + c.definition);
        !s) {
      return fail(s.with_context(std::string("adding column ") + c.table + "." + c.column));
    }
  }
  for (auto [sql, stmt] : {std::pair{kInsert, &store->insert_}, std::pair{kInsertInput, &store->insert_input_},
                           std::pair{kUpsertDelivery, &store->upsert_delivery_}}) {
    auto prepared = store->db_->prepare(sql);
    if (!prepared) return fail(prepared.status());
    stmt->emplace(std::move(prepared).value());
  }
  return store;
}

AuditStore::~AuditStore() { (void)close(); }

Status AuditStore::begin_batch() {
  if (in_txn_) return Status::ok();
  TS_RETURN_IF_ERROR(db_->exec("BEGIN"));
  in_txn_ = true;
  return Status::ok();
}

Status AuditStore::write(const Alert& a, const SymbolTable& symbols) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  TS_RETURN_IF_ERROR(begin_batch());
  const bool known = a.symbol < symbols.size();
  const std::string symbol = symbol_label(symbols, a.symbol);
  const double tick = known ? symbols.ref(a.symbol).tick_size : 0.01;
  std::string values, features, book;
  try {
    values = alert_values_json(a, known ? &symbols.ref(a.symbol) : nullptr).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    features = alert_features_json(a).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    book = alert_book_json(a, known ? &symbols.ref(a.symbol) : nullptr).dump();
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, std::string("audit store: encoding alert: ") + e.what());
  }
  SqlStmt& s = *insert_;
  s.bind(1, static_cast<int64_t>(a.id))
      .bind(2, int64_t(a.symbol))
      .bind(3, symbol)
      .bind(4, std::string(alert_type_name(a.type)))
      .bind(5, std::string(severity_name(a.severity)))
      .bind(6, a.exch_ts_ns)
      .bind(7, static_cast<int64_t>(a.event_seq))
      .bind(8, int64_t(a.price))
      .bind_double(9, known ? price_number(a.price, symbols.ref(a.symbol)) : price_in_currency(a.price, tick))
      .bind(10, a.t.recv_ns)
      .bind(11, a.t.book_ns)
      .bind(12, a.t.features_ns)
      .bind(13, a.t.detect_ns)
      .bind(14, a.t.emit_ns)
      .bind(15, alert_latency_ns(a.t))
      .bind(16, values)
      .bind(17, features)
      .bind_blob(18, a.features, sizeof(a.features))
      .bind(19, wall_ns())
      .bind(20, book)
      .bind(21, alert_model_text(a));
  Status st = s.run();
  if (st) ++pending_;
  return st;
}

Status AuditStore::write_model_input(const Alert& a, const float* window, int rows, int cols) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  TS_RETURN_IF_ERROR(begin_batch());
  SqlStmt& s = *insert_input_;
  s.bind(1, static_cast<int64_t>(a.id))
      .bind(2, std::string(a.model.model))
      .bind(3, int64_t(a.model.version))
      .bind_double(4, a.model.probability)
      .bind_double(5, a.model.threshold)
      .bind(6, int64_t(a.model.shadow ? 1 : 0))
      .bind(7, int64_t(rows))
      .bind(8, int64_t(cols))
      .bind_blob(9, window, sizeof(float) * size_t(rows) * size_t(cols));
  return s.run();
}

Result<std::optional<ModelInputRecord>> AuditStore::model_input(uint64_t alert_id) {
  auto all = model_inputs(int64_t(alert_id));
  if (!all.is_ok()) return all.status();
  if (all.value().empty()) return std::optional<ModelInputRecord>();
  return std::optional<ModelInputRecord>(std::move(all.value().front()));
}

Result<std::vector<ModelInputRecord>> AuditStore::model_inputs() { return model_inputs(-1); }

Result<std::vector<ModelInputRecord>> AuditStore::model_inputs(int64_t only_id) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  auto s = db_->prepare(
      "SELECT alert_id, model, version, probability, threshold, shadow, rows, cols, window_blob "
      "FROM model_inputs WHERE ?1 < 0 OR alert_id = ?1 ORDER BY rowid");
  if (!s) return s.status();
  s.value().bind(1, only_id);
  std::vector<ModelInputRecord> out;
  for (;;) {
    auto row = s.value().step();
    if (!row) return row.status();
    if (!row.value()) break;
    const SqlStmt& q = s.value();
    ModelInputRecord r;
    r.alert_id = uint64_t(q.col_int(0));
    r.model = q.col_text(1);
    r.version = uint32_t(q.col_int(2));
    r.probability = q.col_double(3);
    r.threshold = q.col_double(4);
    r.shadow = q.col_int(5) != 0;
    r.rows = int(q.col_int(6));
    r.cols = int(q.col_int(7));
    const std::string_view blob = q.col_blob(8);
    r.window.resize(blob.size() / sizeof(float));
    if (!r.window.empty()) std::memcpy(r.window.data(), blob.data(), r.window.size() * sizeof(float));
    out.push_back(std::move(r));
  }
  return out;
}

Status AuditStore::write_delivery(const DeliveryAuditRecord& r) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  TS_RETURN_IF_ERROR(begin_batch());
  std::string ids = "[";
  for (size_t i = 0; i < r.alert_ids.size(); ++i) {
    if (i) ids += ',';
    ids += std::to_string(r.alert_ids[i]);
  }
  ids += "]";
  SqlStmt& s = *upsert_delivery_;
  auto bind_opt = [&](int i, int64_t v, bool present) {
    if (present) s.bind(i, v);
    else s.bind_null(i);
  };
  const bool delivered = r.state == "delivered";
  s.bind(1, r.outbox_uid)
      .bind(2, r.notification_id)
      .bind(3, r.receiver)
      .bind(4, r.group_key)
      .bind(5, r.status)
      .bind(6, ids)
      .bind(7, r.state)
      .bind(8, int64_t(r.attempts))
      .bind(9, r.enqueued_unix_ns)
      .bind(10, r.alert_unix_ns);
  bind_opt(11, r.delivered_unix_ns, delivered);
  bind_opt(12, r.latency_ns, delivered);
  bind_opt(13, r.alert_latency_ns, delivered);
  s.bind(14, r.last_error).bind(15, r.updated_unix_ns);
  return s.run();
}

Result<std::vector<DeliveryAuditRecord>> AuditStore::deliveries(const DeliveryQuery& q) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  auto s = db_->prepare(
      "SELECT outbox_uid, notification_id, receiver, group_key, status, alert_ids, state, attempts, "
      "enqueued_unix_ns, alert_unix_ns, IFNULL(delivered_unix_ns, 0), IFNULL(latency_ns, -1), "
      "IFNULL(alert_latency_ns, -1), last_error, updated_unix_ns FROM notify_deliveries "
      "WHERE (?1 IS NULL OR receiver = ?1) AND (?2 IS NULL OR state = ?2) "
      "ORDER BY enqueued_unix_ns DESC, notification_id DESC LIMIT ?3");
  if (!s) return s.status();
  SqlStmt& st = s.value();
  if (q.receiver) st.bind(1, *q.receiver);
  else st.bind_null(1);
  if (q.state) st.bind(2, *q.state);
  else st.bind_null(2);
  st.bind(3, int64_t(q.limit));
  std::vector<DeliveryAuditRecord> out;
  for (;;) {
    auto row = st.step();
    if (!row) return row.status();
    if (!row.value()) break;
    DeliveryAuditRecord r;
    r.outbox_uid = st.col_text(0);
    r.notification_id = st.col_int(1);
    r.receiver = st.col_text(2);
    r.group_key = st.col_text(3);
    r.status = st.col_text(4);
    const nlohmann::json ids = nlohmann::json::parse(st.col_text(5), nullptr, false);
    if (ids.is_array()) {
      for (const auto& id : ids) {
        if (id.is_number_unsigned()) r.alert_ids.push_back(id.get<uint64_t>());
      }
    }
    r.state = st.col_text(6);
    r.attempts = int(st.col_int(7));
    r.enqueued_unix_ns = st.col_int(8);
    r.alert_unix_ns = st.col_int(9);
    r.delivered_unix_ns = st.col_int(10);
    r.latency_ns = st.col_int(11);
    r.alert_latency_ns = st.col_int(12);
    r.last_error = st.col_text(13);
    r.updated_unix_ns = st.col_int(14);
    out.push_back(std::move(r));
  }
  return out;
}

Result<int64_t> AuditStore::delivery_resume_id(const std::string& outbox_uid) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  auto s = db_->prepare(
      "SELECT IFNULL((SELECT MIN(notification_id) FROM notify_deliveries WHERE outbox_uid = ?1 "
      "AND state = 'pending'), (SELECT IFNULL(MAX(notification_id), 0) + 1 FROM notify_deliveries "
      "WHERE outbox_uid = ?1))");
  if (!s) return s.status();
  auto row = s.value().bind(1, outbox_uid).step();
  if (!row) return row.status();
  return row.value() ? s.value().col_int(0) : int64_t(1);
}

Status AuditStore::flush() {
  if (!db_ || !in_txn_) return Status::ok();
  Status s = db_->exec("COMMIT");
  if (!s) {
    // Leave no half-open transaction behind: the batch is lost, later batches are not.
    if (db_->in_transaction()) (void)db_->exec("ROLLBACK");
  }
  in_txn_ = false;
  pending_ = 0;
  return s;
}

Status AuditStore::close() {
  if (!db_) return Status::ok();
  Status s = flush();
  insert_.reset();
  insert_input_.reset();
  upsert_delivery_.reset();
  if (Status c = db_->close(); !c && s) s = c;
  db_.reset();
  return s;
}

Result<std::string> AuditStore::journal_mode() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  return db_->journal_mode();
}

Result<int64_t> AuditStore::count() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  auto s = db_->prepare("SELECT COUNT(*) FROM alerts");
  if (!s) return s.status();
  auto row = s.value().step();
  if (!row) return row.status();
  return row.value() ? s.value().col_int(0) : int64_t(0);
}

Result<std::vector<AlertRecord>> AuditStore::read_rows(SqlStmt& s) {
  std::vector<AlertRecord> rows;
  for (;;) {
    auto row = s.step();
    if (!row) return row.status();
    if (!row.value()) break;
    AlertRecord r;
    r.row_id = s.col_int(0);
    r.alert_id = static_cast<uint64_t>(s.col_int(1));
    r.symbol_id = static_cast<SymbolId>(s.col_int(2));
    r.symbol = s.col_text(3);
    r.type = s.col_text(4);
    r.severity = s.col_text(5);
    r.exch_ts_ns = s.col_int(6);
    r.event_seq = static_cast<uint64_t>(s.col_int(7));
    r.price_ticks = s.col_int(8);
    r.price = s.col_double(9);
    r.t.recv_ns = s.col_int(10);
    r.t.book_ns = s.col_int(11);
    r.t.features_ns = s.col_int(12);
    r.t.detect_ns = s.col_int(13);
    r.t.emit_ns = s.col_int(14);
    r.latency_ns = s.col_int(15);
    const nlohmann::json vj = nlohmann::json::parse(s.col_text(16), nullptr, false);
    if (vj.is_array()) {
      for (const auto& v : vj) {
        r.values.push_back({v.value("name", ""), v.value("value", 0.0), v.value("threshold", 0.0), v.value("cmp", "")});
      }
    }
    const std::string_view blob = s.col_blob(17);
    r.features.resize(blob.size() / sizeof(float));
    if (!r.features.empty()) std::memcpy(r.features.data(), blob.data(), r.features.size() * sizeof(float));
    r.book = parse_book_json(s.col_text(18));
    r.model = parse_model_json(s.col_text(19));
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<std::vector<AlertRecord>> AuditStore::load_all() {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  auto s = db_->prepare(std::string("SELECT ") + kColumns + " FROM alerts ORDER BY row_id");
  if (!s) return s.status();
  return read_rows(s.value());
}

Result<std::vector<AlertRecord>> AuditStore::query(const AlertQuery& q) {
  if (!db_) return Status(StatusCode::kIoError, "audit store: closed");
  auto s = db_->prepare(std::string("SELECT ") + kColumns +
                        " FROM alerts WHERE (?1 IS NULL OR symbol = ?1) AND (?2 IS NULL OR type = ?2)"
                        " AND exch_ts_ns >= ?3 AND exch_ts_ns < ?4 AND (?6 IS NULL OR alert_id = ?6)"
                        " ORDER BY exch_ts_ns DESC, row_id DESC LIMIT ?5");
  if (!s) return s.status();
  SqlStmt& st = s.value();
  if (q.symbol) st.bind(1, *q.symbol);
  else st.bind_null(1);
  if (q.type) st.bind(2, *q.type);
  else st.bind_null(2);
  st.bind(3, q.since_exch_ns).bind(4, q.until_exch_ns).bind(5, int64_t(q.limit));
  if (q.alert_id) st.bind(6, int64_t(*q.alert_id));
  else st.bind_null(6);
  return read_rows(st);
}

}  // namespace ts
