#pragma once
// The notifier as an alert sink: the AlertDispatcher's sink thread hands it every alert.
// write() never waits for the network (Notifier::submit); flush() (called by the dispatcher at
// least every 100 ms while alerts arrive) publishes the notifier's counters to `metrics` when
// one was given; close() stops the notifier, which drains what it can within drain_ms and
// leaves the rest in the outbox for the next start.
#include <memory>

#include "core/metrics.h"
#include "detect/alert_sink.h"
#include "notify/notifier.h"

namespace ts::notify {

class NotifySink : public AlertSink {
 public:
  // `metrics` (may be null) must outlive the sink.
  explicit NotifySink(std::shared_ptr<Notifier> n, Metrics* metrics = nullptr) : n_(std::move(n)), metrics_(metrics) {}
  Status write(const Alert& a, const SymbolTable&) override {
    if (!n_->submit(a)) return Status(StatusCode::kInternal, "notify: alert after shutdown began");
    return Status::ok();
  }
  Status flush() override {
    if (metrics_) n_->publish_metrics(*metrics_);
    return Status::ok();
  }
  Status close() override {
    n_->stop();
    return flush();
  }
  Notifier& notifier() { return *n_; }

 private:
  std::shared_ptr<Notifier> n_;
  Metrics* metrics_;
};

// The sink for the file's [notify] section, started; null when the file has none. Deliveries are
// recorded in the PostgreSQL audit store `audit_postgres_dsn`, else in the SQLite one `audit_db`
// (both "" = none). Throws ConfigError for a bad [notify]; a Status error when the outbox or the
// audit store cannot be opened. `silences`: the run's silence store (Notifier::create).
Result<std::shared_ptr<NotifySink>> make_notify_sink(const Config& config, const SymbolTable& symbols, Metrics* metrics,
                                                     const std::string& audit_db = "",
                                                     const std::string& audit_postgres_dsn = "",
                                                     SilenceStore* silences = nullptr);

}  // namespace ts::notify
