#pragma once
// Exchange-time arguments of the CLI (--since / --until, --from / --to): nanoseconds since the
// Unix epoch, or an RFC 3339 time with its zone ("2012-06-21T09:30:00-04:00",
// "2023-02-01 10:50:00.5+08:00", "2012-06-21T13:30:00Z"). A time without a zone is refused:
// exchange time is ambiguous without one.
#include <cstdint>
#include <string>

#include "core/status.h"

namespace ts {

Result<int64_t> parse_exchange_time(const std::string& text);

// "2012-06-21T13:30:00.123456789Z": UTC, nanoseconds (trailing zeros of the fraction dropped).
std::string format_utc_ns(int64_t unix_ns);

}  // namespace ts
