#pragma once
// The crypto file source: captures of one venue's websocket messages (and REST snapshots), one
// message per line in any form parse_capture_line() reads, .gz or plain (docs/formats.md).
//
// - All files given form ONE stream decoded by ONE VenueDecoder: a capture's websocket file and
//   its REST snapshot file (BINANCE.ws.1.0 + BINANCE.http.0.0) are merged line by line in
//   receive-time order (ties: the file given first), so the snapshot meets the diffs as it did
//   live. Lines without a receive time keep their file's order.
// - The venue is given (`binance-json`, ...), or detected from the first lines of the first file
//   (its URLs, else the shape of its messages) with format `crypto`; undetectable → kInvalidArgument.
// - Events leave in decode (receive) order; exch_ts_ns is kept non-decreasing over the stream
//   (a venue time behind the previous event's, e.g. a REST snapshot stamped on receipt before a
//   diff stamped by the venue a few ms earlier, takes the previous event's time), as every file
//   source is in time order (merging, csv replay). seq is the line number.
// - Lines the recorder sent (subscribe requests) and connection markers are skipped; a line in
//   no known form and every message the decoder rejects are counted with file:line.
// - At the end, one log line gives the decoder's counters (sequence_gap, checksum_mismatch, ...).
// Threading: one thread, like every Source.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/crypto/venue_decoder.h"
#include "ingest/source.h"

namespace ts::ingest {
class LineReader;
}

namespace ts::crypto {

class CryptoSource;

// Opens `paths` as one capture of `venue` (nothing = detect). Errors: kNotFound / kIoError for
// a file, kInvalidArgument for no paths or an undetectable venue.
Result<std::unique_ptr<CryptoSource>> open_crypto_source(const std::vector<std::string>& paths,
                                                         std::optional<Venue> venue, SymbolTable& symbols,
                                                         InputErrors& errors);

// The same over files already open (ingest::LineReader::open, or open_memory for bytes in
// memory), in the order given, for a known venue. Errors: kInvalidArgument for no readers.
Result<std::unique_ptr<CryptoSource>> open_crypto_source(std::vector<std::unique_ptr<ingest::LineReader>> readers,
                                                         Venue venue, SymbolTable& symbols, InputErrors& errors);

// The venue a capture file's first lines show (URLs such as stream.binance.com, ws-feed.*coinbase*,
// ws.kraken.com, bitstamp.net; else message shapes), or nothing.
Result<std::optional<Venue>> detect_capture_venue(const std::string& path);

class CryptoSource : public Source {
 public:
  ~CryptoSource() override;
  size_t next_batch(std::span<Event> out) override;
  bool done() const override;
  std::string describe() const override;
  const DecoderCounters& counters() const;
  // The decoder's counters under the venue's name (crypto/feed_counters.h).
  void feed_counters(FeedCounters& out) const override;
  Venue venue() const;

 private:
  struct Impl;
  friend Result<std::unique_ptr<CryptoSource>> open_crypto_source(const std::vector<std::string>&,
                                                                   std::optional<Venue>, SymbolTable&, InputErrors&);
  friend Result<std::unique_ptr<CryptoSource>> open_crypto_source(std::vector<std::unique_ptr<ingest::LineReader>>,
                                                                   Venue, SymbolTable&, InputErrors&);
  explicit CryptoSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts::crypto
