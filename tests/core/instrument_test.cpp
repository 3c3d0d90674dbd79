#include <gtest/gtest.h>

#include "core/instrument.h"
#include "core/instrument_ref.h"
#include "core/instrument_table.h"
#include "core/symbol_table.h"

namespace ts {
namespace {

Instrument must(std::string_view symbol, const InstrumentDefaults& d = {}) {
  auto r = instrument_from_symbol(symbol, d);
  EXPECT_TRUE(r) << symbol << ": " << r.status().to_string();
  return r ? r.value() : Instrument{};
}

void expect_a_share(const Instrument& in, Board board, const char* venue, int32_t bps) {
  EXPECT_EQ(in.board, board) << in.symbol;
  EXPECT_EQ(in.market, MarketKind::kChinaA) << in.symbol;
  EXPECT_EQ(in.venue, venue) << in.symbol;
  EXPECT_EQ(in.currency, "CNY");
  EXPECT_EQ(in.tick_size.to_string(), "0.01");
  EXPECT_EQ(in.size_increment.to_string(), "1");
  EXPECT_EQ(in.lot_size, 100);
  EXPECT_EQ(in.limit_bps, bps) << in.symbol;
  EXPECT_FALSE(in.is_st);
  EXPECT_EQ(in.calendar, "cn-a");
  EXPECT_EQ(in.time_zone, "Asia/Shanghai");
}

TEST(Instrument, AShareBoardsFromTheCode) {
  expect_a_share(must("600519.SH"), Board::kSseMain, "SSE", 1000);
  expect_a_share(must("601825.SS"), Board::kSseMain, "SSE", 1000);
  expect_a_share(must("688981.SH"), Board::kSseStar, "SSE", 2000);
  expect_a_share(must("689009.SH"), Board::kSseStar, "SSE", 2000);
  expect_a_share(must("000001.SZ"), Board::kSzseMain, "SZSE", 1000);
  expect_a_share(must("002594.SZ"), Board::kSzseMain, "SZSE", 1000);
  expect_a_share(must("300750.SZ"), Board::kSzseChiNext, "SZSE", 2000);
  expect_a_share(must("301236.SZ"), Board::kSzseChiNext, "SZSE", 2000);
  expect_a_share(must("430047.BJ"), Board::kBse, "BSE", 3000);
  expect_a_share(must("830799.BJ"), Board::kBse, "BSE", 3000);
  expect_a_share(must("920002.BJ"), Board::kBse, "BSE", 3000);
}

TEST(Instrument, UsAndCryptoDefaults) {
  const Instrument aapl = must("AAPL.US");
  EXPECT_EQ(aapl.board, Board::kUsListed);
  EXPECT_EQ(aapl.market, MarketKind::kUs);
  EXPECT_EQ(aapl.currency, "USD");
  EXPECT_EQ(aapl.tick_size.to_string(), "0.01");
  EXPECT_EQ(aapl.lot_size, 1);
  EXPECT_EQ(aapl.limit_bps, 0);
  EXPECT_EQ(aapl.calendar, "us");
  EXPECT_EQ(aapl.time_zone, "America/New_York");
  EXPECT_EQ(must("BRK.B.US").board, Board::kUsListed);

  const Instrument btc = must("BINANCE:BTCUSDT");
  EXPECT_EQ(btc.board, Board::kCrypto);
  EXPECT_EQ(btc.market, MarketKind::kCrypto);
  EXPECT_EQ(btc.venue, "BINANCE");
  EXPECT_EQ(btc.currency, "USDT");
  EXPECT_EQ(btc.tick_size.to_string(), "0.01");
  EXPECT_EQ(btc.size_increment.to_string(), "0.00001");
  EXPECT_EQ(btc.limit_bps, 0);
  EXPECT_EQ(btc.time_zone, "UTC");
  EXPECT_EQ(must("bitstamp:btcusd").currency, "USD");
  EXPECT_EQ(must("bitstamp:btcusd").venue, "BITSTAMP");
  EXPECT_EQ(must("COINBASE:BTC-USD").currency, "USD");
  EXPECT_EQ(must("KRAKEN:ETHEUR").currency, "EUR");
}

TEST(Instrument, BareTickersTakeTheConfiguredMarketNeverUsSilently) {
  auto none = instrument_from_symbol("AAPL");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("unknown_symbol"), std::string::npos);

