#pragma once
// Named time windows (trading sessions, lunch breaks, holidays) that routes use to mute or to
// activate themselves: a route with active_time_windows notifies only inside one of them; a
// route with mute_time_windows notifies only outside all of them.
//
// A window is evaluated in a fixed UTC offset (exchange-local time: +8 for Shanghai):
//   weekdays       subset of mon..sun; empty = every day
//   times          "HH:MM-HH:MM" ranges, start inclusive, end exclusive; empty = all day
//   exclude_dates  "YYYY-MM-DD" days (holidays) on which the window is never open
// A time is inside the window when its local day is a listed weekday, not excluded, and its
// local time of day falls in one of the ranges.
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace ts::notify {

struct TimeRange {
  int start_min = 0;    // minutes after local midnight, inclusive
  int end_min = 1440;   // exclusive
};

struct TimeWindow {
  std::string name;
  int utc_offset_minutes = 0;
  uint8_t weekday_mask = 0x7f;          // bit 0 = Monday ... bit 6 = Sunday
  std::vector<TimeRange> times;         // empty: all day
  std::vector<int64_t> exclude_days;    // local days since 1970-01-01, sorted

  bool contains(int64_t unix_ns) const;
};

// Builders with clear errors ("times[1] '9:3-11:30': expected HH:MM-HH:MM").
Result<uint8_t> parse_weekdays(const std::vector<std::string>& days);
Result<TimeRange> parse_time_range(const std::string& text);
Result<int64_t> parse_date_days(const std::string& text);  // "2026-10-01" → days since epoch

}  // namespace ts::notify
