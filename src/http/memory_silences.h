#pragma once
// MemorySilences: the SilenceAdmin ticksentry uses until src/notify's SilenceStore (persistent,
// shared with the notification router) is wired in. Silences live in memory for the process's
// lifetime: the dashboard's silence page and its "silenced" alert marks work, nothing is kept
// across restarts. Threading: every method takes one mutex (off the hot path).
#include <mutex>
#include <vector>

#include "http/admin_api.h"

namespace ts::http {

// Validation shared by every SilenceAdmin: Status::ok() or kInvalidArgument with the reason.
Status validate_silence(const SilenceSpec& spec);

class MemorySilences : public SilenceAdmin {
 public:
  Result<SilenceInfo> create(const SilenceSpec& spec) override;
  std::vector<SilenceInfo> list() override;
  Status expire(const std::string& id) override;
  std::optional<std::string> match(const std::string& symbol, const std::string& type,
                                   const std::string& severity, int64_t now_ms) override;

 private:
  std::mutex mu_;
  std::vector<SilenceInfo> silences_;
  uint64_t next_id_ = 1;
};

}  // namespace ts::http
