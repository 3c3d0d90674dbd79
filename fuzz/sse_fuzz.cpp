// libFuzzer target for the `sse-l2` source: a day folder's snapshot, entrust and trade files
// (input: snapshot @@ entrust @@ trade, fuzz_files.h) are read in memory through the source a
// user's replay opens, to the end through the time-ordered merge, every event applied to a BookSet. A file
// the day cannot use is an error Status; bad rows are counted and skipped; nothing may crash,
// hang, read past a buffer, hand on an event of an unknown symbol or go back in time.
//   build/fuzz/fuzz/sse_fuzz -max_total_time=60 fuzz/corpus/sse_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "fuzz_files.h"
#include "ingest/sse_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 3);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  ts::SseDayReaders files;
  files.snapshot = ts::fuzz::memory_reader(parts[0], "snapshot.csv", errors);
  files.entrust = ts::fuzz::memory_reader(parts[1], "entrust.csv", errors);
  files.trade = ts::fuzz::memory_reader(parts[2], "trade.csv", errors);
  auto src = ts::make_sse_source_from_readers(std::move(files), 20230201, "600519-20230201", symbols, errors);
  if (src.is_ok()) ts::fuzz::drain(*src.value(), symbols, errors);
  return 0;
}
