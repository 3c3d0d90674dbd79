// libFuzzer target for the crypto venue decoders (ingest/crypto: Binance, Coinbase, Kraken and
// Bitstamp JSON, Bitstamp's 2015 order-level log) behind the capture-file source: the input's
// first byte picks the venue (mod 5, crypto::Venue), the rest is a capture's websocket file @@
// its REST snapshot file (fuzz_files.h), one message per line in any form parse_capture_line()
// reads. Both are read in memory through the source a user's replay opens (merged by receive
// time, decoded by one decoder, exch_ts_ns kept non-decreasing), to the end, every event applied
// to a BookSet. Bad messages are counted and skipped; a gap or a checksum mismatch marks a book
// stale; nothing may crash, hang, read past a buffer, hand on an event of an unknown symbol or
// go back in time (fuzz_files.h), and the decoder's counters agree with what it handed on.
//   build/fuzz/fuzz/crypto_fuzz -max_total_time=60 fuzz/corpus/crypto_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fuzz_files.h"
#include "ingest/crypto/crypto_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  if (size == 0) return 0;
  const auto venue = static_cast<ts::crypto::Venue>(data[0] % ts::crypto::kVenueCount);
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), 2);
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  std::vector<std::unique_ptr<ts::ingest::LineReader>> files;
  files.push_back(ts::fuzz::memory_reader(parts[0], "FUZZ.ws.1.0", errors));
  files.push_back(ts::fuzz::memory_reader(parts[1], "FUZZ.http.0.0", errors));
  auto src = ts::crypto::open_crypto_source(std::move(files), venue, symbols, errors);
  if (!src.is_ok()) __builtin_trap();  // two readers and a venue: nothing to refuse
  const uint64_t events = ts::fuzz::drain(*src.value(), symbols, errors);
  const ts::crypto::DecoderCounters& c = src.value()->counters();
  if (c.events != events) __builtin_trap();  // events counted but not handed on, or the reverse
  if (c.bad_messages > c.messages || c.ignored > c.messages) __builtin_trap();
  if (c.issues.size() > ts::crypto::DecoderCounters::kMaxIssues) __builtin_trap();
  return 0;
}
