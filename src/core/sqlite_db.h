#pragma once
// A thin checked wrapper over one SQLite connection, for every SQLite store (the audit store and
// the failure store in src/audit, the outbox and the silence store in src/notify): every call's
// error becomes a Status naming the call and SQLite's message.
// Threading: like a sqlite3*, one thread at a time unless opened serialized (the default; the
// notify stores also hold a mutex); a statement belongs to its connection's thread.
// Its own CMake target (ts_sqlite) so that ts_core needs no libsqlite3.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ts {

class SqlStmt {
 public:
  SqlStmt(sqlite3* db, sqlite3_stmt* s) : db_(db), s_(s) {}
  ~SqlStmt();
  SqlStmt(SqlStmt&& o) noexcept : db_(o.db_), s_(o.s_), bind_rc_(o.bind_rc_) { o.s_ = nullptr; }
  SqlStmt(const SqlStmt&) = delete;
  SqlStmt& operator=(const SqlStmt&) = delete;

  // Parameters are 1-based; text and blobs are copied. A failed bind is reported by the next
  // step() (or run()), which then does not run the statement.
  SqlStmt& bind(int i, int64_t v);
  SqlStmt& bind(int i, const std::string& v);
  SqlStmt& bind_double(int i, double v);
  SqlStmt& bind_blob(int i, const void* data, size_t bytes);
  SqlStmt& bind_null(int i);
  // true: a row is ready (read it with col_*); false: done. Errors as Status (the statement is
  // reset, its bindings kept).
  Result<bool> step();
  Status run();  // step to the end, reset (bindings cleared)
  int64_t col_int(int i) const;
  double col_double(int i) const;
  std::string col_text(int i) const;
  std::string_view col_blob(int i) const;  // valid until the next step/reset
  void reset();                            // ready to run again, bindings cleared

 private:
  sqlite3* db_;
  sqlite3_stmt* s_;
  int bind_rc_ = 0;  // first failed bind's code (SQLITE_OK = 0)
};

struct SqlOpenOptions {
  bool sync_full = false;      // synchronous FULL (survives power loss), else NORMAL (a process crash)
  bool single_thread = false;  // SQLITE_OPEN_NOMUTEX: one owner thread; else serialized (FULLMUTEX)
  bool require_wal = false;    // kUnsupported when WAL cannot be set (a network file system)
};

class SqlDb {
 public:
  // Opens (creating) `path` in WAL mode with a 5 s busy timeout. Errors: kIoError naming
  // sqlite3_open_v2 and the path; kUnsupported when `require_wal` and WAL was refused.
  static Result<std::unique_ptr<SqlDb>> open(const std::string& path, const SqlOpenOptions& options);
  static Result<std::unique_ptr<SqlDb>> open(const std::string& path, bool sync_full) {
    return open(path, SqlOpenOptions{sync_full, false, false});
  }
  ~SqlDb();
  SqlDb(const SqlDb&) = delete;
  SqlDb& operator=(const SqlDb&) = delete;

  Status exec(const std::string& sql);
  Result<SqlStmt> prepare(const std::string& sql);
  int64_t last_insert_id() const;
  int changes() const;
  bool in_transaction() const;  // a BEGIN not yet committed or rolled back
  Result<std::string> journal_mode();
  const std::string& path() const { return path_; }
  // Closes the connection (every statement must be destroyed first); later calls are errors
  // of SQLite's (misuse), so owners check their own closed state. Idempotent.
  Status close();

 private:
  SqlDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace ts
