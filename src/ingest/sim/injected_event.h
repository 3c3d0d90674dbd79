#pragma once
// Ground truth of the simulator: the labelled events it injects into otherwise quiet flow.
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/event.h"

namespace ts {

enum class SimEventType : uint8_t {
  kFlashCrash = 0,       // price falls 3-7% within 10-60 s on heavy aggressive selling, then partly recovers
  kPump,                 // mirror: price rises 3-7% within 10-60 s on heavy buying, then partly retraces
  kVolumeBurst,          // trade rate 10-30x normal for 20-90 s, no big price move
  kLiquidityWithdrawal,  // most depth on both sides cancelled, spread wide for 10-40 s, then refills
  kSpoofing,             // a very large order 1-3 levels from the touch, held 2-6 s, cancelled; 3-6 times
  kLimitUpRun,           // climbs to limit_up and seals (bid queue at the limit, no asks), later opens
  kLimitDownRun,         // mirror: falls to limit_down and seals
};
constexpr int kSimEventTypeCount = 7;

// "flash_crash", "pump", "volume_burst", "liquidity_withdrawal", "spoofing", "limit_up_run",
// "limit_down_run".
const char* sim_event_type_name(SimEventType type);
std::optional<SimEventType> sim_event_type_from_name(std::string_view name);

// One injected event. Times are exchange times (ns since the Unix epoch) of the first and last
// moment of the disturbance. `magnitude` depends on the type:
//   flash_crash, pump:          intended move as a fraction of the price at start (0.03..0.07)
//   volume_burst:               trade-rate multiplier over normal (10..30)
//   liquidity_withdrawal:       spread while withdrawn, ticks
//   spoofing:                   spoof order size / average top-5 level size on its side (10..30)
//   limit_up_run, limit_down_run: distance from the price at start to the limit, fraction of prev_close
struct InjectedEvent {
  SymbolId symbol = kInvalidSymbol;
  SimEventType type = SimEventType::kFlashCrash;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  double magnitude = 0;
};

}  // namespace ts
