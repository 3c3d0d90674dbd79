// libFuzzer target for the `sse-l2` source: a day folder's snapshot, entrust and trade files
// (input: snapshot @@ entrust @@ trade, fuzz_files.h) are opened as a user's replay opens them
// and read to the end through the time-ordered merge, every event applied to a BookSet. A file
// the day cannot use is an error Status; bad rows are counted and skipped; nothing may crash,
// hang, read past a buffer, hand on an event of an unknown symbol or go back in time.
//   build/fuzz/fuzz/sse_fuzz -max_total_time=60 fuzz/corpus/sse_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_files.h"
#include "ingest/sse_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 3);
  static const std::string day = ts::fuzz::ScratchDir::get().fresh_dir("600519-20230201").string();
  auto& dir = ts::fuzz::ScratchDir::get();
  dir.write(day + "/snapshot.csv", parts[0]);
  dir.write(day + "/entrust.csv", parts[1]);
  dir.write(day + "/trade.csv", parts[2]);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  auto src = ts::make_sse_source(day, symbols, errors);
  if (src.is_ok()) ts::fuzz::drain(*src.value(), symbols, errors);
  return 0;
}
