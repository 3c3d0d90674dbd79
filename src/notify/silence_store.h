#pragma once
// Silences: an operator mutes alerts matching some matchers for a while, saying who and why.
// Persisted in the outbox database (table `silences`), so they survive restarts; the admin API
// (/api/silences) is meant to drive this class directly.
//
// Threading: every method may be called from any thread (a mutex; the router calls
// silenced_by() once per alert, which reads an in-memory copy).
// Times: Unix-epoch ns (wall clock): silences are made by people, for wall-clock periods.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "notify/matcher.h"
#include "core/sqlite_db.h"

namespace ts::notify {

struct Silence {
  std::string id;                  // assigned by create(): 16 hex digits
  std::vector<Matcher> matchers;   // at least one
  std::string author;              // required
  std::string comment;             // required: why
  int64_t starts_unix_ns = 0;      // 0 in create(): now
  int64_t ends_unix_ns = 0;        // required, after starts
  int64_t created_unix_ns = 0;

  bool active_at(int64_t unix_ns) const { return unix_ns >= starts_unix_ns && unix_ns < ends_unix_ns; }
};

class SilenceStore {
 public:
  // Opens (creating) the silences table in the database at `path` and loads it.
  static Result<std::unique_ptr<SilenceStore>> open(const std::string& path);

  // Validates and stores `s` (errors: kInvalidArgument naming the field). Returns its id.
  Result<std::string> create(Silence s, int64_t now_unix_ns);
  // Active and future silences; with `include_expired` also ended ones. Ordered by creation.
  std::vector<Silence> list(int64_t now_unix_ns, bool include_expired = false) const;
  // Ends silence `id` now. kNotFound for an unknown id; expiring an ended silence is a no-op.
  Status expire(const std::string& id, int64_t now_unix_ns);
  // The id of an active silence matching `labels`, if any.
  std::optional<std::string> silenced_by(const Labels& labels, int64_t now_unix_ns) const;

 private:
  explicit SilenceStore(std::unique_ptr<SqlDb> db) : db_(std::move(db)) {}
  Status load();
  mutable std::mutex mu_;
  std::unique_ptr<SqlDb> db_;
  std::vector<Silence> silences_;
};

}  // namespace ts::notify
