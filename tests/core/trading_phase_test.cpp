#include <gtest/gtest.h>

#include "core/market_calendars.h"
#include "test_data.h"

namespace ts {
namespace {

// UTC ns of a wall-clock time `offset_h` hours ahead of UTC.
int64_t at(const char* date, int h, int m, int s, int offset_h) {
  const int64_t day = days_from_civil(parse_civil_date(date).value());
  return ((day * kSecondsPerDay + h * 3600 + m * 60 + s) - offset_h * 3600) * kNsPerSecond;
}
int64_t shanghai(const char* date, int h, int m, int s = 0) { return at(date, h, m, s, 8); }

class Phases : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::string(TICKSENTRY_SOURCE_DIR) + "/config/calendars";
    ASSERT_TRUE(cals_.load_dir(dir, errors_)) << dir;
    ASSERT_EQ(errors_.total(), 0u) << "the shipped calendars have bad rows";
  }
  InstrumentSession session(const char* symbol) {
    auto in = instrument_from_symbol(symbol);
    EXPECT_TRUE(in) << symbol;
    auto s = cals_.session_for(in.value());
    EXPECT_TRUE(s) << s.status().to_string();
    return s.value();
  }
  MarketCalendars cals_;
  InputErrors errors_;
};

TEST_F(Phases, SseBoundaryMinutes) {
  const InstrumentSession s = session("600519.SH");
  const char* d = "2023-02-01";  // a Wednesday with data in ../shared/data
  const struct { int h, m, s; TradingPhase want; } cases[] = {
      {8, 59, 59, TradingPhase::kClosed},
      {9, 0, 0, TradingPhase::kPreOpen},
      {9, 14, 59, TradingPhase::kPreOpen},
      {9, 15, 0, TradingPhase::kOpeningCall},
      {9, 19, 59, TradingPhase::kOpeningCall},
      {9, 20, 0, TradingPhase::kOpeningCallNoCancel},
      {9, 24, 59, TradingPhase::kOpeningCallNoCancel},
      {9, 25, 0, TradingPhase::kOpeningPause},
      {9, 29, 59, TradingPhase::kOpeningPause},
      {9, 30, 0, TradingPhase::kContinuous},
      {11, 29, 59, TradingPhase::kContinuous},
      {11, 30, 0, TradingPhase::kLunchBreak},
      {12, 59, 59, TradingPhase::kLunchBreak},
      {13, 0, 0, TradingPhase::kContinuous},
      {14, 56, 59, TradingPhase::kContinuous},
      {14, 57, 0, TradingPhase::kClosingCall},
      {14, 59, 59, TradingPhase::kClosingCall},
      {15, 0, 0, TradingPhase::kClosed},
      {23, 59, 59, TradingPhase::kClosed},
  };
  for (const auto& c : cases) {
    const TradingPhase got = s.phase_at(shanghai(d, c.h, c.m, c.s));
    EXPECT_EQ(got, c.want) << c.h << ":" << c.m << ":" << c.s << " got "
                           << trading_phase_name(got);
  }
  // The last nanosecond before 09:30 is still the pause.
  EXPECT_EQ(s.phase_at(shanghai(d, 9, 30) - 1), TradingPhase::kOpeningPause);
  // Shenzhen, ChiNext and Beijing follow the same schedule.
  for (const char* sym : {"000001.SZ", "300750.SZ", "430047.BJ", "688981.SH"}) {
    EXPECT_EQ(session(sym).phase_at(shanghai(d, 9, 22)), TradingPhase::kOpeningCallNoCancel);
    EXPECT_EQ(session(sym).phase_at(shanghai(d, 14, 58)), TradingPhase::kClosingCall);
  }
  EXPECT_EQ(s.trading_date(shanghai(d, 0, 30)), parse_civil_date(d).value());  // 16:30 UTC before
}

