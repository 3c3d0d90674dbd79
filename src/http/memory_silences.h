#pragma once
// MemorySilences: a SilenceAdmin that keeps silences in memory for the process's lifetime
// (tests; embedding without a database). ticksentry itself serves src/notify's persistent
// SilenceStore through StoreSilences (store_silences.h). Threading: one mutex, off the hot path.
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
  std::optional<std::string> match(const Alert& a, const SymbolTable& symbols, int64_t now_ms) override;

 private:
  std::mutex mu_;
  std::vector<SilenceInfo> silences_;
  uint64_t next_id_ = 1;
};

}  // namespace ts::http
