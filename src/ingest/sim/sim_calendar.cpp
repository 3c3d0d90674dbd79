#include "ingest/sim/sim_calendar.h"

namespace ts::sim {

namespace {
constexpr int64_t kNsPerDay = 86400 * kNsPerSec;
// 0 = Sunday ... 6 = Saturday, for days since 1970-01-01 (a Thursday).
int weekday(int64_t days) { return int(((days % 7) + 11) % 7); }
bool is_weekend(int64_t days) { const int w = weekday(days); return w == 0 || w == 6; }
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
}  // namespace

SimCalendar::SimCalendar(int64_t start_exch_ns) {
  const int64_t local = start_exch_ns + kUtcOffsetHours * 3600 * kNsPerSec;
  int64_t days = floor_div(local, kNsPerDay);
  const int64_t tod = local - days * kNsPerDay;
  int64_t offset = 0;
  if (tod < kOpenNs) offset = 0;
  else if (tod < kLunchNs) offset = tod - kOpenNs;
  else if (tod < kAfternoonOpenNs) offset = kMorningNs;
  else if (tod < kContinuousEndNs) offset = kMorningNs + (tod - kAfternoonOpenNs);
  else { offset = 0; ++days; }
  if (is_weekend(days)) offset = 0;
  while (is_weekend(days)) ++days;
  first_day_ = days;
  start_offset_ns_ = offset;
  set_day_for(offset);
}

int64_t SimCalendar::midnight_of_day(int64_t d) const {
  int64_t days = first_day_;
  for (int64_t k = 0; k < d; ++k) {
    ++days;
    while (is_weekend(days)) ++days;
  }
  return days * kNsPerDay - kUtcOffsetHours * 3600 * kNsPerSec;
}

void SimCalendar::set_day_for(int64_t t) {
  const int64_t d = t / kTradingDayNs;
  if (d == day_ && day_midnight_ns_ != 0) return;
  day_ = d;
  day_midnight_ns_ = midnight_of_day(d);
}

}  // namespace ts::sim