TEST_F(Phases, AShareHolidaysAndWeekendsAreClosed) {
  const InstrumentSession s = session("600519.SH");
  EXPECT_EQ(s.phase_at(shanghai("2026-02-17", 10, 0)), TradingPhase::kClosed);  // Spring Festival
  EXPECT_EQ(s.phase_at(shanghai("2024-10-07", 10, 0)), TradingPhase::kClosed);  // National Day
  EXPECT_EQ(s.phase_at(shanghai("2023-01-28", 10, 0)), TradingPhase::kClosed);  // make-up Saturday
  EXPECT_EQ(s.phase_at(shanghai("2026-02-24", 10, 0)), TradingPhase::kContinuous);
  EXPECT_EQ(s.calendar()->holiday_name(days_from_civil({2026, 2, 17})), "Spring Festival");
  EXPECT_FALSE(s.is_trading_day(days_from_civil({2025, 10, 8})));
  EXPECT_TRUE(s.is_trading_day(days_from_civil({2025, 10, 9})));
  EXPECT_TRUE(s.calendar()->covers(days_from_civil({2027, 12, 31})));
  EXPECT_FALSE(s.calendar()->covers(days_from_civil({2028, 1, 3})));
}

TEST_F(Phases, UsSessionsAcrossTheDstSwitches) {
  const InstrumentSession s = session("AAPL.US");
  // Friday before the March 2026 switch: EST, the open 09:30 is 14:30 UTC.
  EXPECT_EQ(s.phase_at(at("2026-03-06", 14, 29, 59, 0)), TradingPhase::kPreMarket);
  EXPECT_EQ(s.phase_at(at("2026-03-06", 14, 30, 0, 0)), TradingPhase::kContinuous);
  EXPECT_EQ(s.phase_at(at("2026-03-06", 21, 0, 0, 0)), TradingPhase::kPostMarket);  // 16:00 EST
  // Monday after (switch Sunday 2026-03-08 02:00 EST): EDT, the open is 13:30 UTC.
  EXPECT_EQ(s.phase_at(at("2026-03-09", 13, 29, 59, 0)), TradingPhase::kPreMarket);
  EXPECT_EQ(s.phase_at(at("2026-03-09", 13, 30, 0, 0)), TradingPhase::kContinuous);
  EXPECT_EQ(s.phase_at(at("2026-03-09", 19, 59, 59, 0)), TradingPhase::kContinuous);
  EXPECT_EQ(s.phase_at(at("2026-03-09", 20, 0, 0, 0)), TradingPhase::kPostMarket);
  EXPECT_EQ(s.phase_at(at("2026-03-09", 23, 59, 59, 0)), TradingPhase::kPostMarket);
  EXPECT_EQ(s.phase_at(at("2026-03-10", 0, 0, 0, 0)), TradingPhase::kClosed);  // 20:00 EDT
  EXPECT_EQ(s.phase_at(at("2026-03-10", 8, 0, 0, 0)), TradingPhase::kPreMarket);  // 04:00 EDT
  // November: Friday 2026-10-30 EDT, Monday 2026-11-02 EST.
  EXPECT_EQ(s.phase_at(at("2026-10-30", 13, 30, 0, 0)), TradingPhase::kContinuous);
  EXPECT_EQ(s.phase_at(at("2026-11-02", 13, 30, 0, 0)), TradingPhase::kPreMarket);
  EXPECT_EQ(s.phase_at(at("2026-11-02", 14, 30, 0, 0)), TradingPhase::kContinuous);
  // The switch instants themselves.
  EXPECT_EQ(s.time_zone().utc_offset_s(at("2026-03-08", 6, 59, 59, 0) / kNsPerSecond), -18000);
  EXPECT_EQ(s.time_zone().utc_offset_s(at("2026-03-08", 7, 0, 0, 0) / kNsPerSecond), -14400);
  EXPECT_EQ(s.time_zone().utc_offset_s(at("2026-11-01", 5, 59, 59, 0) / kNsPerSecond), -14400);
  EXPECT_EQ(s.time_zone().utc_offset_s(at("2026-11-01", 6, 0, 0, 0) / kNsPerSecond), -18000);
  // LOBSTER's day 2012-06-21 (EDT): 09:30 is 13:30 UTC.
  EXPECT_EQ(s.phase_at(at("2012-06-21", 13, 30, 0, 0)), TradingPhase::kContinuous);
}

