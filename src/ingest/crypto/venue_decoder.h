#pragma once
// VenueDecoder: one crypto venue's websocket/REST JSON messages → ticksentry events.
// The one decoder per venue is shared by every transport: file replay (crypto_source.h), Kafka
// topics carrying the venue's messages unchanged (`run --source kafka --encoding binance-json`)
// and a live websocket. A transport hands over one message at a time, as the venue sent it.
//
// Contract of decode():
// - `json` is one complete venue message (a websocket frame's text or a REST body), without a
//   capture prefix. It need not be padded or NUL-terminated: the decoder copies it into its own
//   padded buffer (simdjson), so the caller's bytes may die after the call.
// - `where.recv_ns` is the receive time, ns since the Unix epoch (a capture's timestamp, the Kafka
//   message timestamp, the websocket read time). It is the event's exch_ts_ns when the message
//   carries no venue time (Binance bookTicker, Kraken book); `where.file`/`where.line` name the
//   message in reports ("BINANCE.ws.1.0", line 17; for Kafka "topic[partition]", offset).
// - `where.is_rest` marks a REST body (a depth snapshot: Binance /api/v3/depth, Bitstamp
//   /api/v2/order_book/<pair>); `where.url` is its URL (it names the symbol for Binance/Bitstamp).
// - Events are APPENDED to `out` (the caller clears it); symbols are interned in the SymbolTable
//   as "<VENUE>:<PAIR>" (BINANCE:BTCUSDT, COINBASE:BTC-USD, KRAKEN:XBT/USD, BITSTAMP:BTCUSD).
//   Prices and sizes are exact decimals turned into the symbol's integer ticks and size
//   increments (RefData::tick / size_increment). Where the instrument master's units do not fit
//   a symbol's first message (the default crypto tick 0.01 for a 0.0001-tick coin), the units
//   are taken from the digits the venue writes, before the symbol's first event, and logged once.
// - Diff books are kept here at full depth (per venue procedure); each message that changes a
//   symbol's top 10 emits one kSnapshot with resync = 1 (the decoder's book is authoritative).
//   Trades emit kTrade; Bitstamp's order-level feed emits kOrderAdd / kOrderCancel / kTrade.
// - Stale books: a sequence gap (Binance U != previous u + 1, Coinbase/Bitstamp none available,
//   Kraken a checksum mismatch) is counted (sequence_gap / checksum_mismatch), reported once
//   with file:line, and the book is marked stale: ONE empty kSnapshot is emitted (no levels: no
//   book-based rule can fire on a wrong book; trades keep flowing) and diffs are dropped (counted
//   in dropped_while_stale) until the venue's next snapshot resynchronises it.
// - Bad input (not JSON, a field missing or of the wrong type, a price that is not a decimal or
//   not a whole number of ticks) is reported to InputErrors (kMalformedLine / kBadPrice /
//   kBadSize with file:line) and the message is skipped; the decoder keeps going. Control
//   messages (subscriptions, heartbeats, klines, unknown channels) are counted as `ignored`.
// Threading: one thread per decoder (the source thread). No allocation per message in steady
// state except book growth.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/input_errors.h"
#include "core/symbol_table.h"

namespace ts::crypto {

enum class Venue : uint8_t {
  kBinance = 0,   // spot combined streams: depthUpdate, bookTicker, trade, aggTrade; REST depth
  kCoinbase,      // level2 snapshot/l2update, ticker, match/last_match
  kKraken,        // book (snapshot as/bs, updates a/b with CRC32 "c"), trade
  kBitstamp,      // diff_order_book_<pair>, live_trades_<pair>; REST order_book
  kBitstampL3,    // 2015 order-level feed: order_created/changed/deleted, trade, order_book
};
constexpr int kVenueCount = 5;
// "binance", "coinbase", "kraken", "bitstamp", "bitstamp-l3".
const char* venue_name(Venue v);
// The symbol prefix: "BINANCE", "COINBASE", "KRAKEN", "BITSTAMP" (both Bitstamp feeds).
const char* venue_prefix(Venue v);
// Accepts a venue name or an encoding/format name: "binance", "binance-json", "bitstamp-l3", ...
bool parse_venue(std::string_view name, Venue& out);

// Where a message came from and when it was received.
struct MessageContext {
  int64_t recv_ns = 0;         // receive time, ns since the Unix epoch
  std::string_view file;       // file name (or "topic[partition]") for reports
  uint64_t line = 0;           // line number (or offset) for reports; also the events' seq
  bool is_rest = false;        // a REST body (depth snapshot)
  std::string_view url;        // the REST URL (Binance: ?symbol=..., Bitstamp: .../order_book/<pair>)
  std::string_view event_name; // Bitstamp L3 lines: the event before the JSON ("order_created")
};

// What a decoder has seen. Gaps and checksum mismatches are feed health, not input errors: a
// real capture with a real gap replays with 0 input errors and sequence_gap = 1.
struct DecoderCounters {
  uint64_t messages = 0;             // decode() calls
  uint64_t events = 0;               // events appended
  uint64_t ignored = 0;              // control / unknown-channel messages
  uint64_t bad_messages = 0;         // messages rejected (also in InputErrors)
  uint64_t snapshots = 0;            // book snapshots applied (initial syncs and resyncs)
  uint64_t sequence_gap = 0;         // diffs that did not follow the previous one
  uint64_t checksum_mismatch = 0;    // Kraken CRC32 differences
  uint64_t checksums_verified = 0;   // Kraken CRC32 matches
  uint64_t stale_books = 0;          // times a book was marked stale
  uint64_t dropped_before_sync = 0;  // diffs before the first snapshot, or already in it
  uint64_t dropped_while_stale = 0;  // diffs dropped because the book was stale
  uint64_t unknown_orders = 0;       // Bitstamp L3: change/delete of an order never seen
  uint64_t crossed_books = 0;        // a diff left the venue book crossed (kept, counted)
  uint64_t bbo_checks = 0;           // Binance: bookTicker compared with the book at the same u
  uint64_t bbo_mismatches = 0;       // ... and found different
  // The first issues (gaps, mismatches) as "file:line: sequence_gap: BINANCE:NKNUSDT U=.. after u=..".
  std::vector<std::string> issues;
  static constexpr size_t kMaxIssues = 20;
};

class VenueDecoder {
 public:
  virtual ~VenueDecoder() = default;
  // Decodes one message; appends its events to `out`. Returns false when the message was
  // rejected as bad input (counted in InputErrors); true otherwise (also for ignored messages).
  virtual bool decode(std::string_view json, const MessageContext& where, std::vector<Event>& out) = 0;
  virtual Venue venue() const = 0;
  const DecoderCounters& counters() const { return counters_; }

 protected:
  DecoderCounters counters_;
};

// A decoder for `venue` that interns symbols in `symbols` and reports bad input to `errors`;
// both must outlive it.
std::unique_ptr<VenueDecoder> make_venue_decoder(Venue venue, SymbolTable& symbols, InputErrors& errors);

}  // namespace ts::crypto
