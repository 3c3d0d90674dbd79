#include "ingest/sim/injected_event.h"

namespace ts {

const char* sim_event_type_name(SimEventType type) {
  switch (type) {
    case SimEventType::kFlashCrash: return "flash_crash";
    case SimEventType::kPump: return "pump";
    case SimEventType::kVolumeBurst: return "volume_burst";
    case SimEventType::kLiquidityWithdrawal: return "liquidity_withdrawal";
    case SimEventType::kSpoofing: return "spoofing";
    case SimEventType::kLimitUpRun: return "limit_up_run";
    case SimEventType::kLimitDownRun: return "limit_down_run";
  }
  return "unknown";
}

std::optional<SimEventType> sim_event_type_from_name(std::string_view name) {
  for (int i = 0; i < kSimEventTypeCount; ++i) {
    const auto t = SimEventType(i);
    if (name == sim_event_type_name(t)) return t;
  }
  return std::nullopt;
}

}  // namespace ts
