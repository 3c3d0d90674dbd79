#pragma once
// Reading LOBSTER order-book files (TICKER_date_start_end_orderbook_N.csv[.gz]): row k is the
// visible book after message k, 4 columns per level: ask price, ask size, bid price, bid size.
// Prices are dollars × 10000 in the file and integer ticks of $0.01 here (rounded half up, so
// a half-cent price rounds to the cent above); the vendor's empty-level dummies
// (±9999999999, size 0) become empty levels {0, 0}. Levels beyond kBookLevels are ignored.
// Used by the LOBSTER source (its opening snapshot) and by book tests to compare against the
// vendor's own reconstruction.
#include <cstdint>
#include <memory>
#include <string>

#include "core/event.h"
#include "core/input_errors.h"
#include "core/status.h"

namespace ts {

namespace ingest {
class LineReader;
}

// LOBSTER price (dollars × 10000) → ticks of $0.01, half up (away from zero for negative
// prices): 5777750 → 57778. Defined for every int64 (the sum it once rounded with overflowed
// near INT64_MAX; found by lobster_fuzz with UBSan).
constexpr Price lobster_price_ticks(int64_t price_x10000) {
  const int64_t q = price_x10000 / 100, r = price_x10000 % 100;
  return r >= 50 ? q + 1 : r <= -50 ? q - 1 : q;
}
constexpr int64_t kLobsterEmptyPrice = 9999999999;  // ask side dummy; bids carry the negative

// Why one orderbook level (vendor units) is bad, or nullptr when it is good. Empty: size 0, or
// the dummy price (asks ≥ kLobsterEmptyPrice, bids ≤ −kLobsterEmptyPrice). Otherwise the price
// and the size must be positive.
constexpr const char* lobster_level_error(int64_t ask_px, int64_t ask_sz, int64_t bid_px, int64_t bid_sz) {
  if (ask_sz < 0 || bid_sz < 0) return "negative size in an orderbook level";
  if (ask_sz > 0 && ask_px <= 0) return "ask price <= 0 at a level with a size";
  if (bid_sz > 0 && bid_px <= 0 && bid_px > -kLobsterEmptyPrice) return "bid price <= 0 at a level with a size";
  return nullptr;
}

struct LobsterBookRow {
  uint64_t line = 0;   // 1-based row number = number of the message it follows
  int levels = 0;      // levels in the file (columns / 4), at most kBookLevels kept
  Level asks[kBookLevels];  // best first; empty {0, 0}
  Level bids[kBookLevels];
};

class LobsterBookReader {
 public:
  // Fails with kNotFound when the file does not exist.
  static Result<std::unique_ptr<LobsterBookReader>> open(const std::string& path, InputErrors& errors);
  // The same over a reader already open (ingest::LineReader::open_memory for bytes in memory).
  static std::unique_ptr<LobsterBookReader> open(std::unique_ptr<ingest::LineReader> lines, InputErrors& errors);
  ~LobsterBookReader();
  // Next valid row; false at end of file. Bad rows (column count not 4×levels of the first
  // row, non-numbers, garbage) are reported to `errors` and skipped.
  bool next(LobsterBookRow& row);
  // Levels per row (from the first row's column count); 0 before the first row is read.
  int levels() const { return levels_; }

 private:
  LobsterBookReader(std::unique_ptr<ingest::LineReader> lines, InputErrors& errors);
  std::unique_ptr<ingest::LineReader> lines_;
  InputErrors& errors_;
  int levels_ = 0;
};

// Same as LobsterBookReader::open.
inline Result<std::unique_ptr<LobsterBookReader>> open_lobster_orderbook(const std::string& path,
                                                                         InputErrors& errors) {
  return LobsterBookReader::open(path, errors);
}

}  // namespace ts
