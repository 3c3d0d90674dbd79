#include "detect/decision_values.h"

namespace ts {

void DecisionValues::publish(uint32_t version, const ModelAlertOptions& values) {
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = Published{version, values};
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::optional<DecisionValues::Published> DecisionValues::latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

bool DecisionFollower::follow(uint32_t version, std::unique_ptr<ModelDecision>& decision, const SymbolTable& symbols) {
  if (!values_ || version == version_) return false;
  const uint64_t gen = values_->generation();
  if (gen == seen_generation_ && version == unmatched_version_) return false;  // looked already
  seen_generation_ = gen;
  auto latest = values_->latest();
  if (!latest || latest->version != version) {
    unmatched_version_ = version;
    return false;
  }
  decision = make_model_decision(latest->values, symbols);
  version_ = version;
  return true;
}

}  // namespace ts
