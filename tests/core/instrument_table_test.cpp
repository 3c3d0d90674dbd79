#include <gtest/gtest.h>

#include <fstream>

#include "core/instrument_table.h"
#include "test_data.h"

namespace ts {
namespace {

const Instrument& resolved(InstrumentTable& t, std::string_view symbol) {
  auto r = t.resolve(symbol);
  EXPECT_TRUE(r) << symbol << ": " << r.status().to_string();
  static const Instrument kNone;
  return r ? *r.value() : kNone;
}

TEST(InstrumentTable, ReferenceRowsOverrideTheSymbolDefaults) {
  const std::string csv =
      "# reference data\n"
      "symbol,board,currency,tick_size,size_increment,lot_size,limit_pct,st,calendar,time_zone\n"
      "600000.SH,,,,,,,1,,\n"              // ST: ±5 %
      "300001.SZ,,,,,,,yes,,\n"            // ST on ChiNext: still ±20 %
      "510300.SH,sse_main,,0.001,,,10,,,\n"  // an ETF no symbol rule knows
      "BINANCE:ETHUSDT,,,0.01,0.0001,,,,,\n"
      "AAPL.US,nasdaq,,,,100,,,,\n"
      "688001.SH,,,,,,none,,,\n";
  InstrumentTable t;
  InputErrors errors;
  auto report = t.load_csv_text(csv, "ref.csv", errors);
  ASSERT_TRUE(report) << report.status().to_string();
  EXPECT_EQ(report.value().rows_read, 6u);
  EXPECT_TRUE(report.value().bad_rows.empty());
  EXPECT_EQ(errors.total(), 0u);

  EXPECT_TRUE(resolved(t, "600000.SH").is_st);
  EXPECT_EQ(resolved(t, "600000.SH").limit_bps, 500);
  EXPECT_FALSE(resolved(t, "600519.SH").is_st);  // not in the file: the code's defaults
  EXPECT_EQ(resolved(t, "600519.SH").limit_bps, 1000);
  EXPECT_TRUE(resolved(t, "300001.SZ").is_st);
  EXPECT_EQ(resolved(t, "300001.SZ").limit_bps, 2000);
  const Instrument& etf = resolved(t, "510300.SH");
  EXPECT_EQ(etf.board, Board::kSseMain);
  EXPECT_EQ(etf.tick_size.to_string(), "0.001");
  EXPECT_EQ(etf.limit_bps, 1000);
  EXPECT_EQ(etf.lot_size, 100);
  const Instrument& eth = resolved(t, "BINANCE:ETHUSDT");
  EXPECT_EQ(eth.size_increment.to_string(), "0.0001");
  EXPECT_EQ(eth.currency, "USDT");
  EXPECT_EQ(eth.venue, "BINANCE");
  EXPECT_EQ(resolved(t, "AAPL.US").venue, "NASDAQ");
  EXPECT_EQ(resolved(t, "AAPL.US").lot_size, 100);
  EXPECT_EQ(resolved(t, "688001.SH").limit_bps, 0);
  EXPECT_EQ(t.unknown_symbols(), 0u);
}

// The optional `name` column: the instrument's name where the file gives one (feeds carry none);
// an empty cell, or no column, leaves it empty.
TEST(InstrumentTable, NameColumnGivesTheInstrumentsName) {
  InstrumentTable t;
  InputErrors errors;
  auto report = t.load_csv_text("symbol,name,board\n600519.SH,Kweichow Moutai,\nAAPL.US, Apple Inc. ,nasdaq\n000001.SZ,,\n",
                                "names.csv", errors);
  ASSERT_TRUE(report) << report.status().to_string();
  EXPECT_EQ(report.value().rows_read, 3u);
  EXPECT_EQ(errors.total(), 0u);
  EXPECT_EQ(resolved(t, "600519.SH").name, "Kweichow Moutai");
  EXPECT_EQ(resolved(t, "AAPL.US").name, "Apple Inc.") << "trimmed like every cell";
  EXPECT_EQ(resolved(t, "000001.SZ").name, "");
  EXPECT_EQ(resolved(t, "600000.SH").name, "") << "not in the file";
}

TEST(InstrumentTable, BadRowsAreCountedAndNamedTheRestRead) {
  const std::string csv =
      "symbol,tick_size,size_increment,st,board,limit_pct\n"  // line 1, any column order
      "600519.SH,0.01,1,0,,\n"                                // 2 ok
      "600000.SH,0.0x,1,0,,\n"                                // 3 bad tick
      "000001.SZ,0.01,1\n"                                    // 4 wrong column count
      "510300.SH,0.001,1,0,,\n"                               // 5 unknown symbol, no board
      "159915.SZ,0.001,1,0,szse_etf,\n"                       // 6 unknown board
      "600519.SH,0.01,1,0,,\n"                                // 7 duplicate
      "\n"                                                    // 8 blank: skipped
      "300750.SZ,0.01,-1,0,,\n"                               // 9 negative increment
      "000002.SZ,0.01,1,maybe,,\n"                            // 10 bad st flag
      "000004.SZ,0.01,1,0,,150\n"                             // 11 limit 150 %
      ",0.01,1,0,,\n"                                         // 12 empty symbol
      "BINANCE:BTCUSDT,0.01,0.00001,0,,\n";                   // 13 ok
  InstrumentTable t;
  InputErrors errors;
  errors.set_quiet(true);
  auto report = t.load_csv_text(csv, "ref.csv", errors);
  ASSERT_TRUE(report) << report.status().to_string();
  EXPECT_EQ(report.value().rows_read, 2u);
  const auto& bad = report.value().bad_rows;
  ASSERT_EQ(bad.size(), 9u);
  const uint64_t lines[] = {3, 4, 5, 6, 7, 9, 10, 11, 12};
  const char* words[] = {"600000.SH: tick_size \"0.0x\"", "3 fields, the header has 6", "510300.SH",
                         "board \"szse_etf\"", "duplicate symbol (first at line 2)",
                         "size_increment \"-1\"", "st \"maybe\"", "limit_pct \"150\"",
                         "empty symbol"};
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(bad[i].line, lines[i]) << bad[i].message;
    EXPECT_NE(bad[i].message.find(words[i]), std::string::npos) << bad[i].message;
  }
  EXPECT_EQ(errors.total(), 9u);
  EXPECT_EQ(errors.count(InputError::kWrongColumnCount), 1u);
  EXPECT_EQ(errors.count(InputError::kUnknownSymbol), 1u);
  EXPECT_EQ(errors.count(InputError::kMalformedLine), 7u);
  EXPECT_EQ(resolved(t, "BINANCE:BTCUSDT").size_increment.to_string(), "0.00001");
}

TEST(InstrumentTable, AFileWithoutAValidRowIsAnError) {
  InputErrors errors;
  errors.set_quiet(true);
  InstrumentTable t;
  auto all_bad = t.load_csv_text("symbol,tick_size\n600519.SH,abc\n", "bad.csv", errors);
  ASSERT_FALSE(all_bad);
  EXPECT_NE(all_bad.status().message().find("bad.csv: no valid row (1 bad)"), std::string::npos);
  EXPECT_FALSE(t.load_csv_text("", "empty.csv", errors));
  EXPECT_FALSE(t.load_csv_text("symbol,tick\n600519.SH,0.01\n", "col.csv", errors));
  EXPECT_FALSE(t.load_csv_text("board\nsse_main\n", "nosym.csv", errors));
  EXPECT_FALSE(t.load_csv_text("symbol,symbol\n600519.SH,600519.SH\n", "twice.csv", errors));
  EXPECT_EQ(t.reference_rows(), 0u);
  auto missing = t.load_csv("/nonexistent/instruments.csv", errors);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

TEST(InstrumentTable, ReadsAFileAndALaterFileOverrides) {
  const auto dir = testing::scratch_dir("instrument_table");
  const auto a = (dir / "a.csv").string(), b = (dir / "b.csv").string();
  std::ofstream(a) << "symbol,st\r\n600000.SH,1\r\n";  // CRLF line ends too
  std::ofstream(b) << "symbol,st\n600000.SH,0\n";
  InstrumentTable t;
  InputErrors errors;
  ASSERT_TRUE(t.load_csv(a, errors));
  const Instrument* first = t.resolve("600000.SH").value();
  EXPECT_TRUE(first->is_st);
  ASSERT_TRUE(t.load_csv(b, errors));
  EXPECT_FALSE(resolved(t, "600000.SH").is_st);
  EXPECT_TRUE(first->is_st);  // the first object is still alive and unchanged
  EXPECT_EQ(errors.total(), 0u);
}

}  // namespace
}  // namespace ts
