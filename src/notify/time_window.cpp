#include "notify/time_window.h"

#include <algorithm>
#include <cstdio>

#include "core/clock.h"

namespace ts::notify {

namespace {
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
}  // namespace

bool TimeWindow::contains(int64_t unix_ns) const {
  const int64_t unix_s = floor_div(unix_ns, kNsPerSec);
  const int64_t local_s = unix_s + (zone ? int64_t(zone->utc_offset_s(unix_s)) : int64_t(utc_offset_minutes) * 60);
  const int64_t day = floor_div(local_s, 86400);
  const int minute = int((local_s - day * 86400) / 60);
  const int weekday = int(((day % 7) + 7 + 3) % 7);  // 1970-01-01 was a Thursday (Monday = 0)
  if (!(weekday_mask & (1u << weekday))) return false;
  if (std::binary_search(exclude_days.begin(), exclude_days.end(), day)) return false;
  if (times.empty()) return true;
  return std::any_of(times.begin(), times.end(),
                     [&](const TimeRange& r) { return minute >= r.start_min && minute < r.end_min; });
}

Result<uint8_t> parse_weekdays(const std::vector<std::string>& days) {
  static const char* kNames[7] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  if (days.empty()) return uint8_t(0x7f);
  uint8_t mask = 0;
  for (const auto& d : days) {
    const auto* it = std::find_if(std::begin(kNames), std::end(kNames), [&](const char* n) { return d == n; });
    if (it == std::end(kNames)) {
      return Status(StatusCode::kInvalidArgument, "weekday '" + d + "': expected one of mon tue wed thu fri sat sun");
    }
    mask |= uint8_t(1u << (it - std::begin(kNames)));
  }
  return mask;
}

Result<TimeRange> parse_time_range(const std::string& text) {
  int h1 = -1, m1 = -1, h2 = -1, m2 = -1;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%2d:%2d-%2d:%2d%c", &h1, &m1, &h2, &m2, &tail) != 4 || text.size() != 11 ||
      h1 < 0 || h1 > 24 || m1 < 0 || m1 > 59 || h2 < 0 || h2 > 24 || m2 < 0 || m2 > 59) {
    return Status(StatusCode::kInvalidArgument, "time range '" + text + "': expected HH:MM-HH:MM (e.g. 09:30-11:30)");
  }
  TimeRange r{h1 * 60 + m1, h2 * 60 + m2};
  if (r.start_min >= r.end_min || r.end_min > 1440) {
    return Status(StatusCode::kInvalidArgument, "time range '" + text + "': start must be before end, within one day");
  }
  return r;
}

Result<int64_t> parse_date_days(const std::string& text) {
  int y = 0, m = 0, d = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || text.size() != 10 || m < 1 || m > 12 ||
      d < 1 || d > 31) {
    return Status(StatusCode::kInvalidArgument, "date '" + text + "': expected YYYY-MM-DD");
  }
  return days_from_civil(y, unsigned(m), unsigned(d));
}

}  // namespace ts::notify
