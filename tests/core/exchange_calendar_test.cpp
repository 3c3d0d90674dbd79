#include <gtest/gtest.h>

#include <set>

#include "core/exchange_calendar.h"
#include "core/time_zone.h"

namespace ts {
namespace {

std::string calendar_path(const char* id) {
  return std::string(TICKSENTRY_SOURCE_DIR) + "/config/calendars/" + id + ".csv";
}

TEST(CivilTime, DaysAndWeekdays) {
  EXPECT_EQ(days_from_civil({1970, 1, 1}), 0);
  EXPECT_EQ(days_from_civil({2000, 3, 1}), 11017);
  EXPECT_EQ(civil_from_days(-1), (CivilDate{1969, 12, 31}));
  EXPECT_EQ(weekday_of(days_from_civil({2026, 12, 2})), 3u);  // a Wednesday
  EXPECT_EQ(civil_from_days(nth_weekday(2026, 3, 0, 2)), (CivilDate{2026, 3, 8}));
  EXPECT_EQ(civil_from_days(nth_weekday(2026, 11, 0, 1)), (CivilDate{2026, 11, 1}));
  for (int64_t d = days_from_civil({2019, 1, 1}); d < days_from_civil({2029, 1, 1}); ++d) {
    ASSERT_EQ(days_from_civil(civil_from_days(d)), d);
  }
  EXPECT_EQ(floor_div(-1, kNsPerSecond), -1);
  EXPECT_EQ(to_string(CivilDate{2026, 2, 17}), "2026-02-17");
  for (const char* bad : {"2026-02-29", "2026-13-01", "2026-00-10", "2026/01/01", "26-01-01",
                          "2026-1-1", "2026-01-01 "}) {
    EXPECT_FALSE(parse_civil_date(bad)) << bad;
  }
  EXPECT_TRUE(parse_civil_date("2024-02-29"));
}

TEST(ExchangeCalendar, BadRowsAreCountedAndNamed) {
  const std::string text =
      "# comment\n"
      "date,name\n"            // 2
      "2026-01-01,New Year\n"  // 3
      "2026-02-30,Nope\n"      // 4 no such date
      "2026/02/17,Slashes\n"   // 5
      "2026-01-01,Again\n"     // 6 duplicate
      "2026-02-17\n"           // 7 no name column
      "2026-05-01,Labour, Day\n"  // 8 comma in the name
      "2026-10-01,National Day\n";
  InputErrors errors;
  errors.set_quiet(true);
  LoadReport report;
  auto cal = ExchangeCalendar::parse("x", text, "x.csv", errors, &report);
  ASSERT_TRUE(cal) << cal.status().to_string();
  EXPECT_EQ(cal.value().size(), 2u);
  EXPECT_EQ(report.rows_read, 2u);
  ASSERT_EQ(report.bad_rows.size(), 5u);
  const uint64_t lines[] = {4, 5, 6, 7, 8};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(report.bad_rows[i].line, lines[i]);
  EXPECT_NE(report.bad_rows[2].message.find("listed twice (first at line 3)"), std::string::npos);
  EXPECT_EQ(errors.total(), 5u);
  EXPECT_EQ(errors.count(InputError::kWrongColumnCount), 2u);
  EXPECT_TRUE(cal.value().is_holiday(days_from_civil({2026, 10, 1})));

  EXPECT_FALSE(ExchangeCalendar::parse("x", "date,name\n2026-02-30,x\n", "x.csv", errors));
  EXPECT_FALSE(ExchangeCalendar::parse("x", "day,name\n2026-01-01,x\n", "x.csv", errors));
  EXPECT_FALSE(ExchangeCalendar::parse("x", "", "x.csv", errors));
  EXPECT_FALSE(ExchangeCalendar::load("x", "/nonexistent.csv", errors));
}

// The NYSE rules, computed: the shipped us.csv must list exactly these (plus special closures).
std::set<int64_t> nyse_rule_holidays(int32_t year) {
  std::set<int64_t> out;
  auto observed = [&](CivilDate d, bool skip_saturday) {
    int64_t day = days_from_civil(d);
    const uint32_t wd = weekday_of(day);
    if (wd == 6) {
      if (skip_saturday) return;
      day -= 1;
    } else if (wd == 0) {
      day += 1;
    }
    out.insert(day);
  };
  observed({year, 1, 1}, /*skip_saturday=*/true);
  out.insert(nth_weekday(year, 1, 1, 3));   // MLK
  out.insert(nth_weekday(year, 2, 1, 3));   // Washington's Birthday
  {                                          // Good Friday: Easter (anonymous Gregorian) - 2
    const int a = year % 19, b = year / 100, c = year % 100, d = b / 4, e = b % 4;
    const int f = (b + 8) / 25, g = (b - f + 1) / 3, h = (19 * a + b - d - g + 15) % 30;
    const int i = c / 4, k = c % 4, l = (32 + 2 * e + 2 * i - h - k) % 7;
    const int m = (a + 11 * h + 22 * l) / 451;
    const int month = (h + l - 7 * m + 114) / 31, day = (h + l - 7 * m + 114) % 31 + 1;
    out.insert(days_from_civil({year, uint32_t(month), uint32_t(day)}) - 2);
  }
  out.insert(nth_weekday(year, 6, 1, 1) - 7);  // last Monday of May = first Monday of June - 7
  if (year >= 2022) observed({year, 6, 19}, false);
  observed({year, 7, 4}, false);
  out.insert(nth_weekday(year, 9, 1, 1));   // Labor Day
  out.insert(nth_weekday(year, 11, 4, 4));  // Thanksgiving
  observed({year, 12, 25}, false);
  return out;
}

TEST(ExchangeCalendar, ShippedUsCalendarMatchesTheNyseRules) {
  InputErrors errors;
  auto cal = ExchangeCalendar::load("us", calendar_path("us"), errors);
  ASSERT_TRUE(cal) << cal.status().to_string();
  EXPECT_EQ(errors.total(), 0u);
  std::set<int64_t> want;
  for (int32_t y = 2020; y <= 2027; ++y) {
    for (int64_t d : nyse_rule_holidays(y)) want.insert(d);
  }
  want.insert(days_from_civil({2025, 1, 9}));  // National Day of Mourning (President Carter)
  for (int64_t d : want) {
    EXPECT_TRUE(cal.value().is_holiday(d)) << to_string(civil_from_days(d)) << " missing";
  }
  EXPECT_EQ(cal.value().size(), want.size());
  EXPECT_FALSE(cal.value().is_holiday(days_from_civil({2021, 12, 31})));  // 2022-01-01 a Sat
}

TEST(ExchangeCalendar, ShippedAShareCalendarHasOnlyWeekdays) {
  InputErrors errors;
  auto cal = ExchangeCalendar::load("cn-a", calendar_path("cn-a"), errors);
  ASSERT_TRUE(cal) << cal.status().to_string();
  EXPECT_EQ(errors.total(), 0u);
  size_t n = 0;
  for (int64_t d = days_from_civil({2020, 1, 1}); d <= days_from_civil({2027, 12, 31}); ++d) {
    if (!cal.value().is_holiday(d)) continue;
    ++n;
    const uint32_t wd = weekday_of(d);
    EXPECT_TRUE(wd != 0 && wd != 6) << to_string(civil_from_days(d)) << " is a weekend";
  }
  EXPECT_EQ(n, cal.value().size());
  // 17-20 closed weekdays a year.
  EXPECT_GE(n, 8u * 17);
  EXPECT_LE(n, 8u * 20);
  EXPECT_TRUE(cal.value().is_holiday(days_from_civil({2020, 1, 31})));  // COVID extension
  EXPECT_FALSE(cal.value().is_holiday(days_from_civil({2020, 2, 3})));  // reopened
}

// New York's DST in the years below, as zdump -v America/New_York lists it: EDT from the
// second Sunday of March 07:00 UTC to the first Sunday of November 06:00 UTC.
struct NewYorkDst {
  int32_t year;
  uint32_t march_day, november_day;
};
constexpr NewYorkDst kNewYorkDst[] = {{2012, 11, 4}, {2020, 8, 1},  {2021, 14, 7},
                                      {2022, 13, 6}, {2023, 12, 5}, {2024, 10, 3},
                                      {2025, 9, 2},  {2026, 8, 1},  {2027, 14, 7}};

int32_t known_offset_s(const std::string& name, int64_t utc_s) {
  if (name == "Asia/Shanghai") return 8 * 3600;  // CST, no DST since 1991
  if (name != "America/New_York") return 0;      // UTC
  const int32_t year = civil_from_days(floor_div(utc_s, kSecondsPerDay)).year;
  for (const NewYorkDst& y : kNewYorkDst) {
    if (y.year != year) continue;
    const int64_t start = days_from_civil({year, 3, y.march_day}) * kSecondsPerDay + 7 * 3600;
    const int64_t end = days_from_civil({year, 11, y.november_day}) * kSecondsPerDay + 6 * 3600;
    return (utc_s >= start && utc_s < end) ? -4 * 3600 : -5 * 3600;
  }
  ADD_FAILURE() << "no DST dates for " << year;
  return 0;
}

TEST(TimeZone, MarketZonesHaveTheKnownOffsets) {
  for (const char* name : {"Asia/Shanghai", "America/New_York", "UTC"}) {
    auto tz = TimeZone::load(name);
    ASSERT_TRUE(tz) << tz.status().to_string();
    // Every hour of 2012 and 2020-2027, and each second around the switches.
    const int64_t first = days_from_civil({2020, 1, 1}) * kSecondsPerDay;
    const int64_t last = days_from_civil({2028, 1, 1}) * kSecondsPerDay;
    for (int64_t t = first; t < last; t += 3600) {
      ASSERT_EQ(tz.value()->utc_offset_s(t), known_offset_s(name, t)) << name << " " << t;
    }
    const int64_t y2012 = days_from_civil({2012, 1, 1}) * kSecondsPerDay;
    for (int64_t t = y2012; t < y2012 + 366 * kSecondsPerDay; t += 3600) {
      ASSERT_EQ(tz.value()->utc_offset_s(t), known_offset_s(name, t)) << name << " " << t;
    }
    for (const NewYorkDst& y : kNewYorkDst) {
      for (const int64_t edge : {days_from_civil({y.year, 3, y.march_day}) * kSecondsPerDay + 7 * 3600,
                                 days_from_civil({y.year, 11, y.november_day}) * kSecondsPerDay + 6 * 3600}) {
        for (int64_t t = edge - 2; t <= edge + 1; ++t) {
          ASSERT_EQ(tz.value()->utc_offset_s(t), known_offset_s(name, t)) << name << " " << t;
        }
      }
    }
  }
  auto shanghai = TimeZone::load("Asia/Shanghai").value();
  EXPECT_EQ(shanghai->local_seconds(-1), 8 * 3600 - 1);  // floors the seconds, then adds +8 h
  EXPECT_EQ(shanghai->local_seconds(days_from_civil({2026, 12, 2}) * kSecondsPerDay * kNsPerSecond + 5),
            days_from_civil({2026, 12, 2}) * kSecondsPerDay + 8 * 3600);
  EXPECT_FALSE(TimeZone::load("Mars/Olympus_Mons"));
  auto etc_utc = TimeZone::load("Etc/UTC");
  ASSERT_TRUE(etc_utc) << etc_utc.status().to_string();
  EXPECT_EQ(etc_utc.value()->utc_offset_s(0), 0);
  auto london = TimeZone::load("Europe/London");  // not one of the markets' zones
  ASSERT_TRUE(london) << london.status().to_string();
  EXPECT_EQ(london.value()->utc_offset_s(days_from_civil({2026, 7, 1}) * kSecondsPerDay), 3600);
}

}  // namespace
}  // namespace ts
