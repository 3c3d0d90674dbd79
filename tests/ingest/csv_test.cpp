#include <gtest/gtest.h>

#include <fstream>

#include "core/decimal.h"

#include "ingest/csv_source.h"
#include "ingest/csv_writer.h"
#include "ingest/lobster_source.h"
#include "ingest/sse_source.h"
#include "ingest_test_util.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::scratch_dir;

std::vector<Event> read_csv(const std::string& path, SymbolTable& symbols, InputErrors& errors) {
  auto src = make_csv_source(path, symbols, errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  if (!src) return {};
  return drain(*src.value());
}

void write_csv(const std::string& path, const std::vector<Event>& events, const SymbolTable& symbols) {
  auto w = CsvWriter::open(path);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  for (const auto& e : events) ASSERT_TRUE(w.value().write(e, symbols).is_ok());
  EXPECT_EQ(w.value().events_written(), events.size());
  ASSERT_TRUE(w.value().close().is_ok());
}

void expect_same(const std::vector<Event>& a, const std::vector<Event>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(ts::testing::same_event(a[i], b[i])) << "event " << i;
}

TEST(CsvRoundTrip, LobsterDayIsExactInPlainAndGzip) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  SymbolTable symbols;
  InputErrors errors;
  auto src = make_lobster_source(ts::testing::lobster_file("GOOG", "message", 10).string(), symbols, errors);
  ASSERT_TRUE(src.is_ok());
  const auto original = drain(*src.value());
  const auto dir = scratch_dir("csv_roundtrip_lobster");
  for (const char* name : {"goog.csv", "goog.csv.gz"}) {
    const std::string path = (dir / name).string();
    write_csv(path, original, symbols);
    SymbolTable back_symbols;
    InputErrors back_errors;
    const auto back = read_csv(path, back_symbols, back_errors);
    EXPECT_EQ(back_errors.total(), 0u) << name;
    expect_same(original, back);
    EXPECT_EQ(back_symbols.name(0), "GOOG");
  }
  // The gzip file really is compressed, and the plain one starts with the header line.
  EXPECT_LT(std::filesystem::file_size(dir / "goog.csv.gz") * 3, std::filesystem::file_size(dir / "goog.csv"));
  EXPECT_EQ(ts::testing::read_bytes((dir / "goog.csv").string()).substr(0, 33), "kind,symbol,exch_ts_ns,seq,fields");
}

