#pragma once
// PhaseResolver: the trading phase of each event, from the feed when it carries one and from the
// instrument's session schedule (core/market_calendars.h) otherwise. BookSet asks it once per
// event and writes the answer into BookTop::phase, so features and rules see the same phase.
//
// Resolution (resolve_phase below):
//   - no schedule for the symbol (unknown market, calendar not loaded): the feed's phase;
//   - the feed has said nothing yet (kUnknown): the schedule's phase (to_event_phase);
//   - the feed says kHalted: halted (a schedule never knows halts);
//   - the feed says kContinuous while the schedule says the 09:25-09:30 pause or the lunch
//     break: kBreak. SSE's InstruStatus says TRADE through both (docs/instruments.md), so the
//     schedule refines it there; counted as a refinement, not a disagreement;
//   - otherwise the feed wins; where it differs from the schedule, a disagreement is counted,
//     once per stretch (a symbol's first event with a new (feed, schedule) pair that differs).
// The schedule of a symbol is built once per symbol and local day: the day's bounds in UTC and
// its zone offset are cached, so resolving is a few integer compares (no zone lookup per event).
//
// Threading: one shard thread owns a PhaseResolver (like its BookSet). The MarketCalendars and
// the SymbolTable's reference data (RefData::instrument) are read-only here and must outlive it.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/event.h"
#include "core/instrument.h"
#include "core/market_calendars.h"
#include "core/symbol_table.h"
#include "core/trading_phase.h"

namespace ts {

struct PhaseCounters {
  uint64_t disagreements = 0;  // stretches where the feed's phase differed from the schedule
  uint64_t refinements = 0;    // stretches where the schedule turned a feed's continuous into a break
  uint64_t no_schedule = 0;    // symbols without a schedule (phase from the feed only)
};

// The rule above as a pure function. `has_schedule` false: `sched` is ignored.
// *disagree / *refined say which case applied.
Phase resolve_phase(Phase feed, TradingPhase sched, bool has_schedule, bool* disagree, bool* refined);

class PhaseResolver {
 public:
  // `calendars` may be null: then only crypto (no holidays) has a schedule. `defaults` reads the
  // names of symbols whose RefData carries no instrument (a run without an instrument master).
  PhaseResolver(const SymbolTable& symbols, const MarketCalendars* calendars, InstrumentDefaults defaults = {});
  ~PhaseResolver();

  // The phase of symbol `id` at exchange time `ts_ns` given the feed's latest phase `feed`.
  Phase resolve(SymbolId id, int64_t ts_ns, Phase feed);
  // The schedule's phase alone (kClosed for a symbol without a schedule).
  TradingPhase scheduled(SymbolId id, int64_t ts_ns);
  // Where resolve()/scheduled() last put symbol `id`: exchange-local time = UTC + offset_s;
  // false when the symbol has no schedule.
  bool local_offset(SymbolId id, int32_t& offset_s, MarketKind& market) const;

  const PhaseCounters& counters() const { return counters_; }
  // Hint: starts loading symbol `id`'s cached day (BookSet::prefetch calls it). Changes nothing.
  void prefetch(SymbolId id) const {
    if (id < symbols_state_.size() && symbols_state_[id]) __builtin_prefetch(symbols_state_[id].get());
  }

  struct Symbol;  // per-symbol cache (phase_resolver.cpp)

 private:
  Symbol& symbol_for(SymbolId id);
  void load_day(Symbol& s, int64_t ts_ns);

  const SymbolTable& symbols_;
  const MarketCalendars* calendars_;
  InstrumentDefaults defaults_;
  std::vector<std::unique_ptr<Symbol>> symbols_state_;
  PhaseCounters counters_;
};

}  // namespace ts
