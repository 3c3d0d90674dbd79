#include "notify/notify_sink.h"

namespace ts::notify {

Result<std::shared_ptr<NotifySink>> make_notify_sink(const Config& config, const SymbolTable& symbols, Metrics* metrics,
                                                     const std::string& audit_db,
                                                     const std::string& audit_postgres_dsn, SilenceStore* silences) {
  if (!has_notify_section(config)) return std::shared_ptr<NotifySink>();
  NotifyConfig cfg = read_notify_config(config);
  cfg.audit_db = audit_db;
  cfg.audit_postgres_dsn = audit_postgres_dsn;
  auto n = Notifier::create(std::move(cfg), symbols, metrics, silences);
  if (!n.is_ok()) return n.status();
  std::shared_ptr<Notifier> notifier(std::move(n).value());
  notifier->start();
  return std::make_shared<NotifySink>(std::move(notifier), metrics);
}

}  // namespace ts::notify
