#pragma once
// Civil (proleptic Gregorian) dates and their day numbers, without a time zone: the arithmetic
// under the exchange calendars and time zones. Days are counted from 1970-01-01 (day 0);
// algorithms after H. Hinnant, "chrono-Compatible Low-Level Date Algorithms". Pure functions.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ts {

struct CivilDate {
  int32_t year = 1970;
  uint32_t month = 1;  // 1..12
  uint32_t day = 1;    // 1..31
  friend bool operator==(const CivilDate&, const CivilDate&) = default;
};

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

int64_t days_from_civil(const CivilDate& d);
CivilDate civil_from_days(int64_t days);
// 0 = Sunday ... 6 = Saturday.
uint32_t weekday_of(int64_t days);
// The n-th (1-based) `weekday` of a month: the 2nd Sunday of March 2026 → 2026-03-08.
int64_t nth_weekday(int32_t year, uint32_t month, uint32_t weekday, uint32_t n);
// Floor division of a time in ns to whole days/seconds (correct for times before 1970 too).
int64_t floor_div(int64_t a, int64_t b);
// "2026-02-17" (exactly this shape, a real date) → CivilDate; kParseError otherwise.
Result<CivilDate> parse_civil_date(std::string_view text);
std::string to_string(const CivilDate& d);  // "2026-02-17"
// 20260217 for 2026-02-17: the compact form daily statistics and files key on.
inline int32_t yyyymmdd(const CivilDate& d) {
  return d.year * 10000 + int32_t(d.month) * 100 + int32_t(d.day);
}

}  // namespace ts