TEST_F(Phases, UsHolidaysAreClosed) {
  const InstrumentSession s = session("AAPL.US");
  EXPECT_EQ(s.phase_at(at("2026-07-03", 10, 0, 0, -4)), TradingPhase::kClosed);   // July 4 observed
  EXPECT_EQ(s.phase_at(at("2025-01-09", 10, 0, 0, -5)), TradingPhase::kClosed);   // Carter
  EXPECT_EQ(s.phase_at(at("2026-04-03", 10, 0, 0, -4)), TradingPhase::kClosed);   // Good Friday
  EXPECT_EQ(s.phase_at(at("2026-04-03", 5, 0, 0, -4)), TradingPhase::kClosed);    // no pre-market
  EXPECT_EQ(s.phase_at(at("2021-12-31", 10, 0, 0, -5)), TradingPhase::kContinuous);  // not observed
  EXPECT_EQ(s.phase_at(at("2026-03-07", 10, 0, 0, -5)), TradingPhase::kClosed);   // Saturday
}

TEST_F(Phases, CryptoTradesAroundTheClock) {
  const InstrumentSession s = session("BINANCE:BTCUSDT");
  EXPECT_EQ(s.calendar(), nullptr);
  for (const char* d : {"2026-03-07", "2026-03-08", "2026-02-17", "2026-12-25"}) {  // Sat, Sun, ...
    for (int h : {0, 3, 9, 12, 23}) {
      EXPECT_EQ(s.phase_at(at(d, h, 0, 0, 0)), TradingPhase::kContinuous) << d << " " << h;
    }
  }
  // The statistics day is the UTC date: it turns at 00:00 UTC.
  EXPECT_EQ(s.trading_date(at("2026-03-07", 23, 59, 59, 0)), (CivilDate{2026, 3, 7}));
  EXPECT_EQ(s.trading_date(at("2026-03-08", 0, 0, 0, 0)), (CivilDate{2026, 3, 8}));
  EXPECT_TRUE(s.is_trading_day(days_from_civil({2026, 3, 8})));
}

TEST_F(Phases, MissingCalendarsAndZonesAreErrors) {
  MarketCalendars empty;
  auto in = instrument_from_symbol("600519.SH").value();
  auto s = empty.session_for(in);
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("calendar \"cn-a\" not loaded"), std::string::npos);
  EXPECT_TRUE(empty.session_for(instrument_from_symbol("BINANCE:BTCUSDT").value()));
  in.time_zone = "Mars/Olympus_Mons";
  EXPECT_EQ(cals_.session_for(in).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cals_.phase_at(instrument_from_symbol("600519.SH").value(),
                           shanghai("2023-02-01", 9, 20)).value(),
            TradingPhase::kOpeningCallNoCancel);
  InputErrors errors;
  EXPECT_FALSE(empty.load_dir("/nonexistent/calendars", errors));
}

TEST(TradingPhase, MapsOntoTheFeedPhase) {
  EXPECT_EQ(to_event_phase(TradingPhase::kOpeningCallNoCancel), Phase::kOpeningAuction);
  EXPECT_EQ(to_event_phase(TradingPhase::kOpeningPause), Phase::kBreak);
  EXPECT_EQ(to_event_phase(TradingPhase::kClosingCall), Phase::kClosingAuction);
  EXPECT_EQ(to_event_phase(TradingPhase::kPostMarket), Phase::kClosed);
  EXPECT_TRUE(is_call_auction(TradingPhase::kOpeningCall));
  EXPECT_FALSE(is_call_auction(TradingPhase::kOpeningPause));
  for (int i = 0; i < kTradingPhaseCount; ++i) {
    EXPECT_STRNE(trading_phase_name(static_cast<TradingPhase>(i)), "unknown") << i;
  }
}

}  // namespace
}  // namespace ts
