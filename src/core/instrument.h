#pragma once
// Instrument: what ticksentry knows about one tradable symbol: where it trades (venue, board),
// in what units (currency, tick size, size increment, lot), under which price-limit rule, and
// on which calendar and time zone. Prices on the hot path are int64 ticks of `tick_size` and
// sizes int64 counts of `size_increment`; Decimal turns them back into exact text.
// Defaults come from the symbol itself (instrument_from_symbol); the reference file
// (core/instrument_table.h) overrides them per symbol.
// Everything here is a pure function of its arguments; safe from any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/decimal.h"
#include "core/event.h"
#include "core/status.h"

namespace ts {

// The market an instrument's session schedule, calendar and defaults follow.
enum class MarketKind : uint8_t { kUnknown = 0, kChinaA, kUs, kCrypto };
const char* market_kind_name(MarketKind m);                  // "cn-a", "us", "crypto"
std::optional<MarketKind> parse_market_kind(std::string_view name);

enum class Board : uint8_t {
  kUnknown = 0,
  kSseMain,       // Shanghai main board (60xxxx)
  kSseStar,       // Shanghai STAR market (688xxx, 689xxx)
  kSzseMain,      // Shenzhen main board (000-004xxx)
  kSzseChiNext,   // Shenzhen ChiNext (300xxx, 301xxx, 302xxx)
  kBse,           // Beijing Stock Exchange (4xxxxx, 8xxxxx, 92xxxx)
  kNasdaq,
  kNyse,
  kUsListed,      // a US listing whose exchange the symbol does not say ("AAPL.US")
  kCrypto,        // a crypto venue ("BINANCE:BTCUSDT"); the venue is Instrument::venue
};
const char* board_name(Board b);                             // "sse_main", "szse_chinext", ...
std::optional<Board> parse_board(std::string_view name);
MarketKind market_of_board(Board b);

struct Instrument {
  std::string symbol;             // as given: "600519.SH", "BINANCE:BTCUSDT"
  std::string name;               // the instrument's name ("Kweichow Moutai"); "" unless the
                                  // reference file's `name` column gives one (feeds carry none)
  std::string venue;              // "SSE", "SZSE", "BSE", "NASDAQ", "NYSE", "US", "BINANCE"
  Board board = Board::kUnknown;
  MarketKind market = MarketKind::kUnknown;
  std::string currency;           // "CNY", "USD", "USDT"; empty when a crypto pair's quote
                                  // currency is not recognised
  Decimal tick_size{1, 2};        // currency per price tick
  Decimal size_increment{1, 0};   // instrument units (shares, coins) per size unit
  int64_t lot_size = 1;           // size increments per board lot (A-shares: 100)
  // The venue's minimum order notional in `currency` (Binance's NOTIONAL filter, Bitstamp's
  // minimum_order); 0 = none (shares: the board lot alone is the smallest order). Crypto
  // defaults: crypto_min_notional().
  Decimal min_notional{0, 0};
  // The previous close in `currency` when the reference file gives one; 0 = unknown. Sets the
  // day's limit prices (limit_up_ticks) for feeds that do not carry a previous close (order-flow
  // feeds such as sse-l3, LOBSTER); a feed that does carry one (SSE PreCloPrice) wins.
  Decimal prev_close{0, 0};
  int32_t limit_bps = 0;          // price-limit band in basis points (1000 = ±10 %); 0 = none
  bool is_st = false;             // A-share special treatment (only the reference file says)
  std::string calendar;           // "cn-a", "us", "crypto": config/calendars/<id>.csv
  std::string time_zone;          // IANA: "Asia/Shanghai", "America/New_York", "UTC"
};

// How symbols without a market suffix are read.
struct InstrumentDefaults {
  // The market of a bare ticker ("AAPL", "600519"); nothing (the default) makes a bare ticker an
  // unknown_symbol: it is never silently assumed to be US.
  std::optional<MarketKind> bare_ticker_market;
  // The venue given to bare crypto pairs ("BTCUSDT") when bare_ticker_market is kCrypto.
  std::string crypto_venue = "BINANCE";
};

// The instrument `symbol` names, with the defaults of its board:
//   "600519.SH" / ".SS"  SSE (60xxxx main, 688/689 STAR), CNY 0.01, 1 share, lot 100, ±10/±20 %
//   "000001.SZ"          SZSE (000-004 main, 300-302 ChiNext), CNY 0.01, 1 share, lot 100
//   "430047.BJ"          BSE (4xxxxx, 8xxxxx, 92xxxx), CNY 0.01, 1 share, lot 100, ±30 %
//   "AAPL.US"            US listing, USD 0.01, 1 share, lot 1, no limits
//   "BINANCE:BTCUSDT"    crypto: quote currency from the pair's suffix (USDT, USDC, USD, ...),
//                        0.01 and 0.00001 (Binance BTCUSDT's filters), lot 1, no limits, UTC
//   bare "AAPL"/"600519" as defaults.bare_ticker_market says.
// kNotFound ("unknown_symbol: ...") when no rule matches: a 6-digit code outside the A-share
// prefixes above (funds, bonds, indices need a reference row), a malformed symbol, or a bare
// ticker without a configured default market.
Result<Instrument> instrument_from_symbol(std::string_view symbol,
                                          const InstrumentDefaults& defaults = {});
// The defaults of a board alone (the reference file builds symbols no rule knows from these).
Instrument instrument_for_board(std::string_view symbol, Board board);

// The default minimum order notional of a crypto venue for a pair quoted in `currency`, from the
// venues' published rules: BINANCE 5 (spot NOTIONAL filter, BTCUSDT), BITSTAMP 10
// (trading-pairs-info minimum_order), COINBASE 1 (min_market_funds), KRAKEN 0.5 (costmin), any
// other venue 5; only for quotes in USD, a USD stablecoin, EUR or GBP ({0, 0}, none, otherwise:
// 5 BTC is no floor). docs/instruments.md.
Decimal crypto_min_notional(std::string_view venue, std::string_view currency);

// The smallest order the venue takes at `price` (currency per instrument unit), in instrument
// units (shares, coins): max(lot_size × size_increment, min_notional / price). The "trading lot"
// that floors are counted in (features: volume_std_floor_lots), so that 10 lots of a coin are
// 10 minimum orders, not 10 × 0.00001 BTC. price <= 0: the lot alone.
double trading_lot_units(const Instrument& in, double price);

// The limit band of a board: ±10 % main boards, ±20 % STAR/ChiNext, ±30 % BSE; ST main-board
// stocks ±5 % (ST on STAR/ChiNext stays ±20 %, on BSE ±30 %); 0 (none) outside China.
int32_t limit_bps_for(Board board, bool is_st);

// Limit prices in ticks as the exchanges compute them: prev_close × (1 ± band) rounded half up
// to the tick, in exact integer arithmetic. 0 when prev_close ≤ 0 or the band is 0 (no limit).
Price limit_up_ticks(Price prev_close, int32_t limit_bps);
Price limit_down_ticks(Price prev_close, int32_t limit_bps);

}  // namespace ts
