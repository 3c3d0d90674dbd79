#include "notify/sqlite_db.h"

#include <sqlite3.h>

namespace ts::notify {

namespace {
Status sql_error(sqlite3* db, const std::string& what) {
  return Status(StatusCode::kIoError, what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}
}  // namespace

SqlStmt::~SqlStmt() {
  if (s_) sqlite3_finalize(s_);
}

SqlStmt& SqlStmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

SqlStmt& SqlStmt::bind(int i, const std::string& v) {
  sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Result<bool> SqlStmt::step() {
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
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
  }
  reset();
  return Status::ok();
}

int64_t SqlStmt::col_int(int i) const { return sqlite3_column_int64(s_, i); }

std::string SqlStmt::col_text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
  return p ? std::string(p, size_t(sqlite3_column_bytes(s_, i))) : std::string();
}

void SqlStmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

Result<std::unique_ptr<SqlDb>> SqlDb::open(const std::string& path, bool sync_full) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    Status st = sql_error(db, "opening " + path);
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<SqlDb> out(new SqlDb(db, path));
  sqlite3_busy_timeout(db, 5000);
  TS_RETURN_IF_ERROR(out->exec("PRAGMA journal_mode=WAL").with_context(path));
  TS_RETURN_IF_ERROR(out->exec(sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL").with_context(path));
  return out;
}

SqlDb::~SqlDb() { sqlite3_close(db_); }

Status SqlDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    Status st(StatusCode::kIoError, "sqlite3_exec " + sql.substr(0, 60) + ": " + (err ? err : "?"));
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

int64_t SqlDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int SqlDb::changes() const { return sqlite3_changes(db_); }

}  // namespace ts::notify
