#pragma once
// Trading phases and the per-market session schedules they follow.
// TradingPhase is the schedule's vocabulary, finer than the feed's Phase (core/event.h, a wire
// format that stays as it is): to_event_phase() maps one onto the other.
// Schedules (exchange-local wall time, each segment [start, end); anything else is kClosed):
//   cn-a (SSE, SZSE, BSE; the SSE main board has had the closing call since 2018-08-20):
//     09:00 pre_open, 09:15 opening_call, 09:20 opening_call_no_cancel, 09:25 opening_pause,
//     09:30 continuous, 11:30 lunch_break, 13:00 continuous, 14:57 closing_call, 15:00 closed.
//     Both exchanges refuse cancels 09:20-09:25 (and in the closing call).
//   us (America/New_York): 04:00 pre_market, 09:30 continuous, 16:00 post_market, 20:00 closed.
//   crypto (UTC): continuous all day, every day; the statistics day starts at 00:00 UTC.
// Weekends are closed on cn-a and us; holidays come from the calendar (core/exchange_calendar.h).
// kHalted never comes from a schedule: only a feed says a symbol is halted.
// Pure functions; safe from any thread.
#include <cstdint>
#include <span>

#include "core/event.h"
#include "core/exchange_calendar.h"
#include "core/instrument.h"

namespace ts {

enum class TradingPhase : uint8_t {
  kClosed = 0,
  kPreOpen,               // cn-a 09:00-09:15: orders queue at brokers, nothing matches
  kOpeningCall,           // cn-a 09:15-09:20: call auction, indicative prices, cancels allowed
  kOpeningCallNoCancel,   // cn-a 09:20-09:25: call auction, cancels refused
  kOpeningPause,          // cn-a 09:25-09:30: matched at 09:25, waiting for continuous trading
  kContinuous,
  kLunchBreak,            // cn-a 11:30-13:00
  kClosingCall,           // cn-a 14:57-15:00: closing call auction
  kHalted,                // from the feed only
  kPreMarket,             // us 04:00-09:30 (extended hours)
  kPostMarket,            // us 16:00-20:00 (extended hours)
};
constexpr int kTradingPhaseCount = 11;
const char* trading_phase_name(TradingPhase p);  // "opening_call_no_cancel", ...
// The feed phase closest to `p`: the calls → kOpeningAuction / kClosingAuction, the 09:25 pause
// and the lunch break → kBreak, pre-market → kPreOpen, post-market → kClosed (no rule alerts in
// extended hours until the rules know them).
Phase to_event_phase(TradingPhase p);
// True in the phases where an indicative price is not a trade.
bool is_call_auction(TradingPhase p);

struct SessionSegment {
  int32_t start_s;  // seconds after local midnight, inclusive
  int32_t end_s;    // exclusive
  TradingPhase phase;
};

struct SessionSchedule {
  MarketKind market = MarketKind::kUnknown;
  bool weekends_closed = true;
  std::span<const SessionSegment> segments;  // sorted, non-overlapping
};

// The schedule of a market (static data; kUnknown gets an empty schedule: always closed).
const SessionSchedule& session_schedule(MarketKind market);

// The phase at `local_s` (exchange-local wall-clock seconds since the epoch, as
// TimeZone::local_seconds gives) under `schedule`; `calendar` (may be null) closes holidays.
TradingPhase schedule_phase(const SessionSchedule& schedule, const ExchangeCalendar* calendar,
                            int64_t local_s);

}  // namespace ts
