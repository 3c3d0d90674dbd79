#pragma once
// The time order of events read whole (vendor files grouped by security): indexes into `events`
// sorted by (exch_ts_ns, position), so equal times keep their file order. A source hands the
// events out through it rather than sorting them.
// PERF NOTE: sorting the ~390-byte events themselves (or copying them into a sorted vector)
// moved more bytes than decoding them (SZSE snapshot day, 20,980 rows); the 12-byte keys sort in
// a fraction of that.
#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/event.h"

namespace ts::ingest {

inline std::vector<uint32_t> time_order(std::span<const Event> events) {
  std::vector<std::pair<int64_t, uint32_t>> keys(events.size());
  for (size_t i = 0; i < events.size(); ++i) keys[i] = {events[i].exch_ts_ns, static_cast<uint32_t>(i)};
  std::sort(keys.begin(), keys.end());  // (time, position): stable by construction
  std::vector<uint32_t> order(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].second;
  return order;
}

}  // namespace ts::ingest
