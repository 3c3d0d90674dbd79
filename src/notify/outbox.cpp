#include "notify/outbox.h"

#include <cstdio>
#include <random>

namespace ts::notify {

namespace {
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS notifications(
  id INTEGER PRIMARY KEY, receiver TEXT NOT NULL, group_key TEXT NOT NULL, status TEXT NOT NULL,
  payload TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_unix_ns INTEGER NOT NULL, created_unix_ns INTEGER NOT NULL, alert_unix_ns INTEGER NOT NULL,
  delivered_unix_ns INTEGER, latency_ns INTEGER, last_error TEXT);
CREATE INDEX IF NOT EXISTS notifications_due ON notifications(receiver, state, next_attempt_unix_ns);
CREATE TABLE IF NOT EXISTS spilled_alerts(id INTEGER PRIMARY KEY, alert TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

std::string random_uid() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}
}  // namespace

Result<std::unique_ptr<Outbox>> Outbox::open(const std::string& path, bool sync_full) {
  auto db = SqlDb::open(path, sync_full);
  if (!db.is_ok()) return db.status().with_context("outbox");
  std::unique_ptr<Outbox> o(new Outbox(std::move(db).value()));
  TS_RETURN_IF_ERROR(o->db_->exec(kSchema).with_context("outbox " + path));
  // PERF NOTE: SQLite's automatic checkpoint runs inside whichever commit crosses 1000 WAL
  // pages and fsyncs the database file there, i.e. in the router's enqueue or a delivery
  // thread's mark. Checkpoints run instead from checkpoint() on a connection of their own, on
  // the notifier's checkpoint thread. On the shared 2-core machine notify_bench could not tell
  // the two apart (p99 6-330 ms either way, run to run, under load average ~11); the move keeps
  // the one fsync that is not per-commit off the alert path.
  TS_RETURN_IF_ERROR(o->db_->exec("PRAGMA wal_autocheckpoint=0").with_context("outbox " + path));
  auto ck = SqlDb::open(path, sync_full);
  if (!ck.is_ok()) return ck.status().with_context("outbox checkpoint connection");
  o->checkpoint_db_ = std::move(ck).value();
  TS_RETURN_IF_ERROR(o->prepare().with_context("outbox " + path));
  TS_RETURN_IF_ERROR(o->db_->exec("INSERT OR IGNORE INTO outbox_meta(key, value) VALUES('uid', '" + random_uid() + "')")
                         .with_context("outbox " + path));
  auto uid = o->db_->prepare("SELECT value FROM outbox_meta WHERE key='uid'");
  if (!uid.is_ok()) return uid.status().with_context("outbox " + path);
  auto row = uid.value().step();
  if (!row.is_ok() || !row.value()) return Status(StatusCode::kIoError, "outbox " + path + ": no uid in outbox_meta");
  o->uid_ = uid.value().col_text(0);
  return o;
}

Status Outbox::prepare() {
  auto p = [&](std::optional<SqlStmt>& slot, const char* sql) -> Status {
    auto s = db_->prepare(sql);
    if (!s.is_ok()) return s.status();
    slot.emplace(std::move(s).value());
    return Status::ok();
  };
  TS_RETURN_IF_ERROR(p(insert_, "INSERT INTO notifications(receiver, group_key, status, payload, next_attempt_unix_ns, "
                                "created_unix_ns, alert_unix_ns) VALUES(?,?,?,?,?,?,?)"));
  TS_RETURN_IF_ERROR(p(due_, "SELECT id, receiver, payload, attempts, created_unix_ns, alert_unix_ns FROM notifications "
                             "WHERE receiver=? AND state='pending' AND next_attempt_unix_ns<=? ORDER BY id LIMIT ?"));
  TS_RETURN_IF_ERROR(p(next_due_, "SELECT MIN(next_attempt_unix_ns) FROM notifications WHERE receiver=? AND state='pending'"));
  TS_RETURN_IF_ERROR(p(delivered_, "UPDATE notifications SET state='delivered', attempts=?, delivered_unix_ns=?, "
                                   "latency_ns=? WHERE id=?"));
  TS_RETURN_IF_ERROR(p(retry_, "UPDATE notifications SET attempts=?, next_attempt_unix_ns=?, last_error=? WHERE id=?"));
  TS_RETURN_IF_ERROR(p(dead_, "UPDATE notifications SET state='dead', attempts=?, last_error=? WHERE id=?"));
  TS_RETURN_IF_ERROR(p(spill_, "INSERT INTO spilled_alerts(alert) VALUES(?)"));
  return Status::ok();
}

Status Outbox::enqueue(const std::vector<Notification>& ns, int64_t now_unix_ns, std::vector<int64_t>* ids) {
  if (ids) ids->clear();
  if (ns.empty()) return Status::ok();
  std::lock_guard lock(mu_);
  TS_RETURN_IF_ERROR(db_->exec("BEGIN IMMEDIATE"));
  for (const Notification& n : ns) {
    insert_->bind(1, n.receiver).bind(2, n.group_key).bind(3, std::string(n.status())).bind(4, notification_to_json(n));
    insert_->bind(5, now_unix_ns).bind(6, now_unix_ns).bind(7, n.first_alert_unix_ns());
    if (Status st = insert_->run(); !st.is_ok()) {
      (void)db_->exec("ROLLBACK");
      if (ids) ids->clear();
      return st.with_context("outbox enqueue");
    }
    if (ids) ids->push_back(db_->last_insert_id());
  }
  Status st = db_->exec("COMMIT");
  if (!st.is_ok() && ids) ids->clear();
  return st;
}

Result<std::vector<OutboxEntry>> Outbox::due(const std::string& receiver, int64_t now_unix_ns, int limit) {
  std::lock_guard lock(mu_);
  due_->bind(1, receiver).bind(2, now_unix_ns).bind(3, int64_t(limit));
  std::vector<OutboxEntry> out;
  for (;;) {
    auto r = due_->step();
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
    out.push_back(OutboxEntry{due_->col_int(0), due_->col_text(1), due_->col_text(2), int(due_->col_int(3)),
                              due_->col_int(4), due_->col_int(5)});
  }
  due_->reset();
  return out;
}

Result<int64_t> Outbox::next_due_unix_ns(const std::string& receiver) {
  std::lock_guard lock(mu_);
  next_due_->bind(1, receiver);
  auto r = next_due_->step();
  if (!r.is_ok()) return r.status();
  // MIN() over no rows is NULL, which reads as 0: tell it apart by the column type via a sentinel.
  const std::string v = next_due_->col_text(0);
  const int64_t t = v.empty() ? INT64_MAX : next_due_->col_int(0);
  next_due_->reset();
  return t;
}

Status Outbox::mark_delivered(int64_t id, int attempts, int64_t now_unix_ns, int64_t latency_ns) {
  std::lock_guard lock(mu_);
  return delivered_->bind(1, int64_t(attempts)).bind(2, now_unix_ns).bind(3, latency_ns).bind(4, id).run();
}

Status Outbox::mark_retry(int64_t id, int attempts, int64_t next_attempt_unix_ns, const std::string& error) {
  std::lock_guard lock(mu_);
  return retry_->bind(1, int64_t(attempts)).bind(2, next_attempt_unix_ns).bind(3, error).bind(4, id).run();
}

Status Outbox::mark_dead(int64_t id, int attempts, const std::string& error) {
  std::lock_guard lock(mu_);
  return dead_->bind(1, int64_t(attempts)).bind(2, error).bind(3, id).run();
}

Status Outbox::spill(const NotifyAlert& a) {
  std::lock_guard lock(mu_);
  return spill_->bind(1, notify_alert_to_json(a)).run();
}

Result<std::vector<NotifyAlert>> Outbox::take_spilled(int limit) {
  std::lock_guard lock(mu_);
  auto sel = db_->prepare("SELECT id, alert FROM spilled_alerts ORDER BY id LIMIT " + std::to_string(limit));
  if (!sel.is_ok()) return sel.status();
  std::vector<NotifyAlert> out;
  int64_t last_id = -1;
  for (;;) {
    auto r = sel.value().step();
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
    last_id = sel.value().col_int(0);
    auto a = notify_alert_from_json(sel.value().col_text(1));
    if (a.is_ok()) out.push_back(std::move(a).value());  // a corrupt row is dropped with the rest
  }
  if (last_id >= 0) TS_RETURN_IF_ERROR(db_->exec("DELETE FROM spilled_alerts WHERE id<=" + std::to_string(last_id)));
  return out;
}

Status Outbox::checkpoint() {
  // PASSIVE: copies what no reader needs back into the database without blocking writers.
  return checkpoint_db_->exec("PRAGMA wal_checkpoint(PASSIVE)").with_context("outbox checkpoint");
}

Result<OutboxCounts> Outbox::counts(const std::string& receiver) {
  std::lock_guard lock(mu_);
  auto s = db_->prepare("SELECT state, COUNT(*) FROM notifications WHERE (?1='' OR receiver=?1) GROUP BY state");
  if (!s.is_ok()) return s.status();
  s.value().bind(1, receiver);
  OutboxCounts c;
  for (;;) {
    auto r = s.value().step();
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
    const std::string state = s.value().col_text(0);
    const int64_t n = s.value().col_int(1);
    if (state == "pending") c.pending = n;
    else if (state == "delivered") c.delivered = n;
    else if (state == "dead") c.dead = n;
  }
  return c;
}

Result<std::vector<DeliveryRecord>> Outbox::records() {
  std::lock_guard lock(mu_);
  auto s = db_->prepare("SELECT id, receiver, group_key, status, state, attempts, IFNULL(latency_ns,-1), "
                        "IFNULL(last_error,'') FROM notifications ORDER BY id");
  if (!s.is_ok()) return s.status();
  std::vector<DeliveryRecord> out;
  for (;;) {
    auto r = s.value().step();
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
    SqlStmt& q = s.value();
    out.push_back(DeliveryRecord{q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4),
                                 int(q.col_int(5)), q.col_int(6), q.col_text(7)});
  }
  return out;
}

