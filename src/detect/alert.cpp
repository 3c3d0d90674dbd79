#include "detect/alert.h"

namespace ts {

const char* alert_type_name(AlertType type) {
  switch (type) {
    case AlertType::kRapidRise: return "rapid_rise";
    case AlertType::kAcceleratingDrop: return "accelerating_drop";
    case AlertType::kHighDive: return "high_dive";
    case AlertType::kLargeBuy: return "large_buy";
    case AlertType::kLargeSell: return "large_sell";
    case AlertType::kLimitUpSealed: return "limit_up_sealed";
    case AlertType::kLimitUpOpened: return "limit_up_opened";
    case AlertType::kLimitDownSealed: return "limit_down_sealed";
    case AlertType::kLimitDownOpened: return "limit_down_opened";
    case AlertType::kLimitUpQueueShrink: return "limit_up_queue_shrink";
    case AlertType::kSpreadWidening: return "spread_widening";
    case AlertType::kBookImbalance: return "book_imbalance";
    case AlertType::kVolumeBurst: return "volume_burst";
    case AlertType::kLargeOrder: return "large_order";
    case AlertType::kLimitUpTouched: return "limit_up_touched";
    case AlertType::kLimitDownTouched: return "limit_down_touched";
    case AlertType::kLimitDownQueueShrink: return "limit_down_queue_shrink";
    case AlertType::kModel: return "model";
    case AlertType::kCount: break;
  }
  return "unknown";
}

uint64_t alert_id(std::string_view symbol, AlertType type, int64_t exch_ts_ns, uint64_t event_seq) {
  // FNV-1a over the name, then each field folded in through the splitmix64 finalizer.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : symbol) h = (h ^ c) * 0x100000001b3ull;
  auto mix = [](uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  h = mix(h ^ static_cast<uint64_t>(type));
  h = mix(h ^ static_cast<uint64_t>(exch_ts_ns));
  return mix(h ^ event_seq) & kAlertIdMask;
}

const char* cmp_symbol(Cmp c) {
  switch (c) {
    case Cmp::kGe: return ">=";
    case Cmp::kLe: return "<=";
    case Cmp::kGt: return ">";
    case Cmp::kLt: return "<";
    case Cmp::kInfo: return "";
  }
  return "";
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "unknown";
}

}  // namespace ts
