#pragma once
// MarketCalendars: the exchange calendars by id ("cn-a", "us"), and, per instrument, the
// InstrumentSession that answers "which phase is this symbol in at exchange time t".
//
//   MarketCalendars cals;
//   TS_RETURN_IF_ERROR(cals.load_dir("config/calendars", errors));   // start-up
//   auto session = cals.session_for(instrument);                     // once per symbol
//   TradingPhase p = session.value().phase_at(event.exch_ts_ns);     // any thread
//
// Time zones: core/time_zone.h (the system tzdata through date/tz.h), loaded in session_for().
// Threading: load_dir()/add() run at start-up on one thread; afterwards session_for() and
// find() are const and safe from any thread. An InstrumentSession is an immutable value that
// points into its MarketCalendars, which must outlive it, and shares its loaded TimeZone.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/civil_time.h"
#include "core/exchange_calendar.h"
#include "core/input_errors.h"
#include "core/instrument.h"
#include "core/status.h"
#include "core/time_zone.h"
#include "core/trading_phase.h"

namespace ts {

class InstrumentSession {
 public:
  // The scheduled phase at `exchange_time_ns` (UTC ns since the epoch): kClosed on weekends
  // (cn-a, us) and on the calendar's holidays; never kHalted (only a feed says that).
  TradingPhase phase_at(int64_t exchange_time_ns) const;
  // The trading day `exchange_time_ns` falls in: the exchange-local date (crypto: the UTC date,
  // the day daily statistics reset at 00:00 UTC).
  CivilDate trading_date(int64_t exchange_time_ns) const;
  // Whether the local date `day` (days since 1970-01-01) has sessions: not a weekend (where
  // weekends close) and not a holiday.
  bool is_trading_day(int64_t day) const;
  const TimeZone& time_zone() const { return *tz_; }
  // Null for markets without holidays (crypto).
  const ExchangeCalendar* calendar() const { return calendar_; }

 private:
  friend class MarketCalendars;
  const SessionSchedule* schedule_ = nullptr;
  const ExchangeCalendar* calendar_ = nullptr;
  std::shared_ptr<const TimeZone> tz_;  // never null in a session from session_for()
};

class MarketCalendars {
 public:
  // Loads every "<id>.csv" in `dir` as calendar <id>. Bad rows are counted in `errors`; an
  // error when the directory cannot be read or a file has no valid row (core/exchange_calendar.h).
  Status load_dir(const std::string& dir, InputErrors& errors);
  // Adds or replaces the calendar cal.id() (replacing invalidates sessions made before).
  void add(ExchangeCalendar cal);
  const ExchangeCalendar* find(std::string_view id) const;

  // The session of `in`: its market's schedule, its calendar and its time zone. Errors:
  // kNotFound for an unknown time zone, or a calendar id other than "crypto" that is not loaded
  // (holidays would silently be trading days); kInvalidArgument for an instrument whose market
  // is unknown.
  Result<InstrumentSession> session_for(const Instrument& in) const;
  // session_for(in), then phase_at(t): convenient, but loads the time zone on every call.
  Result<TradingPhase> phase_at(const Instrument& in, int64_t exchange_time_ns) const;

 private:
  std::unordered_map<std::string, std::unique_ptr<ExchangeCalendar>> calendars_;
};

}  // namespace ts
