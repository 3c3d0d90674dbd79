#pragma once
// TimeZone: the UTC offset of an IANA zone at an instant, for turning exchange timestamps
// (UTC ns) into exchange-local wall time.
// Two implementations behind one class, chosen at build time:
//  - with Debian's libhowardhinnant-date-dev (date/tz.h, libdate-tz, the system tzdata in
//    /usr/share/zoneinfo): any IANA zone, with the full history of its rules;
//  - without it, built-in rules for the zones ticksentry's markets use: "UTC"/"Etc/UTC",
//    "Asia/Shanghai" (UTC+8, no DST since 1991) and "America/New_York" (US DST rules since
//    2007: second Sunday of March 02:00 local to first Sunday of November 02:00 local).
// builtin_utc_offset_s() is always compiled, so the two can be compared in tests.
// Threading: a TimeZone is immutable after find(); utc_offset_s() is safe from any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ts {

class TimeZone {
 public:
  // kNotFound for a zone the active implementation does not know (the message names it).
  static Result<TimeZone> find(std::string_view iana_name);
  // The zone's offset from UTC at `utc_s` (seconds since the epoch), in seconds: +28800 for
  // Asia/Shanghai, -14400 for New York in summer.
  int32_t utc_offset_s(int64_t utc_s) const;
  // Local wall-clock seconds since the epoch (utc_s + offset): day = floor(local / 86400).
  int64_t local_seconds(int64_t utc_ns) const;
  const std::string& name() const { return name_; }
  // True when the zone data comes from the system tzdata (date/tz.h), false for built-in rules.
  static bool uses_system_tzdata();

 private:
  std::string name_ = "UTC";     // a default-constructed TimeZone is UTC
  const void* zone_ = nullptr;  // date::time_zone* when built with date/tz.h; null = UTC
};

// The built-in rules above; nothing when `iana_name` is not one of the built-in zones.
std::optional<int32_t> builtin_utc_offset_s(std::string_view iana_name, int64_t utc_s);

}  // namespace ts
