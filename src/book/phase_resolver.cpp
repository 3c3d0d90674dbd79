#include "book/phase_resolver.h"

#include "core/civil_time.h"

namespace ts {

namespace {
constexpr int64_t kSecNs = 1'000'000'000;
}  // namespace

Phase resolve_phase(Phase feed, TradingPhase sched, bool has_schedule, bool* disagree, bool* refined) {
  *disagree = false;
  *refined = false;
  if (!has_schedule) return feed;
  const Phase s = to_event_phase(sched);
  if (feed == Phase::kUnknown) return s;
  if (feed == Phase::kHalted || feed == s) return feed;
  if (feed == Phase::kContinuous &&
      (sched == TradingPhase::kOpeningPause || sched == TradingPhase::kLunchBreak)) {
    *refined = true;
    return Phase::kBreak;
  }
  *disagree = true;
  return feed;
}

// Hot fields first: resolve() reads one cache line per event (the session only on a new day).
struct PhaseResolver::Symbol {
  // The cached local day: [day_start_ns, day_end_ns) in UTC.
  int64_t day_start_ns = 1;
  int64_t day_end_ns = 0;
  const SessionSchedule* schedule = nullptr;
  int32_t offset_s = 0;     // local - UTC on that day
  bool trading_day = false;
  bool has_schedule = false;
  // The last (feed, schedule) pair, to count a disagreement once per stretch.
  bool last_odd = false;
  Phase last_feed = Phase::kUnknown;
  TradingPhase last_sched = TradingPhase::kClosed;
  MarketKind market = MarketKind::kUnknown;
  InstrumentSession session;
};

PhaseResolver::PhaseResolver(const SymbolTable& symbols, const MarketCalendars* calendars,
                             InstrumentDefaults defaults)
    : symbols_(symbols), calendars_(calendars), defaults_(std::move(defaults)) {}

PhaseResolver::~PhaseResolver() = default;

PhaseResolver::Symbol& PhaseResolver::symbol_for(SymbolId id) {
  if (id >= symbols_state_.size()) symbols_state_.resize(size_t(id) + 1);
  auto& slot = symbols_state_[id];
  if (slot) return *slot;
  slot = std::make_unique<Symbol>();
  Symbol& s = *slot;
  if (id < symbols_.size()) {
    const RefData& r = symbols_.ref(id);
    Result<Instrument> derived = Status{StatusCode::kNotFound, ""};
    const Instrument* in = r.instrument;
    if (in == nullptr) {
      derived = instrument_from_symbol(r.name, defaults_);
      if (derived) in = &derived.value();
    }
    if (in != nullptr) {
      MarketCalendars none;
      auto session = (calendars_ ? *calendars_ : none).session_for(*in);
      if (session) {
        s.session = std::move(session).value();
        s.market = in->market;
        s.schedule = &session_schedule(in->market);
        s.has_schedule = true;
      }
    }
  }
  if (!s.has_schedule) ++counters_.no_schedule;
  return s;
}

void PhaseResolver::load_day(Symbol& s, int64_t ts_ns) {
  const int64_t utc_s = floor_div(ts_ns, kSecNs);
  const int64_t local_s = s.session.time_zone().local_seconds(ts_ns);
  s.offset_s = int32_t(local_s - utc_s);
  const int64_t day = floor_div(local_s, kSecondsPerDay);
  s.day_start_ns = (day * kSecondsPerDay - s.offset_s) * kSecNs;
  s.day_end_ns = s.day_start_ns + kSecondsPerDay * kSecNs;
  s.trading_day = s.session.is_trading_day(day);
}

TradingPhase PhaseResolver::scheduled(SymbolId id, int64_t ts_ns) {
  Symbol& s = symbol_for(id);
  if (!s.has_schedule) return TradingPhase::kClosed;
  if (ts_ns < s.day_start_ns || ts_ns >= s.day_end_ns) load_day(s, ts_ns);
  if (!s.trading_day) return TradingPhase::kClosed;
  const auto second = int32_t((ts_ns - s.day_start_ns) / kSecNs);
  for (const SessionSegment& seg : s.schedule->segments) {
    if (second >= seg.start_s && second < seg.end_s) return seg.phase;
  }
  return TradingPhase::kClosed;
}

Phase PhaseResolver::resolve(SymbolId id, int64_t ts_ns, Phase feed) {
  const TradingPhase sched = scheduled(id, ts_ns);
  Symbol& s = *symbols_state_[id];
  bool disagree = false, refined = false;
  const Phase p = resolve_phase(feed, sched, s.has_schedule, &disagree, &refined);
  const bool odd = disagree || refined;
  if (odd && (!s.last_odd || feed != s.last_feed || sched != s.last_sched)) {
    if (disagree) ++counters_.disagreements;
    if (refined) ++counters_.refinements;
  }
  s.last_odd = odd;
  s.last_feed = feed;
  s.last_sched = sched;
  return p;
}

bool PhaseResolver::local_offset(SymbolId id, int32_t& offset_s, MarketKind& market) const {
  if (id >= symbols_state_.size() || !symbols_state_[id] || !symbols_state_[id]->has_schedule) return false;
  offset_s = symbols_state_[id]->offset_s;
  market = symbols_state_[id]->market;
  return true;
}

}  // namespace ts