TEST(CsvRoundTrip, SseDayIsExactAndCarriesPrevClose) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SymbolTable symbols;
  InputErrors errors;
  auto src = make_sse_source(ts::testing::sse_day_dir().string(), symbols, errors);
  ASSERT_TRUE(src.is_ok());
  const auto original = drain(*src.value());
  const std::string path = (scratch_dir("csv_roundtrip_sse") / "sse.csv.gz").string();
  write_csv(path, original, symbols);
  SymbolTable back_symbols;
  InputErrors back_errors;
  const auto back = read_csv(path, back_symbols, back_errors);
  EXPECT_EQ(back_errors.total(), 0u);
  expect_same(original, back);
  EXPECT_EQ(back_symbols.name(0), "600519.SH");
  EXPECT_EQ(back_symbols.ref(0).prev_close, 184'576);
  EXPECT_EQ(back_symbols.ref(0).limit_up, 203'034);
}

TEST(CsvWriter, RejectsSymbolsTheFormatCannotCarry) {
  SymbolTable symbols;
  const SymbolId bad = symbols.intern("BAD NAME");
  auto w = CsvWriter::open((scratch_dir("csv_writer_bad") / "x.csv").string());
  ASSERT_TRUE(w.is_ok());
  Event e = Event::make(EventKind::kStatus);
  e.symbol = bad;
  EXPECT_EQ(w.value().write(e, symbols).code(), StatusCode::kInvalidArgument);
  e.symbol = 42;
  EXPECT_EQ(w.value().write(e, symbols).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(w.value().close().is_ok());
  EXPECT_EQ(CsvWriter::open("/nonexistent/dir/x.csv").status().code(), StatusCode::kIoError);
}

// A symbol whose units are not the defaults of its name (a crypto pair read in the digits its
// venue writes) keeps them through the file: the reader takes the units line over its own
// reference, so ticks and size counts mean the same prices and sizes.
TEST(CsvUnits, TheWrittenUnitsComeBackWithoutAReference) {
  SymbolTable symbols;
  const SymbolId id = symbols.intern("BINANCE:NKNUSDT");
  RefData& r = symbols.mutable_ref(id);
  r.tick = Decimal{1, 5};
  r.tick_size = 1e-5;
  r.size_increment = Decimal{1, 1};
  Event t = Event::make(EventKind::kTrade);
  t.symbol = id;
  t.exch_ts_ns = 1'600'000'000'000'000'000;
  t.trade.price = 35'210;  // 0.35210
  t.trade.qty = 123;       // 12.3
  t.trade.aggressor = Side::kBuy;
  Event g = t;  // a symbol in the units its name implies: no units line, the file as before
  g.symbol = symbols.intern("600519.SH");
  const auto dir = scratch_dir("csv_units");
  const std::string path = (dir / "u.csv").string();
  write_csv(path, {t, g, t}, symbols);
  const std::string text = ts::testing::read_bytes(path);
  EXPECT_NE(text.find("\nunits,BINANCE:NKNUSDT,0.00001,0.1\ntrade,BINANCE:NKNUSDT,"), std::string::npos) << text;
  EXPECT_EQ(text.find("units,", text.find("units,") + 1), std::string::npos) << "one units line, NKNUSDT's only";

  SymbolTable back;
  InputErrors errors;
  const auto events = read_csv(path, back, errors);
  EXPECT_EQ(errors.total(), 0u);
  ASSERT_EQ(events.size(), 3u);
  const RefData& b = back.ref(events[0].symbol);
  EXPECT_EQ(b.tick.to_string(), "0.00001");
  EXPECT_EQ(b.size_increment.to_string(), "0.1");
  EXPECT_DOUBLE_EQ(b.tick_size, 1e-5);
  EXPECT_EQ(format_units(events[0].trade.price, b.tick), "0.35210");
  EXPECT_EQ(format_units(events[0].trade.qty, b.size_increment), "12.3");

  // Bad units lines are counted and skipped; the events still read.
  std::ofstream(dir / "bad.csv") << "units,X:Y,0.01\n"
                                  << "units,X:Y,-0.01,1\n"
                                  << "units,X:Y,0.01,abc\n"
                                  << "status,X:Y,1,1,continuous\n";
  SymbolTable bad_symbols;
  InputErrors bad;
  EXPECT_EQ(read_csv((dir / "bad.csv").string(), bad_symbols, bad).size(), 1u);
  EXPECT_EQ(bad.count(InputError::kWrongColumnCount), 1u);
  EXPECT_EQ(bad.count(InputError::kBadPrice), 1u);
  EXPECT_EQ(bad.count(InputError::kBadSize), 1u);
}

TEST(CsvSource, MissingFileIsNotFound) {
  SymbolTable symbols;
  InputErrors errors;
  EXPECT_EQ(make_csv_source("/nonexistent/x.csv", symbols, errors).status().code(), StatusCode::kNotFound);
}

std::string snapshot_line(const std::string& sym, int64_t ts, const char* phase, int64_t bid, int64_t ask) {
  std::string s = "snapshot," + sym + "," + std::to_string(ts) + ",7," + phase + ",18450,18400,1000,184500.5";
  for (int i = 0; i < 10; ++i) s.append(",").append(std::to_string(bid - i)).append(",100");
  for (int i = 0; i < 10; ++i) s.append(",").append(std::to_string(ask + i)).append(",200");
  return s;
}

std::string nan_turnover_line() {
  std::string s = snapshot_line("600519.SH", 2500, "continuous", 18449, 18451);
  return s.replace(s.find("184500.5"), 8, "nan");
}

const std::string kGood1 = snapshot_line("600519.SH", 1000, "continuous", 18449, 18451);
const std::string kGood2 = "order_add,600519.SH,2000,8,77,18450,100,B";
const std::string kGood3 = "trade,600519.SH,3000,9,18451,100,S,77,78";
const std::string kGood4 = "status,600519.SH,4000,10,halted";

struct BadCsv {
  const char* name;
  std::string line;  // inserted between kGood2 and kGood3
  InputError kind;
};

class CsvBadInput : public ::testing::TestWithParam<BadCsv> {};

TEST_P(CsvBadInput, CountsTheBadLineAndKeepsTheRest) {
  const std::string path = (scratch_dir(std::string("csv_bad_") + GetParam().name) / "x.csv").string();
  ts::testing::write_text(path, "kind,symbol,exch_ts_ns,seq,fields\n" + kGood1 + "\n" + kGood2 + "\n" + GetParam().line +
                                    "\n" + kGood3 + "\n" + kGood4 + "\n");
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_csv(path, symbols, errors);
  EXPECT_EQ(errors.count(GetParam().kind), 1u) << input_error_name(GetParam().kind);
  EXPECT_EQ(errors.total(), 1u) << "only the bad line is reported";
  ASSERT_EQ(ev.size(), 4u) << "every good line is delivered";
  EXPECT_EQ(ev[0].kind, EventKind::kSnapshot);
  EXPECT_EQ(ev[0].snapshot.bids[9].price, 18440);
  EXPECT_DOUBLE_EQ(ev[0].snapshot.cum_turnover, 184500.5);
  EXPECT_EQ(ev[1].kind, EventKind::kOrderAdd);
  EXPECT_EQ(ev[2].kind, EventKind::kTrade);
  EXPECT_EQ(ev[2].trade.aggressor, Side::kSell);
  EXPECT_EQ(ev[3].kind, EventKind::kStatus);
  EXPECT_EQ(ev[3].status.phase, Phase::kHalted);
  EXPECT_EQ(ev[3].seq, 10u);
  EXPECT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols.ref(0).prev_close, 18400);
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, CsvBadInput,
    ::testing::Values(
        BadCsv{"kind", "quote,600519.SH,2500,1,1,1,1,B", InputError::kMalformedLine},
        BadCsv{"side", "order_add,600519.SH,2500,1,77,18450,100,X", InputError::kMalformedLine},
        BadCsv{"phase", "status,600519.SH,2500,1,lunch", InputError::kMalformedLine},
        BadCsv{"ts_text", "status,600519.SH,25x0,1,halted", InputError::kMalformedLine},
        BadCsv{"columns", "trade,600519.SH,2500,1,18451,100,S,77", InputError::kWrongColumnCount},
        BadCsv{"snapshot_columns", "snapshot,600519.SH,2500,1,continuous", InputError::kWrongColumnCount},
        BadCsv{"empty_symbol", "order_add,,2500,1,77,18450,100,B", InputError::kUnknownSymbol},
        BadCsv{"spaced_symbol", "order_add,600 519,2500,1,77,18450,100,B", InputError::kUnknownSymbol},
        BadCsv{"nan_turnover", nan_turnover_line(), InputError::kNotANumber},
        BadCsv{"empty_qty", "order_add,600519.SH,2500,1,77,18450,,B", InputError::kNotANumber},
        BadCsv{"zero_price", "trade,600519.SH,2500,1,0,100,S,77,78", InputError::kBadPrice},
        BadCsv{"negative_add_price", "order_add,600519.SH,2500,1,77,-5,100,B", InputError::kBadPrice},
        BadCsv{"zero_size", "order_cancel,600519.SH,2500,1,77,18450,0,B", InputError::kBadSize},
        BadCsv{"crossed", snapshot_line("600519.SH", 2500, "continuous", 18451, 18451), InputError::kCrossedBook},
        BadCsv{"backwards", "order_add,600519.SH,1500,1,77,18450,100,B", InputError::kOutOfOrder},
        BadCsv{"garbage", std::string("order_add,600519.SH,2500,1,\0\0\0,18450,100,B", 42), InputError::kBinaryGarbage}),
    [](const ::testing::TestParamInfo<BadCsv>& p) { return std::string(p.param.name); });

// An empty or header-only file used to give 0 events and no word.
TEST(CsvSource, EmptyOrHeaderOnlyFileIsCountedOnce) {
  const auto dir = ts::testing::scratch_dir("csv_empty");
  ts::testing::write_text(dir / "empty.csv", "");
  ts::testing::write_text(dir / "header.csv", "kind,symbol,exch_ts_ns\n");
  ts::testing::write_gz(dir / "header.csv.gz", "kind,symbol,exch_ts_ns\n");
  for (const char* name : {"empty.csv", "header.csv", "header.csv.gz"}) {
    SymbolTable symbols;
    InputErrors errors;
    errors.set_quiet(true);
    EXPECT_TRUE(read_csv((dir / name).string(), symbols, errors).empty());
    EXPECT_EQ(errors.count(InputError::kEmptyFile), 1u) << name;
    EXPECT_EQ(errors.total(), 1u) << name;
  }
}

TEST(CsvSource, AuctionSnapshotWithBidEqualAskIsNotCrossed) {
  const std::string path = (scratch_dir("csv_auction") / "x.csv").string();
  ts::testing::write_text(path, snapshot_line("600519.SH", 1, "opening_auction", 18450, 18450) + "\n" +
                                    snapshot_line("600519.SH", 2, "opening_auction", 18451, 18450) + "\n");
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_csv(path, symbols, errors);  // no header line: accepted too
  EXPECT_EQ(ev.size(), 1u);
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 1u);
}

