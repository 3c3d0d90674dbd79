// libFuzzer target for the `sse-l3` source (SSE tick-by-tick orders and trades in a vendor's
// layout, docs/formats.md): a day's SHorders.csv and SHtrans.csv (input: orders @@ trades,
// fuzz_files.h) are read in memory through the source a user's replay opens (each channel's
// ApplSeqNum order, then time order), to the end, every event applied to a BookSet with order
// tracking (an SSE book is rebuilt from the flow). Bad rows are counted and skipped; a header
// without the columns is an error Status; nothing may crash, hang, read past a buffer, hand on
// an event of an unknown symbol or go back in time (fuzz_files.h).
//   build/fuzz/fuzz/sse_l3_fuzz -max_total_time=60 fuzz/corpus/sse_l3_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_files.h"
#include "ingest/sse_l3_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  auto src = ts::make_sse_l3_source_from_readers(ts::fuzz::memory_reader(parts[0], "SHorders.csv", errors),
                                    ts::fuzz::memory_reader(parts[1], "SHtrans.csv", errors), "fuzz-20230711", symbols,
                                    errors);
  if (src.is_ok()) ts::fuzz::drain(*src.value(), symbols, errors);
  return 0;
}
