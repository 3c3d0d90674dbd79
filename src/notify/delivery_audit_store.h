#pragma once
// Where the notifier's delivery record lives: table notify_deliveries (columns and rules in
// audit/audit_store.h, DeliveryAuditRecord) in the audit store the alerts go to. One interface,
// two backends:
//   sqlite    the embedded audit file ([sinks] audit_db; audit/audit_store.h), the default
//   postgres  the shared server ([sinks] audit_backend = "postgres", postgres_dsn;
//             delivery_audit_pg.cpp), the same table with the same columns and meaning
// Both upsert by (outbox_uid, notification_id) and never go backwards (AuditStore::write_delivery),
// so writes may arrive twice, out of order, and from the outbox's catch-up.
//
// Threading: one thread at a time (the DeliveryAudit's writer, or a reader such as the CLI).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "audit/audit_store.h"

namespace ts::notify {

class DeliveryAuditStore {
 public:
  virtual ~DeliveryAuditStore() = default;
  // Upserts `r` into the open batch (begun by the first write after a commit). A backend may
  // send the batch only at commit(): an error about a row may come from either call.
  virtual Status write(const DeliveryAuditRecord& r) = 0;
  // Commits the open batch, if any. After an error the batch is rolled back (not half-kept).
  virtual Status commit() = 0;
  // Rows matching `q`, newest first (enqueued_unix_ns, then notification_id).
  virtual Result<std::vector<DeliveryAuditRecord>> deliveries(const DeliveryQuery& q) = 0;
  // The lowest notification id of `outbox_uid` that may still change: its lowest pending row, or
  // one past its highest row (1 when it has none). The outbox catch-up starts there.
  virtual Result<int64_t> resume_id(const std::string& outbox_uid) = 0;
  // False once the connection to a server is lost: an error then says nothing about the rows,
  // and the writer keeps them for a new connection. SQLite (a local file) is always connected.
  virtual bool connected() const { return true; }
  // Where the rows are, for messages: the file, or "PostgreSQL database D on H:P".
  virtual std::string describe() const = 0;
};

// Opens (creating the schema, idempotently) a store; called again to reconnect.
using DeliveryAuditOpener = std::function<Result<std::unique_ptr<DeliveryAuditStore>>()>;

// The SQLite audit file at `path` (created when missing).
DeliveryAuditOpener sqlite_delivery_audit(std::string path);
// The PostgreSQL database at `dsn` (a libpq connection string).
DeliveryAuditOpener postgres_delivery_audit(std::string dsn);

}  // namespace ts::notify
