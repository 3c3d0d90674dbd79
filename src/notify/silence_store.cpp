#include "notify/silence_store.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

namespace ts::notify {

namespace {
std::string new_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  uint64_t v = rng();
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[size_t(i)] = kHex[v & 15];
  return s;
}

std::string matchers_json(const std::vector<Matcher>& ms) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& m : ms) j.push_back(m.to_string());
  return j.dump();
}
}  // namespace

Result<std::unique_ptr<SilenceStore>> SilenceStore::open(const std::string& path, std::vector<Silence> declared,
                                                       const std::vector<std::string>& import_from) {
  auto db = SqlDb::open(path, false);
  if (!db.is_ok()) return db.status().with_context("silences");
  std::unique_ptr<SilenceStore> s(new SilenceStore(std::move(db).value()));
  TS_RETURN_IF_ERROR(s->db_->exec("CREATE TABLE IF NOT EXISTS silences(id TEXT PRIMARY KEY, matchers TEXT NOT NULL, "
                                  "author TEXT NOT NULL, comment TEXT NOT NULL, starts_unix_ns INTEGER NOT NULL, "
                                  "ends_unix_ns INTEGER NOT NULL, created_unix_ns INTEGER NOT NULL)")
                         .with_context("silences " + path));
  if (!import_from.empty()) {
    auto count = s->db_->prepare("SELECT COUNT(*) FROM silences");
    if (!count.is_ok()) return count.status();
    auto row = count.value().step();
    if (!row.is_ok()) return row.status();
    const bool empty = count.value().col_int(0) == 0;  // else imported before, or made here since
    for (const std::string& from : import_from) {
      if (empty) TS_RETURN_IF_ERROR(s->import(from).with_context("silences from " + from));
    }
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    declared[i].id = "config-" + std::to_string(i + 1);
    s->silences_.push_back(std::move(declared[i]));
  }
  TS_RETURN_IF_ERROR(s->load().with_context("silences " + path));
  return s;
}

Status SilenceStore::import(const std::string& from) {
  std::error_code ec;
  if (!std::filesystem::exists(from, ec) || std::filesystem::equivalent(from, db_->path(), ec)) return Status::ok();
  auto legacy = SqlDb::open(from, false);  // its own connection: read, then closed
  if (!legacy.is_ok()) return legacy.status();
  auto has = legacy.value()->prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'silences'");
  if (!has.is_ok()) return has.status();
  auto r = has.value().step();
  if (!r.is_ok()) return r.status();
  if (has.value().col_int(0) == 0) return Status::ok();
  auto rows = legacy.value()->prepare(
      "SELECT id, matchers, author, comment, starts_unix_ns, ends_unix_ns, created_unix_ns FROM silences");
  if (!rows.is_ok()) return rows.status();
  auto ins = db_->prepare("INSERT OR IGNORE INTO silences VALUES(?,?,?,?,?,?,?)");
  if (!ins.is_ok()) return ins.status();
  for (;;) {
    auto row = rows.value().step();
    if (!row.is_ok()) return row.status();
    if (!row.value()) break;
    SqlStmt& q = rows.value();
    ins.value().bind(1, q.col_text(0)).bind(2, q.col_text(1)).bind(3, q.col_text(2)).bind(4, q.col_text(3));
    ins.value().bind(5, q.col_int(4)).bind(6, q.col_int(5)).bind(7, q.col_int(6));
    TS_RETURN_IF_ERROR(ins.value().run());
    imported_ += uint64_t(db_->changes());
  }
  return Status::ok();
}

Status SilenceStore::load() {
  auto q = db_->prepare("SELECT id, matchers, author, comment, starts_unix_ns, ends_unix_ns, created_unix_ns "
                        "FROM silences ORDER BY created_unix_ns, id");
  if (!q.is_ok()) return q.status();
  for (;;) {
    auto r = q.value().step();
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
    SqlStmt& s = q.value();
    Silence sil;
    sil.id = s.col_text(0);
    std::vector<std::string> texts;
    try {
      texts = nlohmann::json::parse(s.col_text(1)).get<std::vector<std::string>>();
    } catch (const std::exception& e) {
      return Status(StatusCode::kParseError, "silence " + sil.id + ": matchers: " + e.what());
    }
    auto ms = parse_matchers(texts);
    if (!ms.is_ok()) return ms.status().with_context("silence " + sil.id);
    sil.matchers = std::move(ms).value();
    sil.author = s.col_text(2);
    sil.comment = s.col_text(3);
    sil.starts_unix_ns = s.col_int(4);
    sil.ends_unix_ns = s.col_int(5);
    sil.created_unix_ns = s.col_int(6);
    silences_.push_back(std::move(sil));
  }
  return Status::ok();
}

