#include "core/civil_time.h"

#include <cstdio>

namespace ts {

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t days_from_civil(const CivilDate& d) {
  const int64_t y = int64_t(d.year) - (d.month <= 2 ? 1 : 0);
  const int64_t era = floor_div(y, 400);
  const int64_t yoe = y - era * 400;                                          // [0, 399]
  const int64_t mp = (int64_t(d.month) + 9) % 12;                             // March = 0
  const int64_t doy = (153 * mp + 2) / 5 + int64_t(d.day) - 1;                // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                  // [0, 146096]
  return era * 146097 + doe - 719468;
}

CivilDate civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = floor_div(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const auto day = static_cast<uint32_t>(doy - (153 * mp + 2) / 5 + 1);
  const auto month = static_cast<uint32_t>(mp < 10 ? mp + 3 : mp - 9);
  const auto year = static_cast<int32_t>(yoe + era * 400 + (month <= 2 ? 1 : 0));
  return {year, month, day};
}

uint32_t weekday_of(int64_t days) {
  // 1970-01-01 was a Thursday (4).
  return static_cast<uint32_t>(((days % 7) + 7 + 4) % 7);
}

int64_t nth_weekday(int32_t year, uint32_t month, uint32_t weekday, uint32_t n) {
  const int64_t first = days_from_civil({year, month, 1});
  const uint32_t offset = (weekday + 7 - weekday_of(first)) % 7;
  return first + offset + 7 * int64_t(n - 1);
}

Result<CivilDate> parse_civil_date(std::string_view text) {
  const auto bad = [&](const char* why) {
    return Status{StatusCode::kParseError, "date \"" + std::string(text) + "\": " + why};
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return bad("expected YYYY-MM-DD");
  int32_t parts[3] = {0, 0, 0};
  const size_t starts[3] = {0, 5, 8}, lens[3] = {4, 2, 2};
  for (int p = 0; p < 3; ++p) {
    for (size_t i = starts[p]; i < starts[p] + lens[p]; ++i) {
      if (text[i] < '0' || text[i] > '9') return bad("expected YYYY-MM-DD");
      parts[p] = parts[p] * 10 + (text[i] - '0');
    }
  }
  const CivilDate d{parts[0], uint32_t(parts[1]), uint32_t(parts[2])};
  if (d.month < 1 || d.month > 12 || d.day < 1 || civil_from_days(days_from_civil(d)) != d) {
    return bad("no such date");
  }
  return d;
}

std::string to_string(const CivilDate& d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", d.year, d.month, d.day);
  return buf;
}

}  // namespace ts
