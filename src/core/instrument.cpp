#include "core/instrument.h"

#include <algorithm>
#include <cctype>

namespace ts {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// US tickers: letters, digits and the class separators '.', '-' ("BRK.B", "BF-B").
bool is_us_ticker(std::string_view s) {
  if (s.empty() || s.size() > 12 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') return false;
  }
  return true;
}

bool is_alnum_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status unknown_symbol(std::string_view symbol, const std::string& why) {
  return {StatusCode::kNotFound, "unknown_symbol: \"" + std::string(symbol) + "\": " + why};
}

// The A-share board of a 6-digit code on a given exchange suffix; kUnknown when no rule fits.
Board a_share_board(std::string_view code, std::string_view exchange) {
  if (!all_digits(code) || code.size() != 6) return Board::kUnknown;
  if (exchange == "SH") {
    if (code.starts_with("688") || code.starts_with("689")) return Board::kSseStar;
    if (code.starts_with("60")) return Board::kSseMain;
  } else if (exchange == "SZ") {
    if (code.starts_with("300") || code.starts_with("301") || code.starts_with("302")) {
      return Board::kSzseChiNext;
    }
    if (code[0] == '0' && code[1] == '0' && code[2] >= '0' && code[2] <= '4') {
      return Board::kSzseMain;
    }
  } else if (exchange == "BJ") {
    if (code[0] == '4' || code[0] == '8' || code.starts_with("92")) return Board::kBse;
  }
  return Board::kUnknown;
}

// The exchange a bare 6-digit A-share code belongs to, by its first digit.
std::string_view a_share_exchange(std::string_view code) {
  if (code[0] == '6') return "SH";
  if (code[0] == '0' || code[0] == '3') return "SZ";
  return "BJ";
}

// The quote currency of a crypto pair: "BTCUSDT" → "USDT", "BTC-USD" → "USD"; "" if unknown.
std::string quote_currency(std::string_view pair) {
  if (auto sep = pair.find_first_of("-/_"); sep != std::string_view::npos) {
    return std::string(pair.substr(sep + 1));
  }
  // Longest suffix first so USDT is not read as ...USD + T.
  static constexpr std::string_view kQuotes[] = {"FDUSD", "USDT", "USDC", "BUSD", "TUSD",
                                                 "USD",   "EUR",  "GBP",  "JPY",  "TRY",
                                                 "BTC",   "ETH",  "BNB"};
  for (std::string_view q : kQuotes) {
    if (pair.size() > q.size() && pair.ends_with(q)) return std::string(q);
  }
  return "";
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Instrument crypto_instrument(std::string_view symbol, std::string_view venue,
                             std::string_view pair) {
  Instrument in = instrument_for_board(symbol, Board::kCrypto);
  in.venue = upper(venue);
  in.currency = quote_currency(upper(pair));
  in.min_notional = crypto_min_notional(in.venue, in.currency);
  return in;
}

}  // namespace

const char* market_kind_name(MarketKind m) {
  switch (m) {
    case MarketKind::kChinaA: return "cn-a";
    case MarketKind::kUs: return "us";
    case MarketKind::kCrypto: return "crypto";
    case MarketKind::kUnknown: break;
  }
  return "unknown";
}

std::optional<MarketKind> parse_market_kind(std::string_view name) {
  for (auto m : {MarketKind::kChinaA, MarketKind::kUs, MarketKind::kCrypto}) {
    if (name == market_kind_name(m)) return m;
  }
  return std::nullopt;
}

const char* board_name(Board b) {
  switch (b) {
    case Board::kSseMain: return "sse_main";
    case Board::kSseStar: return "sse_star";
    case Board::kSzseMain: return "szse_main";
    case Board::kSzseChiNext: return "szse_chinext";
    case Board::kBse: return "bse";
    case Board::kNasdaq: return "nasdaq";
    case Board::kNyse: return "nyse";
    case Board::kUsListed: return "us";
    case Board::kCrypto: return "crypto";
    case Board::kUnknown: break;
  }
  return "unknown";
}

std::optional<Board> parse_board(std::string_view name) {
  for (int i = 1; i <= static_cast<int>(Board::kCrypto); ++i) {
    if (name == board_name(static_cast<Board>(i))) return static_cast<Board>(i);
  }
  return std::nullopt;
}

MarketKind market_of_board(Board b) {
  switch (b) {
    case Board::kSseMain:
    case Board::kSseStar:
    case Board::kSzseMain:
    case Board::kSzseChiNext:
    case Board::kBse: return MarketKind::kChinaA;
    case Board::kNasdaq:
    case Board::kNyse:
    case Board::kUsListed: return MarketKind::kUs;
    case Board::kCrypto: return MarketKind::kCrypto;
    case Board::kUnknown: break;
  }
  return MarketKind::kUnknown;
}

Decimal crypto_min_notional(std::string_view venue, std::string_view currency) {
  static constexpr std::string_view kMoneyQuotes[] = {"USD",  "USDT", "USDC", "FDUSD", "BUSD",
                                                      "TUSD", "EUR",  "GBP"};
  bool money = false;
  for (std::string_view q : kMoneyQuotes) money = money || currency == q;
  if (!money) return {0, 0};
  if (venue == "BITSTAMP") return {10, 0};
  if (venue == "COINBASE") return {1, 0};
  if (venue == "KRAKEN") return {5, 1};
  return {5, 0};  // BINANCE, and the default of a venue not listed
}

double trading_lot_units(const Instrument& in, double price) {
  const double lot = double(in.lot_size) * in.size_increment.to_double();
  if (price <= 0 || !in.min_notional.is_positive()) return lot;
  return std::max(lot, in.min_notional.to_double() / price);
}

int32_t limit_bps_for(Board board, bool is_st) {
  switch (board) {
    case Board::kSseMain:
    case Board::kSzseMain: return is_st ? 500 : 1000;
    case Board::kSseStar:
    case Board::kSzseChiNext: return 2000;
    case Board::kBse: return 3000;
    default: return 0;
  }
}

Price limit_up_ticks(Price prev_close, int32_t limit_bps) {
  if (prev_close <= 0 || limit_bps <= 0) return 0;
  return (prev_close * (10000 + limit_bps) + 5000) / 10000;  // half up: both terms positive
}

Price limit_down_ticks(Price prev_close, int32_t limit_bps) {
  if (prev_close <= 0 || limit_bps <= 0 || limit_bps >= 10000) return 0;
  return (prev_close * (10000 - limit_bps) + 5000) / 10000;
}

Instrument instrument_for_board(std::string_view symbol, Board board) {
  Instrument in;
  in.symbol = std::string(symbol);
  in.board = board;
  in.market = market_of_board(board);
  switch (in.market) {
    case MarketKind::kChinaA:
      in.venue = board == Board::kBse ? "BSE"
                 : (board == Board::kSseMain || board == Board::kSseStar) ? "SSE"
                                                                         : "SZSE";
      in.currency = "CNY";
      in.tick_size = {1, 2};
      in.size_increment = {1, 0};
      in.lot_size = 100;
      in.calendar = "cn-a";
      in.time_zone = "Asia/Shanghai";
      break;
    case MarketKind::kUs:
      in.venue = board == Board::kNasdaq ? "NASDAQ" : board == Board::kNyse ? "NYSE" : "US";
      in.currency = "USD";
      in.tick_size = {1, 2};
      in.size_increment = {1, 0};
      in.lot_size = 1;
      in.calendar = "us";
      in.time_zone = "America/New_York";
      break;
    case MarketKind::kCrypto:
      in.tick_size = {1, 2};
      in.size_increment = {1, 5};
      in.lot_size = 1;
      in.calendar = "crypto";
      in.time_zone = "UTC";
      break;
    case MarketKind::kUnknown: break;
  }
  in.limit_bps = limit_bps_for(board, false);
  return in;
}

Result<Instrument> instrument_from_symbol(std::string_view symbol,
                                          const InstrumentDefaults& defaults) {
  if (symbol.empty()) return unknown_symbol(symbol, "empty symbol");
  if (auto colon = symbol.find(':'); colon != std::string_view::npos) {
    const auto venue = symbol.substr(0, colon);
    const auto pair = symbol.substr(colon + 1);
    const bool pair_ok = !pair.empty() && pair.find_first_not_of(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-/_") ==
        std::string_view::npos;
    if (!is_alnum_word(venue) || !pair_ok) {
      return unknown_symbol(symbol, "expected VENUE:PAIR (letters and digits)");
    }
    return crypto_instrument(symbol, venue, pair);
  }
  if (auto dot = symbol.rfind('.'); dot != std::string_view::npos) {
    const auto code = symbol.substr(0, dot);
    std::string_view suffix = symbol.substr(dot + 1);
    if (suffix == "SS") suffix = "SH";
    if (suffix == "SH" || suffix == "SZ" || suffix == "BJ") {
      const Board b = a_share_board(code, suffix);
      if (b == Board::kUnknown) {
        return unknown_symbol(symbol, "not an A-share stock code on " + std::string(suffix) +
                                          " (funds, bonds, indices need a reference row)");
      }
      return instrument_for_board(symbol, b);
    }
    if (suffix == "US") {
      if (!is_us_ticker(code)) return unknown_symbol(symbol, "not a US ticker");
      return instrument_for_board(symbol, Board::kUsListed);
    }
    // Another suffix ("BRK.B"): read as a bare ticker below.
  }
  if (!defaults.bare_ticker_market) {
    return unknown_symbol(symbol, "no market suffix and no default market configured");
  }
  switch (*defaults.bare_ticker_market) {
    case MarketKind::kChinaA:
      if (all_digits(symbol) && symbol.size() == 6) {
        const Board b = a_share_board(symbol, a_share_exchange(symbol));
        if (b != Board::kUnknown) return instrument_for_board(symbol, b);
      }
      return unknown_symbol(symbol, "not an A-share stock code (default market cn-a)");
    case MarketKind::kUs:
      if (is_us_ticker(symbol)) return instrument_for_board(symbol, Board::kUsListed);
      return unknown_symbol(symbol, "not a US ticker (default market us)");
    case MarketKind::kCrypto:
      if (is_alnum_word(symbol)) return crypto_instrument(symbol, defaults.crypto_venue, symbol);
      return unknown_symbol(symbol, "not a crypto pair (default market crypto)");
    case MarketKind::kUnknown: break;
  }
  return unknown_symbol(symbol, "no rule for this symbol");
}

}  // namespace ts
