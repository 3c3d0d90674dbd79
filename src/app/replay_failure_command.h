#pragma once
// `ticksentry replay-failure ID [--audit-db FILE] [--model PATH] [--backend cpu|cuda]`: re-runs a
// failed inference batch recorded by model serving (src/audit/failure_store.h) on the model it
// failed on (or PATH), prints the error it had then and what happens now (probabilities per row,
// or the new error). `replay-failure --list` shows the recorded cases.
// Exit codes: 0 the batch runs now, 1 it fails again, 2 bad arguments / unknown ID / no model.
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace ts {

class ReplayFailureCommand {
 public:
  explicit ReplayFailureCommand(CLI::App& app);
  std::optional<int> run();

 private:
  CLI::App* cmd_ = nullptr;
  int64_t id_ = 0;
  bool list_ = false;
  std::string audit_db_ = "ticksentry-audit.db";
  std::string model_;
  std::string backend_ = "cpu";
};

}  // namespace ts