Result<std::string> SilenceStore::create(Silence s, int64_t now_unix_ns) {
  if (s.matchers.empty()) return Status(StatusCode::kInvalidArgument, "silence: at least one matcher is required");
  if (s.author.empty()) return Status(StatusCode::kInvalidArgument, "silence: author is required");
  if (s.comment.empty()) return Status(StatusCode::kInvalidArgument, "silence: comment is required");
  if (s.ends_unix_ns <= now_unix_ns) return Status(StatusCode::kInvalidArgument, "silence: ends is in the past");
  if (s.starts_unix_ns == 0) s.starts_unix_ns = now_unix_ns;
  if (s.ends_unix_ns <= s.starts_unix_ns) {
    return Status(StatusCode::kInvalidArgument, "silence: ends must be after starts");
  }
  s.id = new_id();
  s.created_unix_ns = now_unix_ns;
  std::lock_guard write(write_mu_);
  TS_RETURN_IF_ERROR(insert(s));
  std::lock_guard lock(mu_);
  silences_.push_back(s);
  return s.id;
}

Status SilenceStore::insert(const Silence& s) {
  auto ins = db_->prepare("INSERT INTO silences VALUES(?,?,?,?,?,?,?)");
  if (!ins.is_ok()) return ins.status();
  ins.value().bind(1, s.id).bind(2, matchers_json(s.matchers)).bind(3, s.author).bind(4, s.comment);
  ins.value().bind(5, s.starts_unix_ns).bind(6, s.ends_unix_ns).bind(7, s.created_unix_ns);
  return ins.value().run().with_context("silence create");
}

std::vector<Silence> SilenceStore::list(int64_t now_unix_ns, bool include_expired) const {
  std::lock_guard lock(mu_);
  std::vector<Silence> out;
  for (const auto& s : silences_) {
    if (include_expired || s.ends_unix_ns > now_unix_ns) out.push_back(s);
  }
  return out;
}

Status SilenceStore::expire(const std::string& id, int64_t now_unix_ns) {
  if (is_declared(id)) {
    return Status(StatusCode::kUnsupported,
                  "silence " + id + " is declared in the config file ([[silences.declared]]): remove it there");
  }
  std::lock_guard write(write_mu_);
  int64_t starts = 0;
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(silences_.begin(), silences_.end(), [&](const Silence& s) { return s.id == id; });
    if (it == silences_.end()) return Status(StatusCode::kNotFound, "silence " + id + ": no such silence");
    if (it->ends_unix_ns <= now_unix_ns) return Status::ok();
    starts = it->starts_unix_ns;
  }
  auto up = db_->prepare("UPDATE silences SET ends_unix_ns=? WHERE id=?");
  if (!up.is_ok()) return up.status();
  const int64_t ends = std::max(now_unix_ns, starts);  // a future silence ends before it starts
  TS_RETURN_IF_ERROR(up.value().bind(1, ends).bind(2, id).run().with_context("silence expire"));
  std::lock_guard lock(mu_);
  for (auto& s : silences_) {
    if (s.id == id) s.ends_unix_ns = ends;
  }
  return Status::ok();
}

bool SilenceStore::is_declared(const std::string& id) const { return id.rfind("config-", 0) == 0; }

std::optional<std::string> SilenceStore::silenced_by(const Labels& labels, int64_t now_unix_ns) const {
  std::lock_guard lock(mu_);
  for (const auto& s : silences_) {
    if (s.active_at(now_unix_ns) && matches_all(s.matchers, labels)) return s.id;
  }
  return std::nullopt;
}

}  // namespace ts::notify
