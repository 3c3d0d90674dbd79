#pragma once
// ticksentry's normalized CSV ("csv" format): names and column counts shared by the writer and
// the source. The full description is docs/formats.md.
#include <cstddef>
#include <string_view>

#include "core/event.h"

namespace ts::ingest {

// First line of every file the writer produces; readers skip a first line starting "kind,".
constexpr std::string_view kCsvHeader = "kind,symbol,exch_ts_ns,seq,fields";

// Columns per kind, the 4 common ones (kind, symbol, exch_ts_ns, seq) included.
constexpr size_t kCsvCommonColumns = 4;
constexpr size_t kCsvSnapshotColumns = kCsvCommonColumns + 6 + 4 * kBookLevels;  // 50, resync last
// Snapshot lines written before the resync column existed (read as resync = 0).
constexpr size_t kCsvSnapshotColumnsNoResync = kCsvSnapshotColumns - 1;            // 49
constexpr size_t kCsvTradeColumns = kCsvCommonColumns + 5;                        // 9
constexpr size_t kCsvOrderColumns = kCsvCommonColumns + 4;                        // 8
constexpr size_t kCsvStatusColumns = kCsvCommonColumns + 1;                       // 5

// Not an event: the units of a symbol's integer prices and sizes, written before its first event
// ("units,BINANCE:NKNUSDT,0.00001,0.1": tick size, size increment, exact decimals), so that a
// file replays right whatever instrument reference the replay has.
constexpr std::string_view kCsvUnitsKind = "units";
constexpr size_t kCsvUnitsColumns = 4;

constexpr char side_letter(Side s) { return s == Side::kBuy ? 'B' : s == Side::kSell ? 'S' : 'N'; }

// A symbol name the csv format accepts: 1..32 characters from [A-Za-z0-9._-:/], starting with a
// letter or digit ("600519.SH", "GOOG", "BRK.B", crypto "BINANCE:BTCUSDT", "KRAKEN:XBT/USD").
// Empty names, spaces, commas, quotes, control bytes are rejected (kUnknownSymbol).
inline bool valid_symbol_name(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (!alnum(s.front())) return false;
  for (char c : s) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-' && c != ':' && c != '/') return false;
  }
  return true;
}

}  // namespace ts::ingest
