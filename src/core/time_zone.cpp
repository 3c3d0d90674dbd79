#include "core/time_zone.h"

#include "core/civil_time.h"

#if TICKSENTRY_HAVE_DATE_TZ
#include <date/tz.h>

#include <exception>
#endif

namespace ts {

namespace {

// US Eastern time: EST (UTC-5), EDT (UTC-4) from the 2nd Sunday of March 02:00 EST (07:00 UTC)
// to the 1st Sunday of November 02:00 EDT (06:00 UTC); the Energy Policy Act 2005 rules.
int32_t new_york_offset_s(int64_t utc_s) {
  const int64_t day = floor_div(utc_s, kSecondsPerDay);
  const int32_t year = civil_from_days(day).year;
  const int64_t dst_start = nth_weekday(year, 3, 0, 2) * kSecondsPerDay + 7 * 3600;
  const int64_t dst_end = nth_weekday(year, 11, 0, 1) * kSecondsPerDay + 6 * 3600;
  return (utc_s >= dst_start && utc_s < dst_end) ? -4 * 3600 : -5 * 3600;
}

}  // namespace

std::optional<int32_t> builtin_utc_offset_s(std::string_view iana_name, int64_t utc_s) {
  if (iana_name == "UTC" || iana_name == "Etc/UTC") return 0;
  if (iana_name == "Asia/Shanghai") return 8 * 3600;
  if (iana_name == "America/New_York") return new_york_offset_s(utc_s);
  return std::nullopt;
}

bool TimeZone::uses_system_tzdata() { return TICKSENTRY_HAVE_DATE_TZ != 0; }

Result<TimeZone> TimeZone::find(std::string_view iana_name) {
  TimeZone tz;
  tz.name_ = std::string(iana_name);
#if TICKSENTRY_HAVE_DATE_TZ
  try {  // date::locate_zone throws for an unknown name: the edge, turned into a Status here
    tz.zone_ = date::locate_zone(iana_name);
  } catch (const std::exception& e) {
    return Status{StatusCode::kNotFound,
                  "time zone \"" + tz.name_ + "\" not in the system tzdata: " + e.what()};
  }
#else
  if (!builtin_utc_offset_s(iana_name, 0)) {
    return Status{StatusCode::kNotFound,
                  "time zone \"" + tz.name_ +
                      "\" unknown (built without date/tz.h: only UTC, Asia/Shanghai, "
                      "America/New_York)"};
  }
#endif
  return tz;
}

int32_t TimeZone::utc_offset_s(int64_t utc_s) const {
#if TICKSENTRY_HAVE_DATE_TZ
  const auto* zone = static_cast<const date::time_zone*>(zone_);
  if (zone == nullptr) return 0;
  const auto info = zone->get_info(date::sys_seconds{std::chrono::seconds{utc_s}});
  return static_cast<int32_t>(info.offset.count());
#else
  return *builtin_utc_offset_s(name_, utc_s);
#endif
}

int64_t TimeZone::local_seconds(int64_t utc_ns) const {
  const int64_t utc_s = floor_div(utc_ns, kNsPerSecond);
  return utc_s + utc_offset_s(utc_s);
}

}  // namespace ts
