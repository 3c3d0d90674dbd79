// libFuzzer target for the `szse-l2` source (SZSE ten-level snapshots, docs/formats.md): the
// input is one tick.csv, read in memory through the source a user's replay opens (header by
// column name, every row, then time order), to the end, every event applied to a BookSet. Bad
// rows are counted and skipped; a header without the columns is an error Status; nothing may
// crash, hang, read past a buffer, hand on an event of an unknown symbol or go back in time
// (fuzz_files.h).
//   build/fuzz/fuzz/szse_l2_fuzz -max_total_time=60 fuzz/corpus/szse_l2_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_files.h"
#include "ingest/szse_snapshot_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  auto src = ts::make_szse_snapshot_source_from_reader(
      ts::fuzz::memory_reader(std::string_view(reinterpret_cast<const char*>(data), size), "tick.csv", errors), symbols,
      errors);
  if (src.is_ok()) ts::fuzz::drain(*src.value(), symbols, errors);
  return 0;
}
