#pragma once
// Failure cases of model serving: a batch whose inference failed, with its inputs, the model
// version, the backend and the error, so `ticksentry replay-failure ID` can run it again.
// Table `inference_failures` in the audit database (its own connection; WAL lets it sit beside
// the AuditStore's): id, wall_ns, model, version, model_path, backend, error, batch, rows,
// features, recovered (the CPU retry succeeded), input_blob (batch × rows × features float32).
// Threading: record() may be called from any thread (a mutex; failures are rare and off the
// shard threads); each call commits.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/sqlite_db.h"
#include "core/status.h"

namespace ts {

struct FailureRecord {
  int64_t id = 0;
  int64_t wall_ns = 0;
  std::string model;
  uint32_t version = 0;
  std::string model_path;
  std::string backend;
  std::string error;
  int batch = 0, rows = 0, features = 0;
  bool recovered = false;
  std::vector<float> input;
};

class FailureStore {
 public:
  static Result<std::unique_ptr<FailureStore>> open(const std::string& path);
  ~FailureStore();
  FailureStore(const FailureStore&) = delete;
  FailureStore& operator=(const FailureStore&) = delete;

  // Stores `r` (its id is ignored) and returns the new id.
  Result<int64_t> record(const FailureRecord& r);
  Result<FailureRecord> load(int64_t id);
  Result<std::vector<FailureRecord>> list(int limit = 100);  // newest first, without inputs

 private:
  explicit FailureStore(std::unique_ptr<SqlDb> db) : db_(std::move(db)) {}
  std::mutex mu_;
  std::unique_ptr<SqlDb> db_;
};

}  // namespace ts
