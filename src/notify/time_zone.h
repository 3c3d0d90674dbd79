#pragma once
// IANA time zones for time windows ("America/New_York", "Asia/Shanghai"), read from the system's
// tz database (TZif files under $TZDIR, else /usr/share/zoneinfo: Debian's tzdata).
//
// Why not std::chrono::locate_zone: libstdc++ 12 (Debian 12's) has no C++20 tzdb. The TZif
// format (RFC 8536) is small: a table of UTC transition instants, the UTC offset in effect after
// each, and a POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0") for instants after the last transition
// (a "slim" file has few transitions and relies on it; Debian's "fat" files list them to 2037).
// Both are read here; tests compare against zdump's transitions for 2026.
//
// Immutable after load: any thread may call utc_offset_s() at once.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ts::notify {

// A POSIX TZ rule: standard offset, and optionally a DST offset with its start and end rules.
struct PosixTzRule {
  struct When {
    char kind = 'M';    // 'M' (Mm.w.d), 'J' (Jn: day 1..365, Feb 29 never counted), 'n' (0..365)
    int month = 0, week = 0, weekday = 0, day = 0;
    int32_t time_s = 7200;  // local time of day of the change (may be < 0 or > 24 h)
  };
  int32_t std_offset_s = 0;  // UTC offset (east positive: +28800 for CST-8)
  bool has_dst = false;
  int32_t dst_offset_s = 0;
  When start, end;           // DST starts (in standard time) / ends (in DST)

  static Result<PosixTzRule> parse(std::string_view text);
  int32_t utc_offset_s(int64_t unix_s) const;
};

class TimeZone {
 public:
  // Loads `name` from $TZDIR or /usr/share/zoneinfo. Errors: a name that is not a zone name
  // (absolute, "..", odd characters), a zone that does not exist, a file that is not TZif.
  static Result<std::shared_ptr<const TimeZone>> load(const std::string& name);
  // Parses TZif bytes (exposed for tests).
  static Result<std::shared_ptr<const TimeZone>> from_tzif(const std::string& name, std::string_view bytes);

  const std::string& name() const { return name_; }
  // Offset from UTC in effect at `unix_s` (east positive: New York in winter −18000).
  int32_t utc_offset_s(int64_t unix_s) const;

 private:
  std::string name_;
  std::vector<int64_t> transitions_;    // UTC seconds, ascending
  std::vector<int32_t> offsets_;        // offset from transitions_[i] on
  int32_t initial_offset_s_ = 0;        // before the first transition
  std::optional<PosixTzRule> rule_;     // after the last transition
};

}  // namespace ts::notify
