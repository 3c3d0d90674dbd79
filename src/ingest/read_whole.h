#pragma once
// Helpers for sources that read a vendor file whole (rows grouped by security, replayed in time
// order): the size to reserve, and the time order to hand the events out in.
// PERF NOTE: sorting the ~390-byte events themselves (or copying them into a sorted vector)
// moved more bytes than decoding them (SZSE snapshot day, 20,980 rows); the 12-byte keys sort in
// a fraction of that.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/event.h"

namespace ts::ingest {

// The size of `path` as text: a plain file's size, or what a gzip file's trailer says its (last)
// member inflates to (ISIZE, mod 2^32); 0 if unknown. An estimate: it only sizes a buffer.
inline uint64_t text_bytes(const std::string& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || size < 18) return 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  unsigned char magic[2] = {}, trailer[4] = {};
  const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const bool got = gz && std::fseek(f, -4, SEEK_END) == 0 && std::fread(trailer, 1, 4, f) == 4;
  std::fclose(f);
  if (!gz) return size;
  return got ? uint64_t(trailer[0]) | uint64_t(trailer[1]) << 8 | uint64_t(trailer[2]) << 16 | uint64_t(trailer[3]) << 24
             : 0;
}

// How many events to reserve for a file of `text_bytes` whose first row is `row_bytes` long
// (capped: a wrong estimate costs virtual memory only up to ~100 MB).
// PERF NOTE: growing the vector by doubling copied every ~390-byte event once more and touched
// twice the memory (page faults and copies were ~15 % of the SZSE snapshot decode).
inline size_t reserve_rows(uint64_t text_bytes, size_t row_bytes) {
  return size_t(std::min<uint64_t>(text_bytes / (row_bytes + 1) + 64, uint64_t(1) << 18));
}

// The time order of events read whole: indexes into `events` sorted by (exch_ts_ns, position),
// so equal times keep their file order. A source hands the events out through it rather than
// sorting them.
inline std::vector<uint32_t> time_order(std::span<const Event> events) {
  std::vector<std::pair<int64_t, uint32_t>> keys(events.size());
  for (size_t i = 0; i < events.size(); ++i) keys[i] = {events[i].exch_ts_ns, static_cast<uint32_t>(i)};
  std::sort(keys.begin(), keys.end());  // (time, position): stable by construction
  std::vector<uint32_t> order(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].second;
  return order;
}

}  // namespace ts::ingest
