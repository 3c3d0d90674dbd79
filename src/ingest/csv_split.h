#pragma once
// split_fields_wide: ingest::split_fields (field_parse.h) for wide rows — the same contract and
// results, finding the commas 32 bytes at a time (AVX2 where the build targets it; a byte loop
// otherwise and for the last < 32 bytes).
// PERF NOTE: split_fields calls memchr once per field; on SZSE's 90-field, 663-byte snapshot rows
// those calls were ~25 % of the decode (perf, bench/results/ingest-decode-*-fdspeed.json). A
// comma mask per 32 bytes costs a compare, a movemask and one tzcnt per field.
// Pure function; safe from any thread.
#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace ts::ingest {

// Splits `line` at commas into out[0..max). Returns the number of fields in the line (which may
// exceed `max`; only the first `max` are stored). An empty line has one empty field.
inline size_t split_fields_wide(std::string_view line, std::string_view* out, size_t max) {
  const char* const p = line.data();
  const size_t len = line.size();
  size_t n = 0, start = 0, i = 0;
  auto field_ends_at = [&](size_t comma) {
    if (n < max) out[n] = std::string_view(p + start, comma - start);
    ++n;
    start = comma + 1;
  };
#if defined(__AVX2__)
  const __m256i comma = _mm256_set1_epi8(',');
  for (; i + 32 <= len; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    for (uint32_t m = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, comma))); m != 0; m &= m - 1) {
      field_ends_at(i + size_t(__builtin_ctz(m)));
    }
  }
#endif
  for (; i < len; ++i) {
    if (p[i] == ',') field_ends_at(i);
  }
  if (n < max) out[n] = std::string_view(p + start, len - start);
  return n + 1;
}

}  // namespace ts::ingest
