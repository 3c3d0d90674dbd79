#pragma once
// IANA time zones ("America/New_York", "Asia/Shanghai") from the system's tz database
// (/usr/share/zoneinfo: Debian's tzdata), for notification time windows, exchange-local
// times in alert text and instruments' trading phases (core/market_calendars.h).
//
// Why not std::chrono::locate_zone: libstdc++ 12 (Debian 12's) has no C++20 tzdb. Howard
// Hinnant's date library (Debian's libhowardhinnant-date-dev, `date/tz.h` built with
// USE_OS_TZDB=1) is the model that C++20 <chrono> zones were standardised from; it reads the
// zone files' transitions. It ignores their footer, the POSIX TZ rule for the instants after the
// last listed transition (2037 in Debian's files, earlier in "slim" ones), so that rule is read
// here and applied from the last transition on. Tests compare with zdump and glibc.
//
// Immutable after load: any thread may call utc_offset_s() at once.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/posix_tz_rule.h"
#include "core/status.h"

namespace date {
class time_zone;
}

namespace ts {

class TimeZone {
 public:
  // Loads `name` from the tz database. Errors: a name that is not a zone name (absolute, "..",
  // odd characters: kInvalidArgument), a zone that does not exist (kNotFound), a zone file
  // whose footer rule does not parse (kInvalidArgument).
  static Result<std::shared_ptr<const TimeZone>> load(const std::string& name);

  const std::string& name() const { return name_; }
  // Offset from UTC in effect at `unix_s` (east positive: New York in winter −18000).
  int32_t utc_offset_s(int64_t unix_s) const;
  // Local wall-clock seconds since the epoch at `utc_ns` (UTC ns; the seconds floored, then the
  // offset added): the local day is floor(local / 86400).
  int64_t local_seconds(int64_t utc_ns) const;

 private:
  std::string name_;
  const date::time_zone* zone_ = nullptr;  // owned by date's tz database (lives until exit)
  int64_t last_transition_s_ = 0;          // UTC seconds; rule_ decides from here on
  std::optional<PosixTzRule> rule_;        // the zone file's footer, if any
};

}  // namespace ts
