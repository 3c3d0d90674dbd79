#include "audit/failure_store.h"

#include <sqlite3.h>

#include "core/clock.h"

namespace ts {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS inference_failures (
  id INTEGER PRIMARY KEY,
  wall_ns INTEGER NOT NULL,
  model TEXT NOT NULL,
  version INTEGER NOT NULL,
  model_path TEXT NOT NULL,
  backend TEXT NOT NULL,
  error TEXT NOT NULL,
  batch INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  features INTEGER NOT NULL,
  recovered INTEGER NOT NULL,
  input_blob BLOB NOT NULL
);
)sql";

std::string text(sqlite3_stmt* s, int i) {
  const unsigned char* p = sqlite3_column_text(s, i);
  return p ? reinterpret_cast<const char*>(p) : "";
}

Status sql_error(sqlite3* db, const char* what) {
  return Status(StatusCode::kIoError, std::string("failure store: ") + what + ": " + sqlite3_errmsg(db));
}

FailureRecord read_row(sqlite3_stmt* s, bool with_input) {
  FailureRecord r;
  r.id = sqlite3_column_int64(s, 0);
  r.wall_ns = sqlite3_column_int64(s, 1);
  r.model = text(s, 2);
  r.version = uint32_t(sqlite3_column_int64(s, 3));
  r.model_path = text(s, 4);
  r.backend = text(s, 5);
  r.error = text(s, 6);
  r.batch = sqlite3_column_int(s, 7);
  r.rows = sqlite3_column_int(s, 8);
  r.features = sqlite3_column_int(s, 9);
  r.recovered = sqlite3_column_int(s, 10) != 0;
  if (with_input) {
    const auto* p = static_cast<const float*>(sqlite3_column_blob(s, 11));
    const size_t n = size_t(sqlite3_column_bytes(s, 11)) / sizeof(float);
    if (p) r.input.assign(p, p + n);
  }
  return r;
}

}  // namespace

Result<std::unique_ptr<FailureStore>> FailureStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    Status st(StatusCode::kIoError, "failure store " + path + ": " + (db ? sqlite3_errmsg(db) : "cannot open"));
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<FailureStore> s(new FailureStore(db));
  sqlite3_busy_timeout(db, 5000);
  TS_RETURN_IF_ERROR(s->exec("PRAGMA journal_mode=WAL"));
  TS_RETURN_IF_ERROR(s->exec(kSchema));
  return s;
}

FailureStore::~FailureStore() { sqlite3_close(db_); }

Status FailureStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status st(StatusCode::kIoError, std::string("failure store: ") + (err ? err : "exec failed"));
    sqlite3_free(err);
    return st;
  }
  return Status::ok();
}

Result<int64_t> FailureStore::record(const FailureRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO inference_failures (wall_ns, model, version, model_path, backend, error, batch, "
                         "rows, features, recovered, input_blob) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
                         -1, &s, nullptr) != SQLITE_OK) {
    return sql_error(db_, "prepare INSERT");
  }
  sqlite3_bind_int64(s, 1, wall_ns());
  sqlite3_bind_text(s, 2, r.model.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 3, r.version);
  sqlite3_bind_text(s, 4, r.model_path.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 5, r.backend.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 6, r.error.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(s, 7, r.batch);
  sqlite3_bind_int(s, 8, r.rows);
  sqlite3_bind_int(s, 9, r.features);
  sqlite3_bind_int(s, 10, r.recovered ? 1 : 0);
  sqlite3_bind_blob(s, 11, r.input.data(), int(r.input.size() * sizeof(float)), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sql_error(db_, "INSERT");
  return int64_t(sqlite3_last_insert_rowid(db_));
}

Result<FailureRecord> FailureStore::load(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT * FROM inference_failures WHERE id = ?1", -1, &s, nullptr) != SQLITE_OK) {
    return sql_error(db_, "prepare SELECT");
  }
  sqlite3_bind_int64(s, 1, id);
  const int rc = sqlite3_step(s);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(s);
    if (rc == SQLITE_DONE) return Status(StatusCode::kNotFound, "failure " + std::to_string(id) + ": no such failure case");
    return sql_error(db_, "SELECT");
  }
  FailureRecord r = read_row(s, true);
  sqlite3_finalize(s);
  return r;
}

Result<std::vector<FailureRecord>> FailureStore::list(int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT * FROM inference_failures ORDER BY id DESC LIMIT ?1", -1, &s, nullptr) != SQLITE_OK) {
    return sql_error(db_, "prepare SELECT");
  }
  sqlite3_bind_int(s, 1, limit);
  std::vector<FailureRecord> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.push_back(read_row(s, false));
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sql_error(db_, "SELECT");
  return out;
}

}  // namespace ts
