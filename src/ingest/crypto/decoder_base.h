#pragma once
// DecoderBase: what the crypto venue decoders share (internal to src/ingest/crypto): the
// padded parse buffer and simdjson DOM parser, the per-symbol book state, unit fitting, the
// publication of a book's top as a kSnapshot, stale marking and issue reporting.
// Threading: one thread, like every VenueDecoder.
#include <simdjson.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ingest/crypto/level_book.h"
#include "ingest/crypto/venue_decoder.h"

namespace ts::crypto {

// A level as the venue wrote it; the views point into the parsed message.
struct RawLevel {
  std::string_view price;
  std::string_view qty;
};

enum class BookSync : uint8_t {
  kWaiting = 0,  // no snapshot yet: diffs are dropped (or kept pending, Binance)
  kLive,         // in sync: diffs apply
  kStale,        // a gap or checksum mismatch: diffs dropped until the next snapshot
};

struct SymbolBook {
  SymbolId id = kInvalidSymbol;
  std::string name;           // "BINANCE:NKNUSDT"
  std::string pair;           // as the venue writes it: "NKNUSDT"
  Decimal tick{1, 2};         // currency per price unit
  Decimal size{1, 0};         // instrument units per size unit
  bool units_fixed = false;
  int price_scale = 0;        // digits the venue writes after the point (Kraken's checksum)
  int qty_scale = 0;
  LevelBook book;
  BookSync sync = BookSync::kWaiting;
  uint64_t last_update = 0;   // Binance: u of the last applied diff (or the snapshot's lastUpdateId)
  bool first_diff = false;    // Binance: the next applied diff is the first after the snapshot
  int64_t snapshot_us = 0;    // Bitstamp: microtimestamp of the snapshot
  size_t depth_limit = 0;     // Kraken: subscribed depth (0 = none)
  Level shown_bids[kBookLevels]{};  // the top last published
  Level shown_asks[kBookLevels]{};
  bool shown = false;         // something was published since the last snapshot/stale
  // Binance: diffs received before the REST snapshot (first U, last u, time, changes).
  struct Pending {
    uint64_t first = 0, last = 0;
    int64_t exch_ns = 0;
    uint64_t line = 0;
    std::vector<std::pair<bool, Level>> changes;  // (is bid, level)
  };
  std::vector<Pending> pending;
  // Binance: the last bookTicker not yet compared (its u, best bid/ask price and qty).
  uint64_t ticker_u = 0;
  Level ticker_bid{}, ticker_ask{};
  // Kraken: each level's checksum text from the last CRC (asks 0..9, then bids 10..19), so a
  // level that did not change is copied, not formatted again. len < 0: empty slot.
  struct CrcText {
    Level level{};
    int len = -1;
    char text[44];
  };
  CrcText crc_text[2][2 * kBookLevels];  // the last CRC's texts, and room for the next one's
  int crc_last = 0;                       // which of the two holds the last CRC's texts
};

class DecoderBase : public VenueDecoder {
 public:
  DecoderBase(SymbolTable& symbols, InputErrors& errors) : symbols_(symbols), errors_(errors) {}

 protected:

  // Parses `json` into `root`; a parse failure is reported (kMalformedLine) and returns false.
  bool parse(std::string_view json, const MessageContext& where, simdjson::dom::element& root);
  // The state of the venue pair `pair` ("NKNUSDT", "BTC-USD", "XBT/USD"), interned as
  // "<PREFIX>:<PAIR upper-cased>" on first use; null when the symbol table is full (reported).
  SymbolBook* book_for(std::string_view pair, const MessageContext& where);
  // Decides the symbol's units before its first conversion: the price tick is RefData's when
  // every price of this first message is a whole number of ticks, else 10^-(digits the venue
  // writes); the size increment is RefData's unless a size is written with more digits than it
  // has, then 10^-max(digits, 8). Also records the written scales. Logged once per symbol whose
  // units change. With `parsed`: returns true when the units were kept and every level converted
  // (price and size), the levels then in *parsed as convert() would give them; false otherwise
  // (convert as usual). PERF NOTE: a symbol's first message is a 1,000-level REST snapshot on
  // Bitstamp and Binance, and parsing it twice was ~20 % of those decodes (perf).
  bool fit_units(SymbolBook& b, std::span<const RawLevel> levels, std::vector<Level>* parsed = nullptr);
  // Converts `raw` into levels of the symbol's units; a bad value rejects the message.
  bool convert(SymbolBook& b, std::span<const RawLevel> raw, std::vector<Level>& out, const MessageContext& where);
  bool convert_one(SymbolBook& b, const RawLevel& raw, Level& out, const MessageContext& where);

  // Publishes the book's top as a kSnapshot (resync = 1) when it differs from the last one
  // published. A crossed book is not published (counted in crossed_books).
  void publish_top(SymbolBook& b, const MessageContext& where, int64_t exch_ns, std::vector<Event>& out);
  // A gap or mismatch: counts `kind` (already incremented by the caller), notes the issue,
  // publishes one empty book and drops diffs until the next snapshot.
  void mark_stale(SymbolBook& b, const MessageContext& where, int64_t exch_ns, std::vector<Event>& out,
                  const char* kind, const std::string& detail);
  void push_trade(SymbolBook& b, const MessageContext& where, int64_t exch_ns, const Level& print, Side aggressor,
                  std::vector<Event>& out, uint64_t buy_id = 0, uint64_t sell_id = 0);
  void push_event(Event& e, std::vector<Event>& out);

  // Reports bad input (counted in InputErrors and bad_messages); returns false.
  bool reject(const MessageContext& where, InputError kind, std::string_view detail);
  // Keeps "file:line: kind: detail" among the first issues and logs it (first few only).
  void note_issue(const MessageContext& where, const char* kind, const std::string& detail);
  bool ignore() {
    ++counters_.ignored;
    return true;
  }

  SymbolTable& symbols_;
  InputErrors& errors_;
  simdjson::dom::parser parser_;
  std::string buf_;
  static constexpr size_t kScanBooks = 16;  // up to this many symbols book_for() scans, not hashes
  std::vector<std::unique_ptr<SymbolBook>> books_;
  std::unordered_map<std::string, SymbolBook*> by_pair_;
  std::string key_;
  std::vector<Level> levels_;  // scratch
  std::vector<RawLevel> raw_;  // scratch
};

// ns since the epoch from "2021-04-17T16:43:37.123456Z" (fraction optional); false if malformed.
bool parse_iso8601_ns(std::string_view text, int64_t& out_ns);
// ns since the epoch from a venue time counted in `unit_ns` (ms: 1'000'000, µs: 1'000); false when
// it lies past int64 ns (April 2262): no venue's time, and the product overflowed (UB; found by
// crypto_fuzz with UBSan on a Binance "E").
bool venue_time_ns(uint64_t count, int64_t unit_ns, int64_t& out_ns);
// An unsigned integer from a JSON string ("1641343691879007") or number.
bool json_u64(simdjson::dom::element e, uint64_t& out);
// Appends the [[price, qty, ...], ...] array `arr` as raw levels; false if malformed.
bool raw_levels(simdjson::dom::element arr, std::vector<RawLevel>& out);

}  // namespace ts::crypto
