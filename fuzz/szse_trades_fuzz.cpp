// libFuzzer target for the `szse-trades` source (the SZSE tick-by-tick trade stream with
// cancels, docs/formats.md): the input is one tradeData.csv, read in memory through the source a
// user's replay opens (header by column name, every row, channel/ApplSeqNum order, then time
// order), to the end, every event applied to a BookSet. Bad rows are counted and skipped;
// nothing may crash, hang, read past a buffer, hand on an event of an unknown symbol or go back
// in time (fuzz_files.h), and the trades the source says it found are the events it hands on.
//   build/fuzz/fuzz/szse_trades_fuzz -max_total_time=60 fuzz/corpus/szse_trades_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_files.h"
#include "ingest/szse_trade_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  ts::SzseTradeCounts counts;
  auto src = ts::make_szse_trade_source_from_reader(
      ts::fuzz::memory_reader(std::string_view(reinterpret_cast<const char*>(data), size), "tradeData.csv", errors),
      symbols, errors, &counts);
  if (!src.is_ok()) return 0;
  const uint64_t events = ts::fuzz::drain(*src.value(), symbols, errors);
  if (events != counts.trades) __builtin_trap();  // a trade counted but not handed on, or the reverse
  return 0;
}
