#pragma once
// Trading-time clock of the simulator. The simulator runs on "trading time": ns of continuous
// trading since 09:30 of its first day, so the lunch break and nights take no simulated time.
// SimCalendar maps trading time to exchange time (09:30-11:30 and 13:00-14:57 Asia/Shanghai,
// Monday to Friday) and back, and gives the session boundaries at which phases change.
#include <cstdint>

#include "core/clock.h"

namespace ts::sim {

constexpr int64_t kMorningNs = 2 * 3600 * kNsPerSec;               // 09:30-11:30
constexpr int64_t kAfternoonNs = (3600 + 57 * 60) * kNsPerSec;     // 13:00-14:57
constexpr int64_t kTradingDayNs = kMorningNs + kAfternoonNs;       // 14,220 s
constexpr int64_t kUtcOffsetHours = 8;

class SimCalendar {
 public:
  // Day 0 is the first weekday on or after the local date of `start_exch_ns`; start_offset()
  // is the trading time of `start_exch_ns` (moved forward into continuous trading).
  explicit SimCalendar(int64_t start_exch_ns);
  int64_t start_offset_ns() const { return start_offset_ns_; }

  // Exchange time of trading time `t`. Cheap when `t` is in the current day (see set_day).
  int64_t exch_ns(int64_t t) const {
    const int64_t r = t - day_ * kTradingDayNs;
    return r < kMorningNs ? day_midnight_ns_ + kOpenNs + r : day_midnight_ns_ + kAfternoonOpenNs + (r - kMorningNs);
  }
  // Moves the current day to the one holding trading time `t`.
  void set_day_for(int64_t t);
  int64_t day() const { return day_; }
  int64_t day_midnight_ns() const { return day_midnight_ns_; }
  // The next session boundary strictly after trading time `t`: lunch (day*D + morning) or the
  // end of the day ((day+1)*D).
  static int64_t next_boundary(int64_t t) {
    const int64_t d = t / kTradingDayNs;
    const int64_t lunch = d * kTradingDayNs + kMorningNs;
    return t < lunch ? lunch : (d + 1) * kTradingDayNs;
  }
  static bool is_lunch_boundary(int64_t b) { return b % kTradingDayNs == kMorningNs; }
  // Position within the trading day, 0 at the open and 1 at 14:57.
  static double day_fraction(int64_t t) { return double(t % kTradingDayNs) / double(kTradingDayNs); }
  // Local midnight (exchange time) of trading day `d`.
  int64_t midnight_of_day(int64_t d) const;

  static constexpr int64_t kOpenNs = (9 * 3600 + 30 * 60) * kNsPerSec;
  static constexpr int64_t kLunchNs = (11 * 3600 + 30 * 60) * kNsPerSec;
  static constexpr int64_t kAfternoonOpenNs = 13 * 3600 * kNsPerSec;
  static constexpr int64_t kContinuousEndNs = (14 * 3600 + 57 * 60) * kNsPerSec;
  static constexpr int64_t kCloseNs = 15 * 3600 * kNsPerSec;

 private:
  int64_t first_day_ = 0;  // days since epoch (local) of day 0
  int64_t start_offset_ns_ = 0;
  int64_t day_ = 0;
  int64_t day_midnight_ns_ = 0;
};

}  // namespace ts::sim
