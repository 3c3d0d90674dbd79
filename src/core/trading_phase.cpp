#include "core/trading_phase.h"

#include "core/civil_time.h"

namespace ts {

namespace {

constexpr int32_t hm(int32_t h, int32_t m) { return h * 3600 + m * 60; }

constexpr SessionSegment kChinaA[] = {
    {hm(9, 0), hm(9, 15), TradingPhase::kPreOpen},
    {hm(9, 15), hm(9, 20), TradingPhase::kOpeningCall},
    {hm(9, 20), hm(9, 25), TradingPhase::kOpeningCallNoCancel},
    {hm(9, 25), hm(9, 30), TradingPhase::kOpeningPause},
    {hm(9, 30), hm(11, 30), TradingPhase::kContinuous},
    {hm(11, 30), hm(13, 0), TradingPhase::kLunchBreak},
    {hm(13, 0), hm(14, 57), TradingPhase::kContinuous},
    {hm(14, 57), hm(15, 0), TradingPhase::kClosingCall},
};
constexpr SessionSegment kUs[] = {
    {hm(4, 0), hm(9, 30), TradingPhase::kPreMarket},
    {hm(9, 30), hm(16, 0), TradingPhase::kContinuous},
    {hm(16, 0), hm(20, 0), TradingPhase::kPostMarket},
};
constexpr SessionSegment kCrypto[] = {
    {0, hm(24, 0), TradingPhase::kContinuous},
};

const SessionSchedule kChinaASchedule{MarketKind::kChinaA, true, kChinaA};
const SessionSchedule kUsSchedule{MarketKind::kUs, true, kUs};
const SessionSchedule kCryptoSchedule{MarketKind::kCrypto, false, kCrypto};
const SessionSchedule kNoSchedule{};

}  // namespace

const char* trading_phase_name(TradingPhase p) {
  switch (p) {
    case TradingPhase::kClosed: return "closed";
    case TradingPhase::kPreOpen: return "pre_open";
    case TradingPhase::kOpeningCall: return "opening_call";
    case TradingPhase::kOpeningCallNoCancel: return "opening_call_no_cancel";
    case TradingPhase::kOpeningPause: return "opening_pause";
    case TradingPhase::kContinuous: return "continuous";
    case TradingPhase::kLunchBreak: return "lunch_break";
    case TradingPhase::kClosingCall: return "closing_call";
    case TradingPhase::kHalted: return "halted";
    case TradingPhase::kPreMarket: return "pre_market";
    case TradingPhase::kPostMarket: return "post_market";
  }
  return "unknown";
}

Phase to_event_phase(TradingPhase p) {
  switch (p) {
    case TradingPhase::kClosed: return Phase::kClosed;
    case TradingPhase::kPreOpen: return Phase::kPreOpen;
    case TradingPhase::kOpeningCall:
    case TradingPhase::kOpeningCallNoCancel: return Phase::kOpeningAuction;
    case TradingPhase::kOpeningPause: return Phase::kBreak;
    case TradingPhase::kContinuous: return Phase::kContinuous;
    case TradingPhase::kLunchBreak: return Phase::kBreak;
    case TradingPhase::kClosingCall: return Phase::kClosingAuction;
    case TradingPhase::kHalted: return Phase::kHalted;
    case TradingPhase::kPreMarket: return Phase::kPreOpen;
    case TradingPhase::kPostMarket: return Phase::kClosed;
  }
  return Phase::kUnknown;
}

bool is_call_auction(TradingPhase p) {
  return p == TradingPhase::kOpeningCall || p == TradingPhase::kOpeningCallNoCancel ||
         p == TradingPhase::kClosingCall;
}

const SessionSchedule& session_schedule(MarketKind market) {
  switch (market) {
    case MarketKind::kChinaA: return kChinaASchedule;
    case MarketKind::kUs: return kUsSchedule;
    case MarketKind::kCrypto: return kCryptoSchedule;
    case MarketKind::kUnknown: break;
  }
  return kNoSchedule;
}

TradingPhase schedule_phase(const SessionSchedule& schedule, const ExchangeCalendar* calendar,
                            int64_t local_s) {
  const int64_t day = floor_div(local_s, kSecondsPerDay);
  const auto second = static_cast<int32_t>(local_s - day * kSecondsPerDay);
  if (schedule.weekends_closed) {
    const uint32_t wd = weekday_of(day);
    if (wd == 0 || wd == 6) return TradingPhase::kClosed;
  }
  if (calendar != nullptr && calendar->is_holiday(day)) return TradingPhase::kClosed;
  for (const SessionSegment& s : schedule.segments) {
    if (second >= s.start_s && second < s.end_s) return s.phase;
  }
  return TradingPhase::kClosed;
}

}  // namespace ts