  InstrumentDefaults us;
  us.bare_ticker_market = MarketKind::kUs;
  EXPECT_EQ(must("AAPL", us).market, MarketKind::kUs);
  EXPECT_FALSE(instrument_from_symbol("600519", us));

  InstrumentDefaults cn;
  cn.bare_ticker_market = MarketKind::kChinaA;
  expect_a_share(must("600519", cn), Board::kSseMain, "SSE", 1000);
  expect_a_share(must("300750", cn), Board::kSzseChiNext, "SZSE", 2000);
  expect_a_share(must("430047", cn), Board::kBse, "BSE", 3000);
  EXPECT_FALSE(instrument_from_symbol("AAPL", cn));

  InstrumentDefaults crypto;
  crypto.bare_ticker_market = MarketKind::kCrypto;
  crypto.crypto_venue = "BITSTAMP";
  EXPECT_EQ(must("BTCUSD", crypto).venue, "BITSTAMP");
}

TEST(Instrument, SymbolsNoRuleKnowsAreUnknown) {
  for (const char* s : {"510300.SH", "000001.SH", "159915.SZ", "123456.SZ", "60051.SH",
                        "600519.HK", ":BTCUSDT", "BINANCE:", "BINANCE:BTC USDT", "1AAPL.US",
                        ""}) {
    auto r = instrument_from_symbol(s);
    EXPECT_FALSE(r) << s;
    if (!r) {
      EXPECT_NE(r.status().message().find("unknown_symbol"), std::string::npos) << s;
    }
  }
  InstrumentTable table;
  EXPECT_FALSE(table.resolve("510300.SH"));
  EXPECT_FALSE(table.resolve("AAPL"));
  EXPECT_TRUE(table.resolve("600519.SH"));
  EXPECT_EQ(table.unknown_symbols(), 2u);
}

TEST(Instrument, LimitBandsPerBoardAndSt) {
  EXPECT_EQ(limit_bps_for(Board::kSseMain, false), 1000);
  EXPECT_EQ(limit_bps_for(Board::kSseMain, true), 500);
  EXPECT_EQ(limit_bps_for(Board::kSzseMain, true), 500);
  EXPECT_EQ(limit_bps_for(Board::kSseStar, true), 2000);      // ST keeps ±20 % on STAR
  EXPECT_EQ(limit_bps_for(Board::kSzseChiNext, true), 2000);  // and on ChiNext
  EXPECT_EQ(limit_bps_for(Board::kBse, true), 3000);
  EXPECT_EQ(limit_bps_for(Board::kNasdaq, false), 0);
  EXPECT_EQ(limit_bps_for(Board::kCrypto, false), 0);
}

TEST(Instrument, LimitPricesRoundHalfUpToTheTick) {
  // ±10 %: 1845.76 → 2030.336 / 1661.184 → 2030.34 / 1661.18; 10.05 → 11.055 / 9.045 → 11.06 / 9.05.
  EXPECT_EQ(limit_up_ticks(184576, 1000), 203034);
  EXPECT_EQ(limit_down_ticks(184576, 1000), 166118);
  EXPECT_EQ(limit_up_ticks(1005, 1000), 1106);
  EXPECT_EQ(limit_down_ticks(1005, 1000), 905);
  // ±20 %: 10.03 → 12.036 / 8.024 → 12.04 / 8.02.
  EXPECT_EQ(limit_up_ticks(1003, 2000), 1204);
  EXPECT_EQ(limit_down_ticks(1003, 2000), 802);
  // ±5 % (ST): 2.50 → 2.625 / 2.375 → 2.63 / 2.38 (half up; banker's rounding would give 2.62).
  EXPECT_EQ(limit_up_ticks(250, 500), 263);
  EXPECT_EQ(limit_down_ticks(250, 500), 238);
  // ±30 % (BSE): 10.05 → 13.065 / 7.035 → 13.07 / 7.04.
  EXPECT_EQ(limit_up_ticks(1005, 3000), 1307);
  EXPECT_EQ(limit_down_ticks(1005, 3000), 704);
  // No band, no previous close: no limit.
  EXPECT_EQ(limit_up_ticks(1005, 0), 0);
  EXPECT_EQ(limit_down_ticks(0, 1000), 0);
}

TEST(Instrument, ExactLimitsAgreeWithTheSymbolTablesDoubleFormula) {
  // core/symbol_table.h computes the same limits in double (+1e-9); they must agree on every
  // previous close from 0.01 to 3000.00.
  for (Price p = 1; p <= 300000; ++p) {
    for (int32_t bps : {500, 1000, 2000, 3000}) {
      ASSERT_EQ(limit_up_ticks(p, bps), limit_up_price(p, bps / 10000.0)) << p << " " << bps;
      ASSERT_EQ(limit_down_ticks(p, bps), limit_down_price(p, bps / 10000.0)) << p << " " << bps;
    }
  }
}

TEST(Instrument, FillsSymbolTableRefData) {
  SymbolTable t;
  const SymbolId id = t.intern("600000.SH");
  t.set_prev_close(id, 1000);
  Instrument in = must("600000.SH");
  in.is_st = true;
  in.limit_bps = limit_bps_for(in.board, true);
  fill_ref_data(in, t.mutable_ref(id));
  EXPECT_EQ(t.ref(id).market, Market::kShanghai);
  EXPECT_DOUBLE_EQ(t.ref(id).tick_size, 0.01);
  EXPECT_EQ(t.ref(id).lot_size, 100);
  EXPECT_TRUE(t.ref(id).is_st);
  EXPECT_EQ(t.ref(id).limit_up, 1050);
  EXPECT_EQ(t.ref(id).limit_down, 950);

  const SymbolId btc = t.intern("BINANCE:BTCUSDT");
  const Instrument btc_in = must("BINANCE:BTCUSDT");  // r.instrument points at it
  fill_ref_data(btc_in, t.mutable_ref(btc));
  EXPECT_EQ(t.ref(btc).market, Market::kUnknown);
  EXPECT_EQ(t.ref(btc).limit_up, 0);
  EXPECT_EQ(t.ref(btc).lot_size, 1);
}

TEST(Instrument, InternInstrumentFillsTheSymbolTableFromTheMaster) {
  InstrumentTable instruments;
  InputErrors errors;
  ASSERT_TRUE(instruments.load_csv_text("symbol,st\n300001.SZ,1\n", "ref.csv", errors));
  SymbolTable symbols;
  const SymbolId id = intern_instrument(symbols, instruments, "300001.SZ").value();
  EXPECT_TRUE(symbols.ref(id).is_st);
  EXPECT_DOUBLE_EQ(symbols.ref(id).limit_pct, 0.20);
  const SymbolId btc = intern_instrument(symbols, instruments, "BINANCE:BTCUSDT").value();
  EXPECT_EQ(symbols.ref(btc).limit_pct, 0.0);
  EXPECT_EQ(symbols.name(btc), "BINANCE:BTCUSDT");
  auto unknown = intern_instrument(symbols, instruments, "510300.SH");
  ASSERT_FALSE(unknown);
  EXPECT_FALSE(symbols.find("510300.SH").has_value());  // nothing interned
  EXPECT_EQ(instruments.unknown_symbols(), 1u);
}

// A coin's trading lot is the venue's minimum order, not one size increment: ten lots of BTC
// must be ten orders a user could place, not 0.0001 BTC (volume_burst's floor counts lots).
TEST(Instrument, CryptoTradingLotIsTheVenuesMinimumOrder) {
  EXPECT_EQ(must("BINANCE:BTCUSDT").min_notional.to_string(), "5");
  EXPECT_EQ(must("BITSTAMP:BTCUSD").min_notional.to_string(), "10");
  EXPECT_EQ(must("COINBASE:BTC-USD").min_notional.to_string(), "1");
  EXPECT_EQ(must("KRAKEN:XBT/USD").min_notional.to_string(), "0.5");
  EXPECT_EQ(must("OKX:BTCUSDT").min_notional.to_string(), "5");
  EXPECT_FALSE(must("BINANCE:ETHBTC").min_notional.is_positive());  // quoted in a coin: none
  EXPECT_FALSE(must("600519.SH").min_notional.is_positive());

  // Bitstamp BTC at $236.50: a $10 order is 0.04228 BTC; below that price the lot never goes
  // under the size increment.
  const Instrument bitstamp = must("BITSTAMP:BTCUSD");
  EXPECT_NEAR(trading_lot_units(bitstamp, 236.50), 10 / 236.50, 1e-12);
  EXPECT_NEAR(trading_lot_units(bitstamp, 0), 0.00001, 1e-15);
  EXPECT_NEAR(trading_lot_units(must("600519.SH"), 1800.0), 100.0, 0);

  // In the feed's increments: a decoder that refined Bitstamp's size to 1e-8 BTC still gets
  // 0.04228 BTC (4,228,330 increments), not 1 increment = 1e-8 BTC.
  SymbolTable t;
  const SymbolId id = t.intern("BITSTAMP:BTCUSD");
  fill_ref_data(bitstamp, t.mutable_ref(id));
  RefData& r = t.mutable_ref(id);
  EXPECT_NEAR(lot_increments(r, 23650), 10 / 236.50 / 0.00001, 1e-6);
  r.size_increment = Decimal{1, 8};
  EXPECT_NEAR(lot_increments(r, 23650), 10 / 236.50 / 1e-8, 1e-3);
  // A share: the board lot in shares, whatever the price.
  const SymbolId sh = t.intern("600519.SH");
  const Instrument sh_in = must("600519.SH");  // RefData keeps a pointer to its instrument
  fill_ref_data(sh_in, t.mutable_ref(sh));
  EXPECT_EQ(lot_increments(t.ref(sh), 180000), 100.0);
  // Same notional, same lot in money: $5 on Binance at $60,000 is 8.33 increments of 0.00001.
  const SymbolId bn = t.intern("BINANCE:BTCUSDT");
  const Instrument bn_in = must("BINANCE:BTCUSDT");
  fill_ref_data(bn_in, t.mutable_ref(bn));
  EXPECT_NEAR(lot_increments(t.ref(bn), 6'000'000), 5 / 60000.0 / 0.00001, 1e-9);
}

// A reference row overrides the minimum notional; a bad value is a counted, named bad row.
TEST(Instrument, MinNotionalFromTheReferenceFile) {
  InstrumentTable table;
  InputErrors errors;
  auto report = table.load_csv_text(
      "symbol,min_notional\nBITSTAMP:BTCUSD,25\nBINANCE:BTCUSDT,none\nBINANCE:ETHBTC,-1\n"
      "KRAKEN:XBT/USD,abc\n",
      "ref.csv", errors);
  ASSERT_TRUE(report) << report.status().to_string();
  EXPECT_EQ(report.value().rows_read, 2u);
  ASSERT_EQ(report.value().bad_rows.size(), 2u);
  EXPECT_NE(report.value().bad_rows[0].message.find("min_notional \"-1\""), std::string::npos)
      << report.value().bad_rows[0].message;
  EXPECT_EQ(table.resolve("BITSTAMP:BTCUSD").value()->min_notional.to_string(), "25");
  EXPECT_FALSE(table.resolve("BINANCE:BTCUSDT").value()->min_notional.is_positive());
}

}  // namespace
}  // namespace ts
