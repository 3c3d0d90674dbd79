#pragma once
// A thin checked wrapper over one SQLite connection for the outbox and the silence store:
// every call's error becomes a Status naming the call and SQLite's message.
// Threading: like a sqlite3*, one thread at a time (the owners hold a mutex).
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ts::notify {

class SqlStmt {
 public:
  SqlStmt(sqlite3* db, sqlite3_stmt* s) : db_(db), s_(s) {}
  ~SqlStmt();
  SqlStmt(SqlStmt&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
  SqlStmt(const SqlStmt&) = delete;
  SqlStmt& operator=(const SqlStmt&) = delete;

  SqlStmt& bind(int i, int64_t v);
  SqlStmt& bind(int i, const std::string& v);
  // true: a row is ready (read it with col_*); false: done. Errors as Status.
  Result<bool> step();
  Status run();  // step to the end, reset
  int64_t col_int(int i) const;
  std::string col_text(int i) const;
  void reset();

 private:
  sqlite3* db_;
  sqlite3_stmt* s_;
};

class SqlDb {
 public:
  // Opens (creating) `path` in WAL mode with a 5 s busy timeout; synchronous FULL when
  // `sync_full` (survives power loss), else NORMAL (survives a process crash).
  static Result<std::unique_ptr<SqlDb>> open(const std::string& path, bool sync_full);
  ~SqlDb();
  SqlDb(const SqlDb&) = delete;
  SqlDb& operator=(const SqlDb&) = delete;

  Status exec(const std::string& sql);
  Result<SqlStmt> prepare(const std::string& sql);
  int64_t last_insert_id() const;
  int changes() const;
  const std::string& path() const { return path_; }

 private:
  SqlDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace ts::notify
