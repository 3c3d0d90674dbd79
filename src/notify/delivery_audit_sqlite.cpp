// The SQLite backend of the delivery audit: the notify_deliveries table of the audit file,
// through AuditStore (its own connection: WAL lets the alert writer go on meanwhile).
#include "notify/delivery_audit_store.h"

namespace ts::notify {

namespace {

class SqliteDeliveryAudit final : public DeliveryAuditStore {
 public:
  SqliteDeliveryAudit(std::unique_ptr<AuditStore> store, std::string path)
      : store_(std::move(store)), path_(std::move(path)) {}
  ~SqliteDeliveryAudit() override { (void)store_->close(); }

  Status write(const DeliveryAuditRecord& r) override { return store_->write_delivery(r); }
  Status commit() override { return store_->flush(); }
  Result<std::vector<DeliveryAuditRecord>> deliveries(const DeliveryQuery& q) override { return store_->deliveries(q); }
  Result<int64_t> resume_id(const std::string& outbox_uid) override { return store_->delivery_resume_id(outbox_uid); }
  std::string describe() const override { return path_; }

 private:
  std::unique_ptr<AuditStore> store_;
  std::string path_;
};

}  // namespace

DeliveryAuditOpener sqlite_delivery_audit(std::string path) {
  return [path = std::move(path)]() -> Result<std::unique_ptr<DeliveryAuditStore>> {
    auto store = AuditStore::open(path);
    if (!store.is_ok()) return store.status();
    return std::unique_ptr<DeliveryAuditStore>(new SqliteDeliveryAudit(std::move(store).value(), path));
  };
}

}  // namespace ts::notify
