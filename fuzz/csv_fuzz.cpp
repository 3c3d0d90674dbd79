// libFuzzer target for the `csv` source (ticksentry's normalized events, docs/formats.md): the
// input is one file, opened as a user's replay opens it and read to the end, every event
// applied to a BookSet. Bad lines are counted and skipped; nothing may crash, hang, read past
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

std::vector<ts::Event> read_all(const std::string& path, ts::SymbolTable& symbols, ts::InputErrors& errors) {
  std::vector<ts::Event> out;
  auto src = ts::make_csv_source(path, symbols, errors);
  if (!src.is_ok()) return out;
  std::array<ts::Event, 64> batch;
  for (int idle = 0; !src.value()->done();) {
    const size_t n = src.value()->next_batch(batch);
    if (n == 0 && ++idle > 4) __builtin_trap();
    out.insert(out.end(), batch.begin(), batch.begin() + n);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& dir = ts::fuzz::ScratchDir::get();
  const std::string path = dir.write("events.csv", std::string_view(reinterpret_cast<const char*>(data), size));
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  {
    auto src = ts::make_csv_source(path, symbols, errors);
    if (src.is_ok()) ts::fuzz::drain(*src.value(), symbols, errors);
  }
  // Round trip: what was read, written and read again, is the same.
  const std::vector<ts::Event> first = read_all(path, symbols, errors);
  if (first.empty()) return 0;
  const std::string again = (dir.path() / "again.csv").string();
  {
    auto w = ts::CsvWriter::open(again);
    if (!w.is_ok()) __builtin_trap();
    for (const auto& e : first) {
      if (!w.value().write(e, symbols).is_ok()) __builtin_trap();
    }
    if (!w.value().close().is_ok()) __builtin_trap();
  }
  ts::InputErrors errors2;
  errors2.set_quiet(true);
  const std::vector<ts::Event> second = read_all(again, symbols, errors2);
  if (errors2.total() != 0 || second.size() != first.size()) __builtin_trap();  // written but unreadable
  for (size_t i = 0; i < first.size(); ++i) {
    if (second[i].symbol != first[i].symbol || !ts::fuzz::same_event(first[i], second[i])) __builtin_trap();
  }
  return 0;
}
