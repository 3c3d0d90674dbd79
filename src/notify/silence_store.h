#pragma once
// Silences: an operator mutes alerts matching some matchers for a while, saying who and why.
// Persisted in a database file of their own ([silences] db, "ticksentry-silences.db"; table
// `silences`), so they survive restarts; the admin API (/api/silences, `ticksentry silence`)
// drives this class. Declared silences come from the config file ([[silences.declared]]): they
// are listed and match like the others, are not stored, and cannot be expired (edit the file).
//
// One writer: only this store writes its file, so a create or expire never waits behind the
// alert sinks' transactions (the audit store commits every 100 ms and holds the write lock
// between; sharing its file made creates fail with "database is locked" at ~400 alerts/s).
// The file is in WAL mode with a 5 s busy timeout for another process (a second run on the
// same file).
//
// Threading: every method may be called from any thread. Writes are serialised by their own
// mutex; the in-memory copy that silenced_by() reads (once per alert, on the router and the
// dashboard's sink thread) has another, held only to copy or swap entries, never during I/O.
// Times: Unix-epoch ns (wall clock): silences are made by people, for wall-clock periods.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/sqlite_db.h"
#include "notify/matcher.h"

namespace ts::notify {

struct Silence {
  std::string id;                 // assigned by create(): 16 hex digits
  std::vector<Matcher> matchers;  // at least one
  std::string author;             // required
  std::string comment;            // required: why
  int64_t starts_unix_ns = 0;     // 0 in create(): now
  int64_t ends_unix_ns = 0;       // required, after starts
  int64_t created_unix_ns = 0;

  bool active_at(int64_t unix_ns) const { return unix_ns >= starts_unix_ns && unix_ns < ends_unix_ns; }
};

class SilenceStore {
 public:
  // Opens (creating) the silences table in the database at `path` and loads it. `declared`
  // (ids "config-1", ...) are served from memory. `import_from`: databases that held silences
  // before they had a file of their own (the outbox, the audit store); when `path` holds none
  // yet, their silences are copied in once (a missing file or table is no error).
  static Result<std::unique_ptr<SilenceStore>> open(const std::string& path, std::vector<Silence> declared = {},
                                                    const std::vector<std::string>& import_from = {});

  // Validates and stores `s` (errors: kInvalidArgument naming the field). Returns its id.
  Result<std::string> create(Silence s, int64_t now_unix_ns);
  // Active and future silences; with `include_expired` also ended ones. Ordered by creation.
  std::vector<Silence> list(int64_t now_unix_ns, bool include_expired = false) const;
  // Ends silence `id` now. kNotFound for an unknown id; expiring an ended silence is a no-op;
  // kUnsupported for a declared silence (the message says to edit the config file).
  Status expire(const std::string& id, int64_t now_unix_ns);
  // The id of an active silence matching `labels`, if any.
  std::optional<std::string> silenced_by(const Labels& labels, int64_t now_unix_ns) const;
  bool is_declared(const std::string& id) const;
  const std::string& path() const { return db_->path(); }
  uint64_t imported() const { return imported_; }

 private:
  explicit SilenceStore(std::unique_ptr<SqlDb> db) : db_(std::move(db)) {}
  Status load();
  Status import(const std::string& from);
  Status insert(const Silence& s);
  mutable std::mutex mu_;  // silences_ (memory only)
  std::mutex write_mu_;    // db_ writes; taken before mu_, never inside it
  std::unique_ptr<SqlDb> db_;
  std::vector<Silence> silences_;  // declared first, then stored ones by creation
  uint64_t imported_ = 0;
};

}  // namespace ts::notify
