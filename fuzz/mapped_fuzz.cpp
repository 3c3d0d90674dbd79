// libFuzzer target for the `mapped` format (ingest/mapped: a vendor's CSV read through a TOML
// layout, docs/formats.md "Layouts by mapping"): the input is a layout @@ its first file @@ its
// second file @@ … (fuzz_files.h; at most kMaxFiles files). The layout is parsed as `--layout`
// parses it (a bad mapping must be an error Status naming the key); then each of its files is
// read in memory through the reader a user's replay opens (header bound by column name), merged
// by the layout's merge order as make_mapped_source() merges a day folder, to the end, every
// event applied to a BookSet. Bad rows are counted and skipped; nothing may crash, hang, read
// past a buffer, hand on an event of an unknown symbol or go back in time (fuzz_files.h).
//   build/fuzz/fuzz/mapped_fuzz -max_total_time=60 fuzz/corpus/mapped_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/time_zone.h"
#include "fuzz_files.h"
#include "ingest/mapped/layout.h"
#include "ingest/mapped/mapped_file.h"
#include "ingest/merge_source.h"

namespace {

constexpr size_t kMaxFiles = 4;
constexpr int kFolderDate = 20230201;  // the day folder's date (…-20230201)

// TimeZone::load reads the zone database: once per zone name, not per input.
std::shared_ptr<const ts::TimeZone> zone_for(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const ts::TimeZone>> zones;
  auto it = zones.find(name);
  if (it != zones.end()) return it->second;
  auto z = ts::TimeZone::load(name);
  std::shared_ptr<const ts::TimeZone> zone = z.is_ok() ? z.value() : nullptr;
  if (zones.size() < 64) zones.emplace(name, zone);
  return zone;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 1 + kMaxFiles);
  auto layout = ts::mapped::parse_layout(parts[0], "fuzz.toml");
  if (!layout.is_ok()) return 0;
  const ts::mapped::Layout& l = layout.value();
  if (l.files.empty()) __builtin_trap();  // a layout without a file must be refused
  if (l.files.size() > kMaxFiles) return 0;
  auto zone = zone_for(l.time_zone);
  if (!zone) return 0;  // make_mapped_source refuses an unknown zone before any file
  const int64_t midnight = ts::mapped::local_midnight_ns(*zone, kFolderDate);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  std::vector<std::unique_ptr<ts::Source>> files;
  for (size_t i = 0; i < l.files.size(); ++i) {
    const auto& f = l.files[i];
    auto opened = ts::mapped::open_mapped_file(l, f, ts::fuzz::memory_reader(parts[1 + i], f.name + ".csv", errors),
                                               zone, midnight, symbols, errors);
    if (!opened.is_ok()) return 0;
    files.push_back(std::move(opened).value());
  }
  if (files.size() == 1) {
    ts::fuzz::drain(*files.front(), symbols, errors);
  } else {
    ts::MergeSource merged(std::move(files), l.merge, "mapped fuzz");
    ts::fuzz::drain(merged, symbols, errors);
  }
  return 0;
}
