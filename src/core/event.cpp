#include "core/event.h"

namespace ts {

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kSnapshot: return "snapshot";
    case EventKind::kTrade: return "trade";
    case EventKind::kOrderAdd: return "order_add";
    case EventKind::kOrderCancel: return "order_cancel";
    case EventKind::kOrderExecute: return "order_execute";
    case EventKind::kStatus: return "status";
  }
  return "unknown";
}

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kUnknown: return "unknown";
    case Phase::kPreOpen: return "pre_open";
    case Phase::kOpeningAuction: return "opening_auction";
    case Phase::kContinuous: return "continuous";
    case Phase::kBreak: return "break";
    case Phase::kClosingAuction: return "closing_auction";
    case Phase::kClosed: return "closed";
    case Phase::kHalted: return "halted";
  }
  return "unknown";
}

}  // namespace ts
