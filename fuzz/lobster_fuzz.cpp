// libFuzzer target for the `lobster` source: a message file and the orderbook file beside it
// (input: message text @@ orderbook text, fuzz_files.h) are read in memory through the source a
// user's replay opens, to the end, every event applied to a BookSet. Bad lines must be counted and skipped;
// nothing may crash, hang, read past a buffer, hand on an event of an unknown symbol or go
// back in time (fuzz_files.h: drain()).
//   build/fuzz/fuzz/lobster_fuzz -max_total_time=60 fuzz/corpus/lobster_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_files.h"
#include "ingest/lobster_book.h"
#include "ingest/lobster_source.h"

namespace {

constexpr const char* kMessage = "FUZZ_2012-06-21_34200000_57600000_message_10.csv";
constexpr const char* kOrderbook = "FUZZ_2012-06-21_34200000_57600000_orderbook_10.csv";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  auto src = ts::make_lobster_source_from_readers(ts::fuzz::memory_reader(parts[0], kMessage, errors),
                                     ts::fuzz::memory_reader(parts[1], kOrderbook, errors), symbols, errors);
  if (!src.is_ok()) __builtin_trap();  // the names are LOBSTER's: the factory cannot refuse them
  ts::fuzz::drain(*src.value(), symbols, errors);
  // The orderbook reader alone, as the book tests use it.
  auto reader = ts::LobsterBookReader::open(ts::fuzz::memory_reader(parts[1], kOrderbook, errors), errors);
  ts::LobsterBookRow row;
  uint64_t last = 0;
  while (reader->next(row)) {
    if (row.levels < 1 || row.line <= last) __builtin_trap();  // rows come once, in order
    last = row.line;
  }
  return 0;
}
