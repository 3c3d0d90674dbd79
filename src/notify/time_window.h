#pragma once
// Named time windows (trading sessions, lunch breaks, holidays) that routes use to mute or to
// activate themselves: a route with active_time_windows notifies only inside one of them; a
// route with mute_time_windows notifies only outside all of them.
//
// A window is evaluated in local time: an IANA time zone (`zone`, e.g. America/New_York: the
// offset in effect at that instant, so DST is followed), else a fixed UTC offset (+8 for Shanghai):
//   weekdays       subset of mon..sun; empty = every day
//   times          "HH:MM-HH:MM" ranges, start inclusive, end exclusive; empty = all day
//   exclude_dates  "YYYY-MM-DD" days (holidays) on which the window is never open
// A time is inside the window when its local day is a listed weekday, not excluded, and its
// local time of day falls in one of the ranges. Across a DST change this is wall-clock time:
// "09:30-16:00" New York opens at 13:30 UTC in summer and 14:30 UTC in winter; a range over the
// hour skipped in spring (02:00-03:00 local does not exist) is open for the real time between
// its ends ("01:30-03:30": one hour that day); a range over the hour repeated in autumn is open
// both times that hour comes round ("01:00-02:00": two hours that day).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time_zone.h"

namespace ts::notify {

struct TimeRange {
  int start_min = 0;   // minutes after local midnight, inclusive
  int end_min = 1440;  // exclusive
};

struct TimeWindow {
  std::string name;
  int utc_offset_minutes = 0;            // used when zone is null
  std::shared_ptr<const TimeZone> zone;  // IANA zone; null: the fixed offset
  uint8_t weekday_mask = 0x7f;           // bit 0 = Monday ... bit 6 = Sunday
  std::vector<TimeRange> times;          // empty: all day
  std::vector<int64_t> exclude_days;     // local days since 1970-01-01, sorted

  bool contains(int64_t unix_ns) const;
};

// Builders with clear errors ("times[1] '9:3-11:30': expected HH:MM-HH:MM").
Result<uint8_t> parse_weekdays(const std::vector<std::string>& days);
Result<TimeRange> parse_time_range(const std::string& text);
Result<int64_t> parse_date_days(const std::string& text);  // "2026-10-01" → days since epoch

}  // namespace ts::notify
