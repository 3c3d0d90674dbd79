#include "audit/failure_store.h"

#include <cstring>

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

FailureRecord read_row(const SqlStmt& s, bool with_input) {
  FailureRecord r;
  r.id = s.col_int(0);
  r.wall_ns = s.col_int(1);
  r.model = s.col_text(2);
  r.version = uint32_t(s.col_int(3));
  r.model_path = s.col_text(4);
  r.backend = s.col_text(5);
  r.error = s.col_text(6);
  r.batch = int(s.col_int(7));
  r.rows = int(s.col_int(8));
  r.features = int(s.col_int(9));
  r.recovered = s.col_int(10) != 0;
  if (with_input) {
    const std::string_view blob = s.col_blob(11);
    r.input.resize(blob.size() / sizeof(float));
    if (!r.input.empty()) std::memcpy(r.input.data(), blob.data(), r.input.size() * sizeof(float));
  }
  return r;
}

}  // namespace

Result<std::unique_ptr<FailureStore>> FailureStore::open(const std::string& path) {
  // Serialized connection (workers of several models record at once); synchronous FULL, SQLite's
  // default, which this store kept.
  auto db = SqlDb::open(path, SqlOpenOptions{/*sync_full=*/true, /*single_thread=*/false, /*require_wal=*/false});
  if (!db) return db.status().with_context("failure store");
  std::unique_ptr<FailureStore> s(new FailureStore(std::move(db).value()));
  TS_RETURN_IF_ERROR(s->db_->exec(kSchema).with_context("failure store"));
  return s;
}

FailureStore::~FailureStore() = default;

Result<int64_t> FailureStore::record(const FailureRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->prepare(
      "INSERT INTO inference_failures (wall_ns, model, version, model_path, backend, error, batch, "
      "rows, features, recovered, input_blob) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)");
  if (!s) return s.status().with_context("failure store");
  s.value()
      .bind(1, wall_ns())
      .bind(2, r.model)
      .bind(3, int64_t(r.version))
      .bind(4, r.model_path)
      .bind(5, r.backend)
      .bind(6, r.error)
      .bind(7, int64_t(r.batch))
      .bind(8, int64_t(r.rows))
      .bind(9, int64_t(r.features))
      .bind(10, int64_t(r.recovered ? 1 : 0))
      .bind_blob(11, r.input.data(), r.input.size() * sizeof(float));
  TS_RETURN_IF_ERROR(s.value().run().with_context("failure store"));
  return db_->last_insert_id();
}

Result<FailureRecord> FailureStore::load(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->prepare("SELECT * FROM inference_failures WHERE id = ?1");
  if (!s) return s.status().with_context("failure store");
  auto row = s.value().bind(1, id).step();
  if (!row) return row.status().with_context("failure store");
  if (!row.value()) return Status(StatusCode::kNotFound, "failure " + std::to_string(id) + ": no such failure case");
  return read_row(s.value(), true);
}

Result<std::vector<FailureRecord>> FailureStore::list(int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = db_->prepare("SELECT * FROM inference_failures ORDER BY id DESC LIMIT ?1");
  if (!s) return s.status().with_context("failure store");
  s.value().bind(1, int64_t(limit));
  std::vector<FailureRecord> out;
  for (;;) {
    auto row = s.value().step();
    if (!row) return row.status().with_context("failure store");
    if (!row.value()) break;
    out.push_back(read_row(s.value(), false));
  }
  return out;
}

}  // namespace ts
