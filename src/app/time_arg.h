#pragma once
// Exchange-time arguments of the CLI.
//
// --since / --until (audit alerts): an absolute time: nanoseconds since the Unix epoch, or an
// RFC 3339 time with its zone ("2012-06-21T09:30:00-04:00", "2023-02-01 10:50:00.5+08:00",
// "2012-06-21T13:30:00Z"). A time without a zone is refused: a stored alert has no "market".
//
// --from / --to (replay, record, publish): an absolute time as above, or a time read in each
// symbol's own exchange zone: "10:50" or "10:50:30.5" (a time of day: the day of the symbol's
// first event), "2012-06-21T10:50" (a date and time without zone), or a time of day with a zone
// ("10:50-04:00"). parse_time_bound() reads them; resolve_time_bound() fixes one for a symbol.
#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace ts {

Result<int64_t> parse_exchange_time(const std::string& text);

struct TimeBound {
  std::optional<int64_t> absolute_ns;  // set: the time is fixed, nothing else matters
  std::optional<int64_t> local_day;    // days since 1970-01-01 of the local date, if given
  int64_t time_of_day_ns = 0;          // since local midnight
  std::optional<int32_t> utc_offset_s;  // the zone written with a time of day ("10:50+08:00")
  std::string text;                    // as written, for messages
};

Result<TimeBound> parse_time_bound(const std::string& text);

// The bound in ns since the epoch for a symbol whose first event is at `first_event_ns` and whose
// exchange zone is `utc_offset_s_at(unix_s)` seconds east of UTC: the local date is the first
// event's unless the bound names one; the zone is the symbol's unless the bound names one.
template <typename OffsetAt>
int64_t resolve_time_bound(const TimeBound& b, int64_t first_event_ns, OffsetAt utc_offset_s_at);

// "2012-06-21T13:30:00.123456789Z": UTC, nanoseconds (trailing zeros of the fraction dropped).
std::string format_utc_ns(int64_t unix_ns);
// "2012-06-21T09:30:00-04:00": the same instant written with a zone `utc_offset_s` east of UTC.
std::string format_local_ns(int64_t unix_ns, int32_t utc_offset_s);

// --- implementation of the template ---
int64_t time_bound_at(const TimeBound& b, int64_t first_event_ns, int32_t offset_at_first_s);

template <typename OffsetAt>
int64_t resolve_time_bound(const TimeBound& b, int64_t first_event_ns, OffsetAt utc_offset_s_at) {
  if (b.absolute_ns) return *b.absolute_ns;
  const int64_t first_s = first_event_ns >= 0 ? first_event_ns / 1'000'000'000
                                              : -((-first_event_ns + 999'999'999) / 1'000'000'000);
  const int32_t off = b.utc_offset_s ? *b.utc_offset_s : utc_offset_s_at(first_s);
  int64_t t = time_bound_at(b, first_event_ns, off);
  if (!b.utc_offset_s) {  // the named date may sit on the other side of a DST change
    const int32_t off_at_t = utc_offset_s_at(t / 1'000'000'000);
    if (off_at_t != off) t += int64_t(off - off_at_t) * 1'000'000'000;
  }
  return t;
}

}  // namespace ts
