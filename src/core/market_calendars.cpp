#include "core/market_calendars.h"

#include <filesystem>
#include <system_error>

namespace ts {

TradingPhase InstrumentSession::phase_at(int64_t exchange_time_ns) const {
  if (schedule_ == nullptr) return TradingPhase::kClosed;
  return schedule_phase(*schedule_, calendar_, tz_->local_seconds(exchange_time_ns));
}

CivilDate InstrumentSession::trading_date(int64_t exchange_time_ns) const {
  return civil_from_days(floor_div(tz_->local_seconds(exchange_time_ns), kSecondsPerDay));
}

bool InstrumentSession::is_trading_day(int64_t day) const {
  if (schedule_ == nullptr) return false;
  if (schedule_->weekends_closed) {
    const uint32_t wd = weekday_of(day);
    if (wd == 0 || wd == 6) return false;
  }
  return calendar_ == nullptr || !calendar_->is_holiday(day);
}

Status MarketCalendars::load_dir(const std::string& dir, InputErrors& errors) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return {StatusCode::kIoError, "calendar directory " + dir + ": " + ec.message()};
  }
  size_t loaded = 0;
  for (const auto& entry : it) {
    if (!entry.is_regular_file() || entry.path().extension() != ".csv") continue;
    auto cal = ExchangeCalendar::load(entry.path().stem().string(), entry.path().string(),
                                      errors);
    if (!cal) return cal.status();
    add(std::move(cal).value());
    ++loaded;
  }
  if (loaded == 0) return {StatusCode::kNotFound, "calendar directory " + dir + ": no .csv file"};
  return Status::ok();
}

void MarketCalendars::add(ExchangeCalendar cal) {
  const std::string id = cal.id();
  calendars_[id] = std::make_unique<ExchangeCalendar>(std::move(cal));
}

const ExchangeCalendar* MarketCalendars::find(std::string_view id) const {
  auto it = calendars_.find(std::string(id));
  return it == calendars_.end() ? nullptr : it->second.get();
}

Result<InstrumentSession> MarketCalendars::session_for(const Instrument& in) const {
  if (in.market == MarketKind::kUnknown) {
    return Status{StatusCode::kInvalidArgument,
                  "instrument " + in.symbol + ": unknown market, no session schedule"};
  }
  InstrumentSession s;
  s.schedule_ = &session_schedule(in.market);
  s.calendar_ = find(in.calendar);
  if (s.calendar_ == nullptr && in.calendar != "crypto") {
    return Status{StatusCode::kNotFound, "instrument " + in.symbol + ": calendar \"" +
                                             in.calendar + "\" not loaded (config/calendars/" +
                                             in.calendar + ".csv)"};
  }
  auto tz = TimeZone::load(in.time_zone);
  if (!tz) return tz.status().with_context("instrument " + in.symbol);
  s.tz_ = std::move(tz).value();
  return s;
}

Result<TradingPhase> MarketCalendars::phase_at(const Instrument& in,
                                               int64_t exchange_time_ns) const {
  auto s = session_for(in);
  if (!s) return s.status();
  return s.value().phase_at(exchange_time_ns);
}

}  // namespace ts
