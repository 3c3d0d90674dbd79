#pragma once
// A POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0"): a standard offset and optionally a DST offset with
// the rules for when DST starts and ends. A zone file's footer carries one for the instants after
// its last listed transition (core/time_zone.h applies it there).
//
// Immutable after parse: any thread may call utc_offset_s() at once.
#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace ts {

struct PosixTzRule {
  struct When {
    char kind = 'M';  // 'M' (Mm.w.d), 'J' (Jn: day 1..365, Feb 29 never counted), 'n' (0..365)
    int month = 0, week = 0, weekday = 0, day = 0;
    int32_t time_s = 7200;  // local time of day of the change (may be < 0 or > 24 h)
  };
  int32_t std_offset_s = 0;  // UTC offset (east positive: +28800 for CST-8)
  bool has_dst = false;
  int32_t dst_offset_s = 0;
  When start, end;  // DST starts (in standard time) / ends (in DST)

  // Errors: kInvalidArgument naming what was expected and where.
  static Result<PosixTzRule> parse(std::string_view text);
  // Offset from UTC in effect at `unix_s` (seconds; east positive).
  int32_t utc_offset_s(int64_t unix_s) const;
};

}  // namespace ts
