#include "core/sqlite_db.h"

#include <sqlite3.h>

namespace ts {

namespace {
Status sql_error(sqlite3* db, const std::string& what, int rc = SQLITE_ERROR) {
  return Status(StatusCode::kIoError, what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}
}  // namespace

SqlStmt::~SqlStmt() {
  if (s_) sqlite3_finalize(s_);
}

SqlStmt& SqlStmt::bind(int i, int64_t v) {
  const int rc = sqlite3_bind_int64(s_, i, v);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqlStmt& SqlStmt::bind(int i, const std::string& v) {
  const int rc = sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqlStmt& SqlStmt::bind_double(int i, double v) {
  const int rc = sqlite3_bind_double(s_, i, v);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqlStmt& SqlStmt::bind_blob(int i, const void* data, size_t bytes) {
  const int rc = sqlite3_bind_blob64(s_, i, data, sqlite3_uint64(bytes), SQLITE_TRANSIENT);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqlStmt& SqlStmt::bind_null(int i) {
  const int rc = sqlite3_bind_null(s_, i);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Result<bool> SqlStmt::step() {
  if (bind_rc_ != SQLITE_OK) {
    return Status(StatusCode::kIoError, std::string("sqlite3_bind ") + sqlite3_sql(s_) + ": " + sqlite3_errstr(bind_rc_));
  }
  const int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status st = sql_error(db_, std::string("sqlite3_step ") + sqlite3_sql(s_));
  sqlite3_reset(s_);
  return st;
}

Status SqlStmt::run() {
  for (;;) {
    auto r = step();
    if (!r.is_ok()) {
      reset();
      return r.status();
    }
    if (!r.value()) break;
  }
  reset();
  return Status::ok();
}

int64_t SqlStmt::col_int(int i) const { return sqlite3_column_int64(s_, i); }
double SqlStmt::col_double(int i) const { return sqlite3_column_double(s_, i); }

std::string SqlStmt::col_text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
  return p ? std::string(p, size_t(sqlite3_column_bytes(s_, i))) : std::string();
}

std::string_view SqlStmt::col_blob(int i) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(s_, i));
  return p ? std::string_view(p, size_t(sqlite3_column_bytes(s_, i))) : std::string_view();
}

void SqlStmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
  bind_rc_ = SQLITE_OK;
}

Result<std::unique_ptr<SqlDb>> SqlDb::open(const std::string& path, const SqlOpenOptions& options) {
  sqlite3* db = nullptr;
  const int flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (options.single_thread ? SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_FULLMUTEX);
  if (const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr); rc != SQLITE_OK) {
    Status st = sql_error(db, "sqlite3_open_v2 " + path, rc);
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<SqlDb> out(new SqlDb(db, path));
  sqlite3_busy_timeout(db, 5000);
  TS_RETURN_IF_ERROR(out->exec("PRAGMA journal_mode=WAL").with_context(path));
  TS_RETURN_IF_ERROR(
      out->exec(options.sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL").with_context(path));
  if (options.require_wal) {
    auto mode = out->journal_mode();
    if (!mode) return mode.status().with_context(path);
    if (mode.value() != "wal") {
      return Status(StatusCode::kUnsupported, path + ": WAL mode refused (journal_mode=" + mode.value() + ")");
    }
  }
  return out;
}

SqlDb::~SqlDb() { (void)close(); }

Status SqlDb::close() {
  if (!db_) return Status::ok();
  const int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return sql_error(db_, "sqlite3_close " + path_);
  db_ = nullptr;
  return Status::ok();
}

Status SqlDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
    Status st(StatusCode::kIoError, "sqlite3_exec " + sql.substr(0, 60) + ": " + (err ? err : sqlite3_errstr(rc)));
    sqlite3_free(err);
    return st;
  }
  return Status::ok();
}

Result<SqlStmt> SqlDb::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), int(sql.size()), &s, nullptr) != SQLITE_OK) {
    return sql_error(db_, "sqlite3_prepare " + sql.substr(0, 60));
  }
  return SqlStmt(db_, s);
}

Result<std::string> SqlDb::journal_mode() {
  auto s = prepare("PRAGMA journal_mode");
  if (!s) return s.status();
  auto row = s.value().step();
  if (!row) return row.status();
  return row.value() ? s.value().col_text(0) : std::string();
}

int64_t SqlDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int SqlDb::changes() const { return sqlite3_changes(db_); }
bool SqlDb::in_transaction() const { return db_ && !sqlite3_get_autocommit(db_); }

}  // namespace ts
