// libFuzzer target for LineReader (ingest/line_reader.h), under every file source: the input is
// one file's bytes, read in memory (open_memory reads them as open() reads a file), plain or gzip (told apart by its first bytes; the seeds are mostly gzip: single and
// multi-member streams, a cut one, one with trailing garbage). Every contract point is checked:
// lines numbered 1, 2, …; no '\n' in a line; `unterminated` only on the
// last line; `has_garbage` exactly when a control byte other than \t and \r (or DEL) is there;
// for a plain file the lines are the file's bytes (less a leading BOM); a gzip fault sets
// truncated() and is counted as truncated_file, and nothing but a fault is counted.
//   build/fuzz/fuzz/line_reader_fuzz -max_total_time=60 fuzz/corpus/line_reader_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_files.h"
#include "ingest/line_reader.h"

namespace {

bool garbage(std::string_view s) {
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) return true;
  }
  return false;
}

// The lines a plain file holds, by the contract: split at '\n', one trailing '\r' dropped per
// line, a BOM dropped from line 1, no empty line after a final '\n'.
std::vector<std::string_view> expected_lines(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (out.empty() && line.size() >= 3 && std::memcmp(line.data(), "\xEF\xBB\xBF", 3) == 0) line.remove_prefix(3);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ts::InputErrors errors;
  errors.set_quiet(true);
  auto reader = ts::fuzz::memory_reader(bytes, "lines.csv", errors);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::vector<std::string_view> want = gzip ? std::vector<std::string_view>{} : expected_lines(bytes);
  ts::ingest::Line line;
  uint64_t n = 0;
  bool saw_unterminated = false;
  while (reader->next(line)) {
    ++n;
    if (saw_unterminated) __builtin_trap();  // only the last line may lack its '\n'
    saw_unterminated = line.unterminated;
    if (line.number != n) __builtin_trap();
    if (line.text.find('\n') != std::string_view::npos) __builtin_trap();
    if (line.has_garbage != garbage(line.text)) __builtin_trap();
    if (!gzip && (n > want.size() || line.text != want[n - 1])) __builtin_trap();
  }
  if (!gzip && n != want.size()) __builtin_trap();
  if (reader->next(line)) __builtin_trap();  // the end stays the end
  // Faults are gzip's alone, and each is counted as truncated_file.
  if (errors.total() != errors.count(ts::InputError::kTruncatedFile)) __builtin_trap();
  if (reader->truncated() != (errors.total() > 0)) __builtin_trap();
  if (!gzip && errors.total() != 0) __builtin_trap();
  return 0;
}