Result<std::vector<DeliveryAuditRecord>> Outbox::audit_records(int64_t from_id) {
  std::lock_guard lock(mu_);
  auto s = db_->prepare("SELECT id, receiver, group_key, status, payload, state, attempts, created_unix_ns, alert_unix_ns, "
                        "IFNULL(delivered_unix_ns, 0), IFNULL(latency_ns, -1), IFNULL(last_error, '') FROM notifications "
                        "WHERE id >= ? ORDER BY id");
  if (!s.is_ok()) return s.status();
  s.value().bind(1, from_id);
  std::vector<DeliveryAuditRecord> out;
  for (;;) {
    auto r = s.value().step();
    if (!r.is_ok()) return r.status();
    if (!r.value()) break;
    SqlStmt& q = s.value();
    DeliveryAuditRecord a;
    a.outbox_uid = uid_;
    a.notification_id = q.col_int(0);
    a.receiver = q.col_text(1);
    a.group_key = q.col_text(2);
    a.status = q.col_text(3);
    if (auto n = notification_from_json(q.col_text(4)); n.is_ok()) {
      for (const auto& al : n.value().alerts) a.alert_ids.push_back(al.alert_id);
    }
    const std::string state = q.col_text(5);
    a.state = state == "dead" ? "failed" : state;
    a.attempts = int(q.col_int(6));
    a.enqueued_unix_ns = q.col_int(7);
    a.alert_unix_ns = q.col_int(8);
    a.delivered_unix_ns = q.col_int(9);
    a.alert_latency_ns = q.col_int(10);
    a.latency_ns = a.delivered_unix_ns > 0 ? a.delivered_unix_ns - a.enqueued_unix_ns : -1;
    a.last_error = q.col_text(11);
    a.updated_unix_ns = a.delivered_unix_ns > 0 ? a.delivered_unix_ns : a.enqueued_unix_ns;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace ts::notify