TEST(CsvSource, TruncatedGzipDeliversEverythingBeforeTheCut) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  SymbolTable symbols;
  InputErrors errors;
  auto src = make_lobster_source(ts::testing::lobster_file("GOOG", "message", 10).string(), symbols, errors);
  ASSERT_TRUE(src.is_ok());
  const auto original = drain(*src.value());
  const auto dir = scratch_dir("csv_truncated");
  write_csv((dir / "full.csv.gz").string(), original, symbols);
  const std::string gz = ts::testing::read_bytes((dir / "full.csv.gz").string());
  ts::testing::write_text(dir / "cut.csv.gz", gz.substr(0, gz.size() / 2));
  SymbolTable back_symbols;
  InputErrors back_errors;
  back_errors.set_quiet(true);
  const auto back = read_csv((dir / "cut.csv.gz").string(), back_symbols, back_errors);
  EXPECT_EQ(back_errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(back_errors.total(), 1u);
  ASSERT_GT(back.size(), 50'000u);
  ASSERT_LT(back.size(), original.size());
  for (size_t i = 0; i < back.size(); ++i) ASSERT_TRUE(ts::testing::same_event(back[i], original[i])) << i;
}

TEST(CsvSource, CutLastLineIsATruncation) {
  const std::string path = (scratch_dir("csv_cut_plain") / "x.csv").string();
  ts::testing::write_text(path, kGood2 + "\n" + kGood3.substr(0, 20));
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_csv(path, symbols, errors);
  EXPECT_EQ(ev.size(), 1u);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
}

}  // namespace
}  // namespace ts
