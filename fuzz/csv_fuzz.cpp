// libFuzzer target for the `csv` source (ticksentry's normalized events, docs/formats.md): the
// input is one file, read in memory through the source a user's replay opens, to the end, every
// event applied to a BookSet. Bad lines are counted and skipped; nothing may crash, hang, read past
// a buffer, hand on an event of an unknown symbol or go back in time (fuzz_files.h). An event
// that was read is written back with CsvWriter and read again: the same event must come back
// (the format's round-trip promise).
//   build/fuzz/fuzz/csv_fuzz -max_total_time=60 fuzz/corpus/csv_fuzz   (bench/fuzz.sh)
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "fuzz_files.h"
#include "same_event.h"
#include "ingest/csv_source.h"
#include "ingest/csv_writer.h"

namespace {

std::vector<ts::Event> read_all(std::string_view bytes, ts::SymbolTable& symbols, ts::InputErrors& errors) {
  std::vector<ts::Event> out;
  auto src = ts::make_csv_source_from_reader(ts::fuzz::memory_reader(bytes, "events.csv", errors), symbols, errors);
  std::array<ts::Event, 64> batch;
  for (int idle = 0; !src->done();) {
    const size_t n = src->next_batch(batch);
    if (n == 0 && ++idle > 4) __builtin_trap();
    out.insert(out.end(), batch.begin(), batch.begin() + n);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  {
    auto src = ts::make_csv_source_from_reader(ts::fuzz::memory_reader(bytes, "events.csv", errors), symbols, errors);
    ts::fuzz::drain(*src, symbols, errors);
  }
  // Round trip: what was read, written and read again, is the same. The writer takes a path:
  // an in-memory file (fuzz_files.h MemFile), written only for the inputs that gave events.
  const std::vector<ts::Event> first = read_all(bytes, symbols, errors);
  if (first.empty()) return 0;
  const std::string& again = ts::fuzz::MemFile::get().path();
  {
    auto w = ts::CsvWriter::open(again);
    if (!w.is_ok()) __builtin_trap();
    for (const auto& e : first) {
      if (!w.value().write(e, symbols).is_ok()) __builtin_trap();
    }
    if (!w.value().close().is_ok()) __builtin_trap();
  }
  const std::string written = ts::fuzz::MemFile::get().read_all();
  ts::InputErrors errors2;
  errors2.set_quiet(true);
  const std::vector<ts::Event> second = read_all(written, symbols, errors2);
  if (errors2.total() != 0 || second.size() != first.size()) __builtin_trap();  // written but unreadable
  for (size_t i = 0; i < first.size(); ++i) {
    if (second[i].symbol != first[i].symbol || !ts::fuzz::same_event(first[i], second[i])) __builtin_trap();
  }
  return 0;
}
