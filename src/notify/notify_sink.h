#pragma once
// The notifier as an alert sink: the AlertDispatcher's sink thread hands it every alert.
// write() never waits for the network (Notifier::submit); close() stops the notifier, which
// drains what it can within drain_ms and leaves the rest in the outbox.
#include <memory>

#include "audit/alert_sink.h"
#include "notify/notifier.h"

namespace ts::notify {

class NotifySink : public AlertSink {
 public:
  explicit NotifySink(std::shared_ptr<Notifier> n) : n_(std::move(n)) {}
  Status write(const Alert& a, const SymbolTable&) override {
    if (!n_->submit(a)) return Status(StatusCode::kInternal, "notify: alert after shutdown began");
    return Status::ok();
  }
  Status flush() override { return Status::ok(); }
  Status close() override {
    n_->stop();
    return Status::ok();
  }
  Notifier& notifier() { return *n_; }

 private:
  std::shared_ptr<Notifier> n_;
};

}  // namespace ts::notify
