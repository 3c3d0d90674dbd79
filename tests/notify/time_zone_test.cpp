// IANA time zones and DST-correct time windows: offsets against zdump's 2026 transitions and
// against glibc's localtime_r over whole years; windows on the 2026 spring-forward and fall-back
// days (sessions, the skipped and the repeated hour), holidays on local days; config errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "core/clock.h"
#include "core/time_zone.h"
#include "notify/time_window.h"
#include "notify_test_util.h"

namespace ts::notify {
namespace {

int64_t utc(int y, unsigned m, unsigned d, int hh, int mm = 0, int ss = 0) {
  return days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss;
}

std::shared_ptr<const TimeZone> zone(const std::string& name) {
  auto z = TimeZone::load(name);
  EXPECT_TRUE(z.is_ok()) << z.status().to_string();
  return z.value();
}

TEST(NotifyTimeZone, OffsetsMatchZdumpAcross2026Transitions) {
  auto ny = zone("America/New_York");
  // zdump -v -c 2026,2027 America/New_York
  EXPECT_EQ(ny->utc_offset_s(utc(2026, 3, 8, 6, 59, 59)), -18000);
  EXPECT_EQ(ny->utc_offset_s(utc(2026, 3, 8, 7)), -14400);
  EXPECT_EQ(ny->utc_offset_s(utc(2026, 11, 1, 5, 59, 59)), -14400);
  EXPECT_EQ(ny->utc_offset_s(utc(2026, 11, 1, 6)), -18000);
  auto sh = zone("Asia/Shanghai");
  EXPECT_EQ(sh->utc_offset_s(utc(2026, 1, 1, 0)), 28800);
  EXPECT_EQ(sh->utc_offset_s(utc(2026, 7, 1, 0)), 28800);
  auto lon = zone("Europe/London");
  EXPECT_EQ(lon->utc_offset_s(utc(2026, 3, 29, 0, 59, 59)), 0);
  EXPECT_EQ(lon->utc_offset_s(utc(2026, 3, 29, 1)), 3600);
  EXPECT_EQ(lon->utc_offset_s(utc(2026, 10, 25, 1)), 0);
  auto syd = zone("Australia/Sydney");  // southern hemisphere: DST over the new year
  EXPECT_EQ(syd->utc_offset_s(utc(2026, 1, 15, 0)), 39600);
  EXPECT_EQ(syd->utc_offset_s(utc(2026, 4, 4, 16)), 36000);
  EXPECT_EQ(syd->utc_offset_s(utc(2026, 10, 3, 16)), 39600);
  // Past the file's last transition (2037) the POSIX rule decides: zdump -c 2050,2051.
  EXPECT_EQ(ny->utc_offset_s(utc(2050, 3, 13, 6, 59, 59)), -18000);
  EXPECT_EQ(ny->utc_offset_s(utc(2050, 3, 13, 7)), -14400);
  EXPECT_EQ(ny->utc_offset_s(utc(2050, 11, 6, 6)), -18000);
}

TEST(NotifyTimeZone, AgreesWithGlibcEveryHalfHourOverYears) {
  const char* old_tz = std::getenv("TZ");
  const std::string saved = old_tz ? old_tz : "";
  for (const char* name : {"America/New_York", "Asia/Shanghai", "Europe/London", "Australia/Sydney", "America/Sao_Paulo",
                           "Pacific/Chatham", "Asia/Kolkata", "Europe/Berlin"}) {
    auto z = zone(name);
    setenv("TZ", name, 1);
    tzset();
    int mismatches = 0;
    for (int64_t t = utc(2024, 1, 1, 0); t < utc(2028, 1, 1, 0); t += 1800) {
      std::tm tm{};
      const time_t tt = time_t(t);
      localtime_r(&tt, &tm);
      if (tm.tm_gmtoff != z->utc_offset_s(t) && ++mismatches < 3) ADD_FAILURE() << name << " at " << t;
    }
    for (int64_t t = utc(2045, 1, 1, 0); t < utc(2046, 1, 1, 0); t += 1800) {  // the rule's years
      std::tm tm{};
      const time_t tt = time_t(t);
      localtime_r(&tt, &tm);
      if (tm.tm_gmtoff != z->utc_offset_s(t) && ++mismatches < 3) ADD_FAILURE() << name << " at " << t;
    }
    EXPECT_EQ(mismatches, 0) << name;
  }
  if (old_tz) setenv("TZ", saved.c_str(), 1);
  else unsetenv("TZ");
  tzset();
}

TEST(NotifyTimeZone, PosixRules) {
  auto us = PosixTzRule::parse("EST5EDT,M3.2.0,M11.1.0").value();
  EXPECT_EQ(us.std_offset_s, -18000);
  EXPECT_EQ(us.dst_offset_s, -14400);
  EXPECT_EQ(us.utc_offset_s(utc(2026, 3, 8, 7)), -14400);
  EXPECT_EQ(us.utc_offset_s(utc(2026, 3, 8, 6, 59, 59)), -18000);
  auto ist = PosixTzRule::parse("<+0530>-5:30").value();
  EXPECT_EQ(ist.utc_offset_s(utc(2026, 6, 1, 0)), 19800);
  auto eu = PosixTzRule::parse("CET-1CEST,M3.5.0,M10.5.0/3").value();  // last Sunday of March 02:00
  EXPECT_EQ(eu.utc_offset_s(utc(2026, 3, 29, 0, 59, 59)), 3600);
  EXPECT_EQ(eu.utc_offset_s(utc(2026, 3, 29, 1)), 7200);
  EXPECT_EQ(eu.utc_offset_s(utc(2026, 10, 25, 1)), 3600);
  EXPECT_FALSE(PosixTzRule::parse("E5").is_ok());
  EXPECT_FALSE(PosixTzRule::parse("EST5EDT,M13.2.0,M11.1.0").is_ok());
  EXPECT_NE(PosixTzRule::parse("EST").status().message().find("UTC offset"), std::string::npos);
}

TEST(NotifyTimeZone, BadNamesAreClearErrors) {
  EXPECT_NE(TimeZone::load("America/New_Yrok").status().message().find("unknown time zone 'America/New_Yrok'"),
            std::string::npos);
  EXPECT_NE(TimeZone::load("../../etc/passwd").status().message().find("expected an IANA zone name"), std::string::npos);
  EXPECT_NE(TimeZone::load("/etc/localtime").status().message().find("expected an IANA zone name"), std::string::npos);
  EXPECT_FALSE(TimeZone::load("").is_ok());
}

// Minutes in [from_s, to_s) at which `w` is open.
int open_minutes(const TimeWindow& w, int64_t from_s, int64_t to_s) {
  int n = 0;
  for (int64_t t = from_s; t < to_s; t += 60) n += w.contains(t * kNsPerSec);
  return n;
}

TimeWindow ny_window(const std::string& times, std::vector<std::string> weekdays = {}) {
  TimeWindow w;
  w.name = "ny";
  w.zone = zone("America/New_York");
  w.weekday_mask = parse_weekdays(weekdays).value();
  w.times = {parse_time_range(times).value()};
  return w;
}

TEST(NotifyTimeWindowDst, NewYorkSessionFollowsDst) {
  const TimeWindow w = ny_window("09:30-16:00", {"mon", "tue", "wed", "thu", "fri"});
  auto at = [](int y, unsigned m, unsigned d, int hh, int mm) { return utc(y, m, d, hh, mm) * kNsPerSec; };
  // Friday before spring-forward (EST, UTC−5): the session opens at 14:30 UTC.
  EXPECT_FALSE(w.contains(at(2026, 3, 6, 13, 30)));
  EXPECT_TRUE(w.contains(at(2026, 3, 6, 14, 30)));
  EXPECT_TRUE(w.contains(at(2026, 3, 6, 20, 59)));
  EXPECT_FALSE(w.contains(at(2026, 3, 6, 21, 0)));
  // Monday after (EDT, UTC−4): 13:30 UTC.
  EXPECT_TRUE(w.contains(at(2026, 3, 9, 13, 30)));
  EXPECT_FALSE(w.contains(at(2026, 3, 9, 13, 29)));
  EXPECT_FALSE(w.contains(at(2026, 3, 9, 20, 0)));
  // Around fall-back: Friday 30 Oct EDT, Monday 2 Nov EST.
  EXPECT_TRUE(w.contains(at(2026, 10, 30, 13, 30)));
  EXPECT_FALSE(w.contains(at(2026, 11, 2, 13, 30)));
  EXPECT_TRUE(w.contains(at(2026, 11, 2, 14, 30)));
  // The fixed offset this replaces is an hour wrong for half the year.
  TimeWindow fixed = w;
  fixed.zone = nullptr;
  fixed.utc_offset_minutes = -5 * 60;
  EXPECT_FALSE(fixed.contains(at(2026, 3, 9, 13, 30)));
  // A whole session is 390 minutes on either side of each change.
  for (auto [y, m, d] : {std::tuple{2026, 3u, 6u}, {2026, 3u, 9u}, {2026, 10u, 30u}, {2026, 11u, 2u}}) {
    EXPECT_EQ(open_minutes(w, utc(y, m, d, 0), utc(y, m, d, 0) + 36 * 3600), 390) << y << "-" << m << "-" << d;
  }
}

TEST(NotifyTimeWindowDst, SkippedAndRepeatedHours) {
  // 8 March 2026: clocks jump 02:00 EST → 03:00 EDT (07:00 UTC).
  // Local 8 March runs 05:00 UTC to 04:00 UTC the next day (23 h).
  const int64_t mar8 = utc(2026, 3, 8, 5), mar9 = utc(2026, 3, 9, 4);
  const TimeWindow across_gap = ny_window("01:30-03:30");
  EXPECT_EQ(open_minutes(across_gap, mar8, mar9), 60);                    // 01:30 EST .. 03:30 EDT is one real hour
  EXPECT_TRUE(across_gap.contains(utc(2026, 3, 8, 6, 30) * kNsPerSec));   // 01:30 EST
  EXPECT_TRUE(across_gap.contains(utc(2026, 3, 8, 7, 29) * kNsPerSec));   // 03:29 EDT
  EXPECT_FALSE(across_gap.contains(utc(2026, 3, 8, 7, 30) * kNsPerSec));  // 03:30 EDT
  EXPECT_EQ(open_minutes(ny_window("02:00-03:00"), mar8, mar9), 0);       // the hour that never happens
  EXPECT_EQ(open_minutes(ny_window("09:00-10:00"), mar8, mar9), 60);
  // 1 November 2026: 02:00 EDT → 01:00 EST (06:00 UTC); 01:00-02:00 local happens twice.
  const int64_t nov1 = utc(2026, 11, 1, 4), nov2 = utc(2026, 11, 2, 5);  // local 1 November: 25 h
  const TimeWindow repeated = ny_window("01:00-02:00");
  EXPECT_EQ(open_minutes(repeated, nov1, nov2), 120);
  EXPECT_TRUE(repeated.contains(utc(2026, 11, 1, 5, 0) * kNsPerSec));   // 01:00 EDT
  EXPECT_TRUE(repeated.contains(utc(2026, 11, 1, 6, 59) * kNsPerSec));  // 01:59 EST
  EXPECT_FALSE(repeated.contains(utc(2026, 11, 1, 7, 0) * kNsPerSec));  // 02:00 EST
  // That Sunday lasts 25 hours, the spring one 23.
  TimeWindow sundays = ny_window("00:00-24:00", {"sun"});
  EXPECT_EQ(open_minutes(sundays, utc(2026, 10, 31, 0), utc(2026, 11, 3, 0)), 25 * 60);
  EXPECT_EQ(open_minutes(sundays, utc(2026, 3, 7, 0), utc(2026, 3, 10, 0)), 23 * 60);
}

TEST(NotifyTimeWindowDst, HolidaysAreLocalDays) {
  // Thanksgiving 2026 in New York: the whole local day, which ends at 05:00 UTC on the 27th.
  TimeWindow ny;
  ny.zone = zone("America/New_York");
  ny.exclude_days = {parse_date_days("2026-11-26").value()};
  EXPECT_FALSE(ny.contains(utc(2026, 11, 26, 15) * kNsPerSec));
  EXPECT_FALSE(ny.contains(utc(2026, 11, 27, 4, 59) * kNsPerSec));  // 23:59 EST on the 26th
  EXPECT_TRUE(ny.contains(utc(2026, 11, 27, 5, 0) * kNsPerSec));
  EXPECT_TRUE(ny.contains(utc(2026, 11, 26, 4, 59) * kNsPerSec));  // 23:59 on the 25th
  // China's National Day in Shanghai starts at 16:00 UTC the day before.
  TimeWindow sh;
  sh.zone = zone("Asia/Shanghai");
  sh.times = {parse_time_range("09:30-11:30").value(), parse_time_range("13:00-15:00").value()};
  sh.exclude_days = {parse_date_days("2026-10-01").value()};
  EXPECT_TRUE(sh.contains(utc(2026, 9, 30, 1, 30) * kNsPerSec));   // 09:30 CST on the 30th
  EXPECT_FALSE(sh.contains(utc(2026, 10, 1, 1, 30) * kNsPerSec));  // holiday
  EXPECT_TRUE(sh.contains(utc(2026, 10, 2, 1, 30) * kNsPerSec));
  EXPECT_FALSE(sh.contains(utc(2026, 10, 2, 4, 0) * kNsPerSec));  // 12:00 lunch
}

TEST(NotifyTimeWindowDst, ConfigNamesAZone) {
  const std::string head = R"([notify]
[[notify.receivers]]
name = "desk"
type = "slack"
url = "http://127.0.0.1:1/slack"
[notify.route]
receiver = "desk"
active_time_windows = ["nyse"]
[[notify.time_windows]]
name = "nyse"
weekdays = ["mon", "tue", "wed", "thu", "fri"]
times = ["09:30-16:00"]
exclude_dates = ["2026-11-26"]
)";
  auto c = testing::notify_config(head + "time_zone = \"America/New_York\"\n");
  const Route& r = c.route;
  EXPECT_TRUE(r.active_at(utc(2026, 3, 9, 13, 30) * kNsPerSec));
  EXPECT_FALSE(r.active_at(utc(2026, 3, 6, 13, 30) * kNsPerSec));
  EXPECT_FALSE(r.active_at(utc(2026, 11, 26, 15, 0) * kNsPerSec));
  auto error_of = [&](const std::string& extra) -> std::string {
    try {
      (void)testing::notify_config(head + extra);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("time_zone = \"America/New_Yrok\"\n")
                .find("notify.time_windows[0].time_zone: unknown time zone 'America/New_Yrok'"),
            std::string::npos)
      << error_of("time_zone = \"America/New_Yrok\"\n");
  EXPECT_NE(error_of("time_zone = \"America/New_York\"\nutc_offset_hours = -5\n").find("not both"), std::string::npos);
  EXPECT_NE(error_of("time_zone = \"EST5EDT,M3.2.0\"\n").find("expected an IANA zone name"), std::string::npos);
}

}  // namespace
}  // namespace ts::notify
