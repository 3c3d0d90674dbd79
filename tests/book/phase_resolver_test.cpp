// PhaseResolver: the feed's phase refined by the schedule; disagreements counted once per stretch.
#include "book/phase_resolver.h"

#include <gtest/gtest.h>

#include "book/book_set.h"
#include "core/civil_time.h"

namespace ts {
namespace {

constexpr int64_t kS = 1'000'000'000;
// UTC ns of Shanghai wall time h:m:s on 2023-02-01 (a Wednesday, a trading day).
int64_t sh(int h, int m, int s = 0) {
  return ((days_from_civil(CivilDate{2023, 2, 1}) * 86400 + h * 3600 + m * 60 + s) - 8 * 3600) * kS;
}

TEST(ResolvePhase, FeedWinsExceptTheScheduledBreaks) {
  bool dis = false, ref = false;
  // No schedule: the feed.
  EXPECT_EQ(resolve_phase(Phase::kContinuous, TradingPhase::kLunchBreak, false, &dis, &ref), Phase::kContinuous);
  EXPECT_FALSE(dis || ref);
  // Feed silent: the schedule.
  EXPECT_EQ(resolve_phase(Phase::kUnknown, TradingPhase::kOpeningCall, true, &dis, &ref), Phase::kOpeningAuction);
  EXPECT_FALSE(dis || ref);
  // SSE TRADE in the lunch break and the 09:25 pause: refined to a break, not a disagreement.
  EXPECT_EQ(resolve_phase(Phase::kContinuous, TradingPhase::kLunchBreak, true, &dis, &ref), Phase::kBreak);
  EXPECT_TRUE(ref);
  EXPECT_FALSE(dis);
  EXPECT_EQ(resolve_phase(Phase::kContinuous, TradingPhase::kOpeningPause, true, &dis, &ref), Phase::kBreak);
  EXPECT_TRUE(ref);
  // A halt is the feed's alone.
  EXPECT_EQ(resolve_phase(Phase::kHalted, TradingPhase::kContinuous, true, &dis, &ref), Phase::kHalted);
  EXPECT_FALSE(dis || ref);
  // Otherwise the feed wins and the difference is a disagreement.
  EXPECT_EQ(resolve_phase(Phase::kOpeningAuction, TradingPhase::kPreOpen, true, &dis, &ref), Phase::kOpeningAuction);
  EXPECT_TRUE(dis);
  EXPECT_EQ(resolve_phase(Phase::kContinuous, TradingPhase::kClosingCall, true, &dis, &ref), Phase::kContinuous);
  EXPECT_TRUE(dis);
}

TEST(PhaseResolverTest, ScheduleAndCountsPerStretch) {
  SymbolTable symbols;
  const SymbolId s = symbols.intern("600519.SH");
  const SymbolId x = symbols.intern("BINANCE:BTCUSDT");
  const SymbolId u = symbols.intern("AAPL");  // bare ticker, no default market: no schedule
  MarketCalendars cals;
  InputErrors errors;
  auto parsed = ExchangeCalendar::parse("cn-a", "date,name\n2023-01-23,Spring Festival\n", "cn-a.csv", errors);
  ASSERT_TRUE(parsed);
  cals.add(std::move(parsed).value());
  PhaseResolver r(symbols, &cals);
  EXPECT_EQ(r.scheduled(s, sh(9, 16)), TradingPhase::kOpeningCall);
  EXPECT_EQ(r.scheduled(s, sh(12, 0)), TradingPhase::kLunchBreak);
  EXPECT_EQ(r.scheduled(s, sh(13, 0)), TradingPhase::kContinuous);
  EXPECT_EQ(r.scheduled(s, sh(9, 16) + 86400 * kS * 3), TradingPhase::kClosed);  // Saturday
  EXPECT_EQ(r.scheduled(s, sh(10, 0) - 86400 * kS * 9), TradingPhase::kClosed);  // 2023-01-23 holiday
  EXPECT_EQ(r.scheduled(s, sh(10, 0)), TradingPhase::kContinuous);               // back to the day
  EXPECT_EQ(r.resolve(x, sh(3, 0), Phase::kUnknown), Phase::kContinuous);       // crypto: always
  EXPECT_EQ(r.resolve(u, sh(12, 0), Phase::kContinuous), Phase::kContinuous);   // no schedule: the feed
  EXPECT_EQ(r.counters().no_schedule, 1u);
  // OCALL a minute early: one disagreement for the whole stretch, however many events.
  for (int sec = 0; sec < 60; sec += 3) EXPECT_EQ(r.resolve(s, sh(9, 14, sec), Phase::kOpeningAuction), Phase::kOpeningAuction);
  EXPECT_EQ(r.counters().disagreements, 1u);
  EXPECT_EQ(r.resolve(s, sh(9, 15), Phase::kOpeningAuction), Phase::kOpeningAuction);
  EXPECT_EQ(r.resolve(s, sh(11, 31), Phase::kContinuous), Phase::kBreak);
  EXPECT_EQ(r.resolve(s, sh(12, 31), Phase::kContinuous), Phase::kBreak);
  EXPECT_EQ(r.counters().refinements, 1u);
  EXPECT_EQ(r.counters().disagreements, 1u);
}

TEST(PhaseResolverTest, BookTopCarriesTheResolvedPhase) {
  SymbolTable symbols;
  const SymbolId s = symbols.intern("600519.SH");
  MarketCalendars cals;
  InputErrors errors;
  cals.add(ExchangeCalendar::parse("cn-a", "date,name\n2023-01-23,Spring Festival\n", "cn-a.csv", errors).value());
  PhaseResolver r(symbols, &cals);
  BookSet books(symbols);
  books.set_phase_resolver(&r);
  Event st = Event::make(EventKind::kStatus);
  st.symbol = s;
  st.status.phase = Phase::kContinuous;
  st.exch_ts_ns = sh(11, 0);
  ASSERT_TRUE(books.apply(st, errors));
  EXPECT_EQ(books.top(s).phase, Phase::kContinuous);
  EXPECT_EQ(books.top(s).local_offset_s, 8 * 3600);
  EXPECT_EQ(books.top(s).schedule_market, uint8_t(MarketKind::kChinaA));
  // A trade at 12:00 (the feed still says continuous): the lunch break.
  Event t = Event::make(EventKind::kTrade);
  t.symbol = s;
  t.trade = TradeBody{180000, 100, Side::kBuy, 0, 0};
  t.exch_ts_ns = sh(12, 0);
  ASSERT_TRUE(books.apply(t, errors));
  EXPECT_EQ(books.top(s).phase, Phase::kBreak);
  t.exch_ts_ns = sh(13, 0, 1);
  ASSERT_TRUE(books.apply(t, errors));
  EXPECT_EQ(books.top(s).phase, Phase::kContinuous);
}

}  // namespace
}  // namespace ts
