// The SZSE layouts: ten-level snapshots (szse-l2) and the tick-by-tick trade stream with cancels
// (szse-trades), on the real files and on synthetic corruptions.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/clock.h"
#include "exchange_test_util.h"
#include "ingest/line_reader.h"
#include "ingest/open_source.h"
#include "ingest/vendor_csv.h"
#include "ingest/szse_snapshot_source.h"
#include "ingest/szse_trade_source.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::file_lines;
using ts::testing::scratch_dir;
using ts::testing::szse_tick_file;
using ts::testing::szse_trade_file;
using ts::testing::with_field;

constexpr int64_t at(int64_t midnight, int h, int m, int s, int ms) {
  return midnight + ((int64_t(h) * 60 + m) * 60 + s) * kNsPerSec + int64_t(ms) * kNsPerMs;
}
constexpr int64_t k20220601 = midnight_ns(2022, 6, 1, 8);
constexpr int64_t k20230201 = midnight_ns(2023, 2, 1, 8);

std::vector<Event> read_snapshots(const std::string& path, SymbolTable& symbols, InputErrors& errors) {
  auto src = make_szse_snapshot_source(path, symbols, errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  return src ? drain(*src.value()) : std::vector<Event>{};
}

TEST(SzseSnapshots, RealDayReadsCleanWithLimitsPhasesAndVolume) {
  TS_REQUIRE_DATA(szse_tick_file());
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_snapshots(szse_tick_file().string(), symbols, errors);
  EXPECT_EQ(errors.total(), 0u) << "the day's file is clean";
  ASSERT_EQ(ev.size(), 20'980u);
  EXPECT_EQ(symbols.size(), 5u);
  for (size_t i = 1; i < ev.size(); ++i) ASSERT_LE(ev[i - 1].exch_ts_ns, ev[i].exch_ts_ns) << "time order at " << i;
  EXPECT_EQ(ev.front().exch_ts_ns, at(k20220601, 9, 15, 0, 0));

  // 000400.SZ: PreClosePx 19.38, MaxPx 21.32, MinPx 17.44 (main board ±10%).
  const auto id = symbols.find("000400.SZ");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(symbols.ref(*id).prev_close, 1'938);
  EXPECT_EQ(symbols.ref(*id).limit_up, 2'132);
  EXPECT_EQ(symbols.ref(*id).limit_down, 1'744);
  // 300918.SZ (ChiNext ±20%): 8.18 → 9.82 / 6.54.
  const auto gem = symbols.find("300918.SZ");
  ASSERT_TRUE(gem.has_value());
  EXPECT_EQ(symbols.ref(*gem).limit_up, 982);
  EXPECT_EQ(symbols.ref(*gem).limit_down, 654);

  size_t phases[8] = {};
  Qty last_cum = -1;
  const Event* last = nullptr;
  for (const auto& e : ev) {
    ASSERT_EQ(e.kind, EventKind::kSnapshot);
    ++phases[size_t(e.snapshot.phase)];
    if (e.symbol == *id) {
      EXPECT_GE(e.snapshot.cum_volume, last_cum);
      last_cum = e.snapshot.cum_volume;
      last = &e;
    }
  }
  // TradingPhaseCode 1 → opening call (230 rows), 3 → continuous (20,176), 2 and 4 → break
  // (25 + 442), 5 → closing call (92), 6 → closed (15).
  EXPECT_EQ(phases[size_t(Phase::kOpeningAuction)], 230u);
  EXPECT_EQ(phases[size_t(Phase::kContinuous)], 20'176u);
  EXPECT_EQ(phases[size_t(Phase::kBreak)], 467u);
  EXPECT_EQ(phases[size_t(Phase::kClosingAuction)], 92u);
  EXPECT_EQ(phases[size_t(Phase::kClosed)], 15u);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->exch_ts_ns, at(k20220601, 15, 2, 3, 0));
  EXPECT_EQ(last->snapshot.cum_volume, 64'458'834);
  EXPECT_EQ(last->snapshot.last, 2'063);
  EXPECT_EQ(last->snapshot.bids[0].price, 2'063);
  EXPECT_EQ(last->snapshot.asks[0].price, 2'064);
}

TEST(SzseSnapshots, RecordedCsvReplaysIdentically) {
  TS_REQUIRE_DATA(szse_tick_file());
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_snapshots(szse_tick_file().string(), symbols, errors);
  const auto path = (scratch_dir("szse_l2_csv") / "szse.csv.gz").string();
  ts::testing::expect_csv_round_trip(ev, symbols, path);
  // The csv carries prev_close; the limits it derives (±10% / ±20%) are the file's MaxPx/MinPx.
  SymbolTable s2;
  InputErrors e2;
  auto src = make_csv_source(path, s2, e2);
  ASSERT_TRUE(src.is_ok());
  (void)drain(*src.value());
  for (SymbolId id = 0; id < symbols.size(); ++id) {
    const auto back = s2.find(symbols.name(id));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(s2.ref(*back).limit_up, symbols.ref(id).limit_up) << symbols.name(id);
    EXPECT_EQ(s2.ref(*back).limit_down, symbols.ref(id).limit_down) << symbols.name(id);
  }
}

// The first row of the file in continuous trading (TradingPhaseCode 3).
size_t first_continuous_row(const std::vector<std::string>& lines) {
  const size_t phase = ts::testing::column_of(lines[0], "TradingPhaseCode");
  size_t row = 1;
  while (row < lines.size() && with_field(lines[row], phase, "3") != lines[row]) ++row;
  return row;
}

struct SnapshotCorruption {
  const char* name;
  const char* column;
  const char* value;
  InputError kind;
};

class SzseSnapshotBadInput : public ::testing::TestWithParam<SnapshotCorruption> {};

TEST_P(SzseSnapshotBadInput, CountsTheRowWithFileAndLineAndKeepsTheRest) {
  TS_REQUIRE_DATA(szse_tick_file());
  const auto lines = file_lines(szse_tick_file());
  const auto& p = GetParam();
  // Header + 30 continuous-trading rows of one security; the 11th corrupted.
  std::string text = lines[0] + "\n";
  const size_t first = first_continuous_row(lines);
  for (size_t i = first; i < first + 30; ++i) {
    text += (i == first + 10 ? with_field(lines[i], ts::testing::column_of(lines[0], p.column), p.value) : lines[i]) + "\n";
  }
  const auto dir = scratch_dir(std::string("szse_bad_") + p.name);
  ts::testing::write_text((dir / "tick.csv").string(), text);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_snapshots(dir.string(), symbols, errors);  // the folder form
  EXPECT_EQ(errors.total(), 1u);
  EXPECT_EQ(errors.count(p.kind), 1u) << input_error_name(p.kind);
  EXPECT_EQ(ev.size(), 29u);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, SzseSnapshotBadInput,
    ::testing::Values(SnapshotCorruption{"symbol", "SecurityID", "300918.SH", InputError::kUnknownSymbol},
                      SnapshotCorruption{"date", "MDDate", "2022.13.01", InputError::kMalformedLine},
                      SnapshotCorruption{"time", "MDTime", "9:15", InputError::kMalformedLine},
                      SnapshotCorruption{"preclose", "PreClosePx", "0", InputError::kBadPrice},
                      SnapshotCorruption{"nan", "LastPx", "nan", InputError::kNotANumber},
                      SnapshotCorruption{"price", "BuyPrice1", "-8.1", InputError::kBadPrice},
                      SnapshotCorruption{"qty", "SellOrderQty1", "abc", InputError::kMalformedLine},
                      SnapshotCorruption{"volume_down", "TotalVolumeTrade", "-1", InputError::kBadSize},
                      SnapshotCorruption{"backwards", "MDTime", "09:00:00.000", InputError::kOutOfOrder}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(SzseSnapshots, CrossedContinuousRowWrongColumnsAndMissingColumn) {
  TS_REQUIRE_DATA(szse_tick_file());
  const auto lines = file_lines(szse_tick_file());
  const size_t bid = ts::testing::column_of(lines[0], "BuyPrice1"), ask = ts::testing::column_of(lines[0], "SellPrice1");
  const size_t row = first_continuous_row(lines);
  std::string text = lines[0] + "\n" + lines[row] + "\n";
  text += with_field(with_field(lines[row + 1], bid, "20"), ask, "19") + "\n";  // crossed in continuous trading
  text += lines[row + 2] + ",extra\n";                                        // one column too many
  text += lines[row + 3] + "\n";
  const auto dir = scratch_dir("szse_crossed");
  ts::testing::write_gz((dir / "tick.csv.gz").string(), text);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_snapshots((dir / "tick.csv.gz").string(), symbols, errors);
  EXPECT_EQ(ev.size(), 2u);
  EXPECT_EQ(errors.count(InputError::kCrossedBook), 1u);
  EXPECT_EQ(errors.count(InputError::kWrongColumnCount), 1u);

  ts::testing::write_text((dir / "nolimits.csv").string(), "MDDate,MDTime,SecurityID\n2022.06.01,09:15:00.000,000400.SZ\n");
  auto r = make_szse_snapshot_source((dir / "nolimits.csv").string(), symbols, errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_NE(r.status().message().find("PreClosePx"), std::string::npos) << r.status().message();
}

TEST(SzsePhase, VendorDigitsAndExchangeLetters) {
  EXPECT_EQ(szse_phase("1"), Phase::kOpeningAuction);
  EXPECT_EQ(szse_phase("2"), Phase::kBreak);
  EXPECT_EQ(szse_phase("3"), Phase::kContinuous);
  EXPECT_EQ(szse_phase("5"), Phase::kClosingAuction);
  EXPECT_EQ(szse_phase("6"), Phase::kClosed);
  EXPECT_EQ(szse_phase("T0      "), Phase::kContinuous);
  EXPECT_EQ(szse_phase("H"), Phase::kHalted);
  EXPECT_EQ(szse_phase(""), Phase::kUnknown);
  EXPECT_EQ(szse_phase("9"), Phase::kUnknown);
}

// ---- szse-trades --------------------------------------------------------------------------

TEST(SzseTrades, RealStreamTradesAloneWithCancelsCounted) {
  TS_REQUIRE_DATA(szse_trade_file());
  SymbolTable symbols;
  InputErrors errors;
  SzseTradeCounts counts;
  auto src = make_szse_trade_source(szse_trade_file().parent_path().string(), symbols, errors, &counts);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_NE(src.value()->describe().find("trades alone"), std::string::npos);
  const auto ev = drain(*src.value());
  EXPECT_EQ(errors.total(), 0u) << "the file is clean";
  // 133,815 SZSE fills + 14,872 SSE trades; 32,996 SZSE cancels (89,583,446 shares) counted.
  ASSERT_EQ(ev.size(), 133'815u + 14'872u);
  EXPECT_EQ(counts.trades, ev.size());
  EXPECT_EQ(counts.cancels, 32'996u);
  EXPECT_EQ(counts.cancel_qty, 89'583'446);
  const auto sz = symbols.find("000001.SZ"), sh = symbols.find("600000.SH");
  ASSERT_TRUE(sz && sh);
  size_t n_sz = 0, n_sh = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    ASSERT_EQ(ev[i].kind, EventKind::kTrade);
    if (i > 0) {
      ASSERT_LE(ev[i - 1].exch_ts_ns, ev[i].exch_ts_ns) << "the two markets merged in time order, " << i;
    }
    (ev[i].symbol == *sz ? n_sz : n_sh) += 1;
  }
  EXPECT_EQ(n_sz, 133'815u);
  EXPECT_EQ(n_sh, 14'872u);
  // 2013,513935,011,513934,16082,000001,102 ,15.05,100,F,2023.02.01T09:30:00.000,...: the first
  // continuous fill; the later order (bid 513934 > offer 16082) is the buyer: aggressor buy.
  auto it = std::find_if(ev.begin(), ev.end(), [&](const Event& e) {
    return e.symbol == *sz && e.exch_ts_ns >= at(k20230201, 9, 30, 0, 0);
  });
  ASSERT_NE(it, ev.end());
  EXPECT_EQ(it->seq, 513'935u);
  EXPECT_EQ(it->trade.price, 1'505);
  EXPECT_EQ(it->trade.qty, 100);
  EXPECT_EQ(it->trade.buy_order_id, 513'934u);
  EXPECT_EQ(it->trade.sell_order_id, 16'082u);
  EXPECT_EQ(it->trade.aggressor, Side::kBuy);
  // Opening call fills (09:25) have no aggressor.
  auto open = std::find_if(ev.begin(), ev.end(), [&](const Event& e) { return e.symbol == *sz; });
  EXPECT_EQ(open->trade.aggressor, Side::kNone);
  ts::testing::expect_csv_round_trip(ev, symbols, (scratch_dir("szse_trades_csv") / "t.csv.gz").string());
}

TEST(SzseTrades, BadRowsCountedByKindRestRead) {
  TS_REQUIRE_DATA(szse_trade_file());
  const auto lines = file_lines(szse_trade_file());
  const std::string& h = lines[0];
  // An SZSE fill and an SZSE cancel row of the real file.
  size_t fill = 1, cancel = 1;
  while (lines[fill].find(",F,") == std::string::npos) ++fill;
  while (lines[cancel].find(",4,") == std::string::npos) ++cancel;
  using ts::testing::column_of;
  const std::vector<std::pair<std::string, InputError>> bad = {
      {with_field(lines[fill], column_of(h, "Market"), "HK"), InputError::kUnknownSymbol},
      {with_field(lines[fill], column_of(h, "TradePrice"), "0"), InputError::kBadPrice},
      {with_field(lines[fill], column_of(h, "TradeQty"), "0"), InputError::kBadSize},
      {with_field(lines[fill], column_of(h, "ExecType"), "X"), InputError::kMalformedLine},
      {with_field(lines[fill], column_of(h, "TradeTime"), "2023.02.01 09:30"), InputError::kMalformedLine},
      {with_field(lines[fill], column_of(h, "OfferApplSeqNum"), "0"), InputError::kUnknownOrder},
      {with_field(lines[cancel], column_of(h, "TradePrice"), "15.1"), InputError::kBadPrice},
      {with_field(lines[cancel], column_of(h, "OfferApplSeqNum"), "77"), InputError::kUnknownOrder},
      {lines[fill], InputError::kOutOfOrder},  // the same ApplSeqNum again
  };
  for (const auto& [row, kind] : bad) {
    const auto dir = scratch_dir("szse_trades_bad");
    ts::testing::write_text((dir / "tradeData.csv").string(), h + "\n" + lines[fill] + "\n" + lines[cancel] + "\n" + row + "\n");
    SymbolTable symbols;
    InputErrors errors;
    errors.set_quiet(true);
    SzseTradeCounts counts;
    auto src = make_szse_trade_source((dir / "tradeData.csv").string(), symbols, errors, &counts);
    ASSERT_TRUE(src.is_ok());
    EXPECT_EQ(drain(*src.value()).size(), 1u) << row;
    EXPECT_EQ(counts.cancels, 1u) << row;
    EXPECT_EQ(errors.total(), 1u) << row;
    EXPECT_EQ(errors.count(kind), 1u) << input_error_name(kind) << ": " << row;
  }
}

// A date after 2261 is a bad row, counted: its midnight in ns since the epoch overflowed int64
// (UB: found by szse_trades_fuzz and sse_l3_fuzz with UBSan) and the row went on with a wrapped
// time. Read in memory (the reader entry point the fuzz targets use), so no data is needed.
TEST(SzseTrades, DateBeyondTheInt64NsRangeIsABadRow) {
  int y = 0;
  unsigned m = 0, d = 0;
  EXPECT_TRUE(ingest::parse_ymd("2261.12.31", y, m, d));
  EXPECT_FALSE(ingest::parse_ymd("2262.01.01", y, m, d));
  EXPECT_FALSE(ingest::parse_ymd("26230201", y, m, d));
  const std::string file =
      "ChannelNo,ApplSeqNum,BidApplSeqNum,OfferApplSeqNum,SecurityID,TradePrice,TradeQty,ExecType,TradeTime,"
      "TradeBSFlag,Market\n"
      "2011,100,90,95,000001,13.52,500,F,2623.02.01T09:30:00.320,,SZ\n"
      "2011,101,91,96,000001,13.53,100,F,2023.02.01T09:30:01.000,,SZ\n";
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  auto src = make_szse_trade_source_from_reader(ingest::LineReader::open_memory(file, "tradeData.csv", errors),
                                                symbols, errors);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const auto ev = drain(*src.value());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exch_ts_ns, k20230201 + ((9 * 60 + 30) * 60 + 1) * kNsPerSec);
  EXPECT_EQ(errors.count(InputError::kMalformedLine), 1u);
  EXPECT_EQ(errors.total(), 1u);
}

TEST(ExchangeFormats, RegisteredInOpenSource) {
  for (const char* f : {"szse-l2", "szse-trades", "sse-l3"}) {
    EXPECT_NE(std::find(source_formats().begin(), source_formats().end(), f), source_formats().end()) << f;
    SymbolTable symbols;
    InputErrors errors;
    auto r = open_source(f, {"/nonexistent/x"}, symbols, errors);
    ASSERT_FALSE(r.is_ok()) << f;
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << f << ": " << r.status().to_string();
  }
}

}  // namespace
}  // namespace ts
