#include "ingest/sse_source.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "ingest/line_reader.h"
#include "ingest_test_util.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::scratch_dir;
using ts::testing::sse_day_dir;

constexpr int64_t kMidnight = midnight_ns(2023, 2, 1, 8);  // Shanghai, UTC+8
constexpr int64_t hms(int h, int m, int s, int ms) {
  return kMidnight + ((int64_t(h) * 60 + m) * 60 + s) * kNsPerSec + int64_t(ms) * kNsPerMs;
}

std::vector<Event> read_sse(const std::string& dir, SymbolTable& symbols, InputErrors& errors) {
  auto src = make_sse_source(dir, symbols, errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  if (!src) return {};
  return drain(*src.value());
}

// Lines of a real day file (header = line 1).
std::vector<std::string> real_lines(const char* name) {
  const std::string text = ts::testing::read_gz((sse_day_dir() / (std::string(name) + ".csv.gz")).string());
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  return lines;
}

std::string with_field(const std::string& row, size_t index, const std::string& value) {
  size_t start = 0;
  for (size_t i = 0; i < index; ++i) start = row.find(',', start) + 1;
  const size_t end = row.find(',', start);
  return row.substr(0, start) + value + (end == std::string::npos ? "" : row.substr(end));
}

TEST(SseSource, DayCountsAndKnownRows) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_sse(sse_day_dir().string(), symbols, errors);
  EXPECT_EQ(errors.total(), 0u) << "the day's files are clean";
  const auto c = ts::testing::count_kinds(ev);
  EXPECT_EQ(c[size_t(EventKind::kSnapshot)], 5'109u);
  EXPECT_EQ(c[size_t(EventKind::kOrderAdd)], 39'067u);
  EXPECT_EQ(c[size_t(EventKind::kOrderCancel)], 15'668u);
  EXPECT_EQ(c[size_t(EventKind::kTrade)], 27'135u);
  EXPECT_EQ(ev.size(), 86'979u);

  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols.name(0), "600519.SH");
  // PreCloPrice 1845.75999999999999 → 184576 ticks; limits ±10%.
  EXPECT_EQ(symbols.ref(0).prev_close, 184'576);
  EXPECT_EQ(symbols.ref(0).limit_up, 203'034);
  EXPECT_EQ(symbols.ref(0).limit_down, 166'118);

  // First: the 08:45:18 pre-open snapshot with empty levels.
  const Event& first = ev.front();
  EXPECT_EQ(first.kind, EventKind::kSnapshot);
  EXPECT_EQ(first.exch_ts_ns, hms(8, 45, 18, 0));
  EXPECT_EQ(first.seq, 864u);
  EXPECT_EQ(first.snapshot.phase, Phase::kPreOpen);
  EXPECT_EQ(first.snapshot.bids[0].price, 0);
  EXPECT_EQ(first.snapshot.asks[0].qty, 0);
  EXPECT_EQ(first.snapshot.prev_close, 184'576);

  // 0,68338,6,600519,09:15:00.220,A,1248,1801.00999999999999,100,B,76839,...
  auto it = std::find_if(ev.begin(), ev.end(), [](const Event& e) { return e.kind == EventKind::kOrderAdd; });
  ASSERT_NE(it, ev.end());
  EXPECT_EQ(it->exch_ts_ns, hms(9, 15, 0, 20));
  EXPECT_EQ(it->order.order_id, 90u);
  EXPECT_EQ(it->order.price, 174'500);
  EXPECT_EQ(it->order.qty, 50);
  EXPECT_EQ(it->order.side, Side::kSell);
  EXPECT_EQ(it->seq, 76'838u);
  ++it;
  EXPECT_EQ(it->order.order_id, 1248u);
  EXPECT_EQ(it->order.price, 180'101);  // float noise rounded to the tick
  EXPECT_EQ(it->order.side, Side::kBuy);

  // 0,8502,6,600519,09:25:00.940,1854.98…,100,185498,113304,38420,N,78259,...
  auto tr = std::find_if(ev.begin(), ev.end(), [](const Event& e) { return e.kind == EventKind::kTrade; });
  ASSERT_NE(tr, ev.end());
  EXPECT_EQ(tr->exch_ts_ns, hms(9, 25, 0, 940));
  EXPECT_EQ(tr->trade.price, 185'498);
  EXPECT_EQ(tr->trade.qty, 100);
  EXPECT_EQ(tr->trade.aggressor, Side::kNone);
  EXPECT_EQ(tr->trade.buy_order_id, 113'304u);
  EXPECT_EQ(tr->trade.sell_order_id, 38'420u);
  EXPECT_EQ(tr->seq, 78'259u);
  // First continuous trade: 09:30:00.050, B aggressor.
  auto ct = std::find_if(ev.begin(), ev.end(),
                         [](const Event& e) { return e.kind == EventKind::kTrade && e.trade.aggressor != Side::kNone; });
  ASSERT_NE(ct, ev.end());
  EXPECT_EQ(ct->exch_ts_ns, hms(9, 30, 0, 50));
  EXPECT_EQ(ct->trade.aggressor, Side::kBuy);
  EXPECT_EQ(ct->trade.qty, 250);

  // Last: the 15:40:03 end-of-trading snapshot.
  const Event& last = ev.back();
  EXPECT_EQ(last.kind, EventKind::kSnapshot);
  EXPECT_EQ(last.exch_ts_ns, hms(15, 40, 3, 0));
  EXPECT_EQ(last.snapshot.phase, Phase::kClosed);
  EXPECT_EQ(last.snapshot.last, 184'497);
  EXPECT_EQ(last.snapshot.cum_volume, 3'397'389);
  EXPECT_DOUBLE_EQ(last.snapshot.cum_turnover, 6.24467892461e9);
  EXPECT_EQ(last.snapshot.bids[0].price, 184'497);
  EXPECT_EQ(last.snapshot.bids[0].qty, 88);
  EXPECT_EQ(last.snapshot.asks[9].price, 184'587);

  // Merged in time order; orders and trades of one instant in BizIndex order, snapshots after.
  for (size_t i = 1; i < ev.size(); ++i) {
    const Event &a = ev[i - 1], &b = ev[i];
    ASSERT_LE(a.exch_ts_ns, b.exch_ts_ns) << i;
    if (a.exch_ts_ns == b.exch_ts_ns && a.kind != EventKind::kSnapshot && b.kind != EventKind::kSnapshot) {
      ASSERT_LT(a.seq, b.seq) << i;
    }
    if (a.exch_ts_ns == b.exch_ts_ns) {
      ASSERT_FALSE(a.kind == EventKind::kSnapshot && b.kind != EventKind::kSnapshot) << i;
    }
  }
}

TEST(SseSource, AuctionSnapshotsKeepTheIndicativePriceOnBothSides) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_sse(sse_day_dir().string(), symbols, errors);
  // 09:15:00.000 OCALL: AskPrice1 1855 ×300, AskPrice2 0 ×250 (unmatched), BidPrice1 1855 ×300.
  auto it = std::find_if(ev.begin(), ev.end(),
                         [](const Event& e) { return e.kind == EventKind::kSnapshot && e.exch_ts_ns == hms(9, 15, 0, 0); });
  ASSERT_NE(it, ev.end());
  EXPECT_EQ(it->snapshot.phase, Phase::kOpeningAuction);
  EXPECT_EQ(it->snapshot.asks[0].price, 185'500);
  EXPECT_EQ(it->snapshot.bids[0].price, 185'500);
  EXPECT_EQ(it->snapshot.asks[0].qty, 300);
  EXPECT_EQ(it->snapshot.asks[1].price, 0);
  EXPECT_EQ(it->snapshot.asks[1].qty, 0);
}

TEST(SseSource, PlainAndGzipFilesGiveIdenticalEvents) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  const auto dir = scratch_dir("sse_plain") / "600519-20230201";
  std::filesystem::create_directories(dir);
  for (const char* f : {"snapshot", "entrust", "trade"}) {
    ts::testing::write_text(dir / (std::string(f) + ".csv"),
                            ts::testing::read_gz((sse_day_dir() / (std::string(f) + ".csv.gz")).string()));
  }
  SymbolTable s1, s2;
  InputErrors e1, e2;
  const auto gz = read_sse(sse_day_dir().string(), s1, e1);
  const auto plain = read_sse(dir.string(), s2, e2);
  ASSERT_EQ(gz.size(), plain.size());
  for (size_t i = 0; i < gz.size(); ++i) ASSERT_TRUE(ts::testing::same_event(gz[i], plain[i])) << "event " << i;
}

// The reader overload (used by sse_fuzz with in-memory readers): the real day read from memory
// gives every event and report of the folder; a missing file is a null reader.
TEST(SseSource, InMemoryReadersGiveTheFoldersEvents) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  std::string bytes[3];
  SseDayReaders readers;
  InputErrors e1, e2;
  std::unique_ptr<ingest::LineReader>* slot[3] = {&readers.snapshot, &readers.entrust, &readers.trade};
  int i = 0;
  for (const char* f : {"snapshot", "entrust", "trade"}) {
    const std::string path = (sse_day_dir() / (std::string(f) + ".csv.gz")).string();
    bytes[i] = ts::testing::read_bytes(path);
    *slot[i] = ingest::LineReader::open_memory(bytes[i], path, e2);
    ++i;
  }
  SymbolTable s1, s2;
  const auto from_folder = read_sse(sse_day_dir().string(), s1, e1);
  auto src = make_sse_source_from_readers(std::move(readers), 20230201, sse_day_dir().string(), s2, e2);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const auto from_memory = drain(*src.value());
  ASSERT_EQ(from_memory.size(), from_folder.size());
  for (size_t k = 0; k < from_folder.size(); ++k) {
    ASSERT_TRUE(ts::testing::same_event(from_folder[k], from_memory[k])) << "event " << k;
  }
  EXPECT_EQ(e2.by_kind(), e1.by_kind());

  InputErrors e3;
  SseDayReaders none;
  auto empty = make_sse_source_from_readers(std::move(none), 20230201, "day", s2, e3);
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  SseDayReaders trades_only;
  const std::string header = real_lines("trade")[0] + "\n";  // outlives the reader
  trades_only.trade = ingest::LineReader::open_memory(header, "trade.csv", e3);
  auto bad_date = make_sse_source_from_readers(std::move(trades_only), 20231301, "day", s2, e3);
  ASSERT_FALSE(bad_date.is_ok());
  EXPECT_EQ(bad_date.status().code(), StatusCode::kInvalidArgument);
}

TEST(SseSource, MissingFolderFileOrDateIsAStatusError) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SymbolTable symbols;
  InputErrors errors;
  auto none = make_sse_source("/nonexistent/600519-20230201", symbols, errors);
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);

  const auto dir = scratch_dir("sse_missing") / "600519-20230201";
  std::filesystem::create_directories(dir);
  auto empty = make_sse_source(dir.string(), symbols, errors);
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find("none of snapshot, entrust, trade"), std::string::npos)
      << empty.status().message();
  // Any subset runs: snapshot + entrust without trade opens.
  ts::testing::write_text(dir / "snapshot.csv", real_lines("snapshot")[0] + "\n");
  ts::testing::write_text(dir / "entrust.csv", real_lines("entrust")[0] + "\n");
  auto no_trade = make_sse_source(dir.string(), symbols, errors);
  ASSERT_TRUE(no_trade.is_ok()) << no_trade.status().to_string();
  EXPECT_NE(no_trade.value()->describe().find("(snapshot, entrust)"), std::string::npos) << no_trade.value()->describe();

  const auto undated = scratch_dir("sse_undated") / "moutai";
  std::filesystem::create_directories(undated);
  auto r = make_sse_source(undated.string(), symbols, errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(SseSource, DateOptionOverridesTheFolderName) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  const auto dir = scratch_dir("sse_date_option") / "moutai";
  std::filesystem::create_directories(dir);
  const auto snap = real_lines("snapshot"), ent = real_lines("entrust"), trd = real_lines("trade");
  ts::testing::write_text(dir / "snapshot.csv", snap[0] + "\n" + snap[1] + "\n");
  ts::testing::write_text(dir / "entrust.csv", ent[0] + "\n");
  ts::testing::write_text(dir / "trade.csv", trd[0] + "\n");
  SymbolTable symbols;
  InputErrors errors;
  auto src = make_sse_source(dir.string(), symbols, errors, SseOptions{20230201});
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const auto ev = drain(*src.value());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exch_ts_ns, hms(8, 45, 18, 0));
}

// A small day from real rows: snapshots (pre-open, two continuous), four orders, three trades.
struct SmallDay {
  std::vector<std::string> snapshot, entrust, trade;
  SmallDay() {
    static const SmallDay kTemplate = [] {
      SmallDay d(0);
      const auto s = real_lines("snapshot"), e = real_lines("entrust"), t = real_lines("trade");
      d.snapshot = {s[0], s[1], s[399], s[400]};
      d.entrust = {e[0], e[1], e[2], e[3], e[4]};
      d.trade = {t[0], t[1], t[2], t[3]};
      return d;
    }();
    *this = kTemplate;
  }
  explicit SmallDay(int) {}
  static constexpr size_t kEvents = 3 + 4 + 3;
  void write(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    auto join = [](const std::vector<std::string>& v) {
      std::string out;
      for (const auto& l : v) out += l + "\n";
      return out;
    };
    ts::testing::write_text(dir / "snapshot.csv", join(snapshot));
    ts::testing::write_text(dir / "entrust.csv", join(entrust));
    ts::testing::write_text(dir / "trade.csv", join(trade));
  }
};

struct BadRow {
  const char* name;
  const char* file;     // which file gets the bad row
  size_t template_row;  // 1-based data row it is made from (inserted right after that row)
  size_t field;         // 0-based column to change; SIZE_MAX = use `value` as the whole row
  std::string value;
  InputError kind;
};

class SseBadInput : public ::testing::TestWithParam<BadRow> {};

TEST_P(SseBadInput, CountsTheBadRowAndKeepsTheRest) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());  // SmallDay is cut from the real day
  const BadRow& p = GetParam();
  SmallDay day;
  std::vector<std::string>& rows = std::string(p.file) == "snapshot"  ? day.snapshot
                                   : std::string(p.file) == "entrust" ? day.entrust
                                                                      : day.trade;
  const std::string bad = p.field == SIZE_MAX ? p.value : with_field(rows[p.template_row], p.field, p.value);
  rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(p.template_row) + 1, bad);
  const auto dir = scratch_dir(std::string("sse_bad_") + p.name) / "600519-20230201";
  day.write(dir);

  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_sse(dir.string(), symbols, errors);
  EXPECT_EQ(errors.count(p.kind), 1u) << input_error_name(p.kind);
  EXPECT_EQ(errors.total(), 1u) << "only the bad row is reported";
  EXPECT_EQ(ev.size(), SmallDay::kEvents) << "every good row is delivered";
  const auto c = ts::testing::count_kinds(ev);
  EXPECT_EQ(c[size_t(EventKind::kSnapshot)], 3u);
  EXPECT_EQ(c[size_t(EventKind::kOrderAdd)], 4u);
  EXPECT_EQ(c[size_t(EventKind::kTrade)], 3u);
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, SseBadInput,
    ::testing::Values(BadRow{"entrust_type", "entrust", 1, 5, "X", InputError::kMalformedLine},
                      BadRow{"entrust_time", "entrust", 1, 4, "9h15", InputError::kMalformedLine},
                      BadRow{"entrust_columns", "entrust", 1, SIZE_MAX, "0,68337,6,600519,09:15:00.020,A,90,1745",
                             InputError::kWrongColumnCount},
                      BadRow{"entrust_symbol", "entrust", 1, 3, "60O519", InputError::kUnknownSymbol},
                      BadRow{"entrust_nan", "entrust", 1, 7, "nan", InputError::kNotANumber},
                      BadRow{"entrust_empty_price", "entrust", 1, 7, "", InputError::kNotANumber},
                      BadRow{"entrust_zero_price", "entrust", 1, 7, "0", InputError::kBadPrice},
                      BadRow{"entrust_zero_size", "entrust", 1, 8, "0", InputError::kBadSize},
                      BadRow{"entrust_backwards", "entrust", 2, 4, "09:14:59.000", InputError::kOutOfOrder},
                      BadRow{"entrust_garbage", "entrust", 1, 6, std::string("9\0\x03", 3), InputError::kBinaryGarbage},
                      BadRow{"trade_flag", "trade", 1, 10, "Q", InputError::kMalformedLine},
                      BadRow{"trade_inf", "trade", 1, 5, "inf", InputError::kNotANumber},
                      BadRow{"trade_negative_price", "trade", 1, 5, "-1854.98", InputError::kBadPrice},
                      BadRow{"trade_zero_size", "trade", 1, 6, "0", InputError::kBadSize},
                      BadRow{"trade_symbol", "trade", 1, 3, "", InputError::kUnknownSymbol},
                      BadRow{"snapshot_crossed", "snapshot", 3, 62, "1853", InputError::kCrossedBook},
                      BadRow{"snapshot_negative_level", "snapshot", 3, 44, "-1852.6", InputError::kBadPrice},
                      BadRow{"snapshot_level_size", "snapshot", 3, 43, "0", InputError::kBadSize},
                      BadRow{"snapshot_nan_last", "snapshot", 3, 7, "NaN", InputError::kNotANumber},
                      BadRow{"snapshot_preclose", "snapshot", 3, 3, "0", InputError::kBadPrice},
                      BadRow{"snapshot_columns", "snapshot", 3, SIZE_MAX, "09:41:47.000,600519,3",
                             InputError::kWrongColumnCount},
                      BadRow{"snapshot_backwards", "snapshot", 3, 0, "09:00:00.000", InputError::kOutOfOrder}),
    [](const ::testing::TestParamInfo<BadRow>& p) { return std::string(p.param.name); });

TEST(SseSource, CutLastLineIsATruncation) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());  // SmallDay is cut from the real day
  SmallDay day;
  const auto dir = scratch_dir("sse_cut_plain") / "600519-20230201";
  day.write(dir);
  // Append half of a row without its newline.
  std::string text = ts::testing::read_bytes((dir / "trade.csv").string());
  text += day.trade[1].substr(0, 30);
  ts::testing::write_text(dir / "trade.csv", text);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_sse(dir.string(), symbols, errors);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
  EXPECT_EQ(ev.size(), SmallDay::kEvents);
}

// A BOM (Excel's "CSV UTF-8") on the snapshot file refused the whole day: "header lacks column
// UpdateTime".
TEST(SseSource, ByteOrderMarkOnASnapshotFileIsAccepted) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());  // SmallDay is cut from the real day
  SmallDay day;
  const auto dir = scratch_dir("sse_bom") / "600519-20230201";
  day.write(dir);
  ts::testing::write_text(dir / "snapshot.csv", "\xEF\xBB\xBF" + ts::testing::read_bytes((dir / "snapshot.csv").string()));
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_sse(dir.string(), symbols, errors);
  EXPECT_EQ(ev.size(), SmallDay::kEvents);
  EXPECT_EQ(errors.total(), 0u);
}

TEST(SseSource, CorruptGzipIsReportedAsCorruptNotEmpty) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SmallDay day;
  const auto dir = scratch_dir("sse_corrupt_gz") / "600519-20230201";
  day.write(dir);
  std::filesystem::remove(dir / "trade.csv");
  std::string gz = ts::testing::read_bytes((sse_day_dir() / "trade.csv.gz").string());
  for (size_t i = 10; i < 64; ++i) gz[i] = char(gz[i] ^ 0xa5);  // the deflate data at the start
  ts::testing::write_text(dir / "trade.csv.gz", gz);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  auto src = make_sse_source(dir.string(), symbols, errors);
  ASSERT_FALSE(src.is_ok());
  EXPECT_NE(src.status().message().find("corrupt"), std::string::npos) << src.status().to_string();
  EXPECT_EQ(src.status().message().find("empty file"), std::string::npos) << src.status().to_string();
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
}

TEST(SseSource, HeaderOnlyFileIsCounted) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SmallDay day;
  day.trade.resize(1);  // the header only
  const auto dir = scratch_dir("sse_header_only") / "600519-20230201";
  day.write(dir);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_sse(dir.string(), symbols, errors);
  EXPECT_EQ(ev.size(), SmallDay::kEvents - 3);
  EXPECT_EQ(errors.count(InputError::kEmptyFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
}

// A trade file of zero bytes (not even the header: a day without trades, or an export that
// failed) refused the whole day ("empty file, expected a header line"). It is counted once as
// empty_file and the other two files are read.
TEST(SseSource, ZeroByteFileIsCountedAndTheDayGoesOn) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SmallDay day;
  day.trade.clear();
  const auto dir = scratch_dir("sse_zero_bytes") / "600519-20230201";
  day.write(dir);
  ASSERT_EQ(std::filesystem::file_size(dir / "trade.csv"), 0u);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_sse(dir.string(), symbols, errors);
  EXPECT_EQ(ev.size(), SmallDay::kEvents - 3);
  EXPECT_EQ(errors.count(InputError::kEmptyFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
}

TEST(SseSource, TruncatedGzipKeepsEverythingBeforeTheCutAndTheOtherFiles) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  const auto dir = scratch_dir("sse_cut_gz") / "600519-20230201";
  std::filesystem::create_directories(dir);
  for (const char* f : {"snapshot", "trade"}) {
    const std::string name = std::string(f) + ".csv.gz";
    ts::testing::write_text(dir / name, ts::testing::read_bytes((sse_day_dir() / name).string()));
  }
  const std::string gz = ts::testing::read_bytes((sse_day_dir() / "entrust.csv.gz").string());
  ts::testing::write_text(dir / "entrust.csv.gz", gz.substr(0, gz.size() / 2));
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_sse(dir.string(), symbols, errors);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
  const auto c = ts::testing::count_kinds(ev);
  EXPECT_EQ(c[size_t(EventKind::kSnapshot)], 5'109u);
  EXPECT_EQ(c[size_t(EventKind::kTrade)], 27'135u);
  const size_t orders = c[size_t(EventKind::kOrderAdd)] + c[size_t(EventKind::kOrderCancel)];
  EXPECT_GT(orders, 20'000u);
  EXPECT_LT(orders, 54'735u);
}

// 600519-20230202 and -0203 were published without an order file: snapshots + trades run,
// each clean, and the previous close chains across the three days.
TEST(SseSource, SnapshotAndTradeDaysWithoutOrdersRunClean) {
  Price prev_last = 0;
  for (const char* day : {"600519-20230201", "600519-20230202", "600519-20230203"}) {
    const auto dir = ts::testing::data_dir() / "sse-l2" / day;
    TS_REQUIRE_DATA(dir);
    SymbolTable symbols;
    InputErrors errors;
    auto src = make_sse_source(dir.string(), symbols, errors);
    ASSERT_TRUE(src.is_ok()) << src.status().to_string();
    const bool has_orders = std::string(day) == "600519-20230201";
    EXPECT_NE(src.value()->describe().find(has_orders ? "(snapshot, entrust, trade)" : "(snapshot, trade)"),
              std::string::npos)
        << src.value()->describe();
    const auto ev = drain(*src.value());
    EXPECT_EQ(errors.total(), 0u) << day;
    const auto c = ts::testing::count_kinds(ev);
    EXPECT_GT(c[size_t(EventKind::kSnapshot)], 4'000u) << day;
    EXPECT_GT(c[size_t(EventKind::kTrade)], 20'000u) << day;
    EXPECT_EQ(c[size_t(EventKind::kOrderAdd)] > 0, has_orders) << day;
    // The day's trades add up to its last snapshot's TradVolume.
    Qty traded = 0, last_cum = 0;
    Price last_px = 0;
    for (const auto& e : ev) {
      if (e.kind == EventKind::kTrade) traded += e.trade.qty;
      if (e.kind == EventKind::kSnapshot) last_cum = e.snapshot.cum_volume, last_px = e.snapshot.last;
    }
    EXPECT_EQ(traded, last_cum) << day;
    if (prev_last > 0) {
      EXPECT_EQ(symbols.ref(0).prev_close, prev_last) << day << ": PreCloPrice is the day before's close";
    }
    prev_last = last_px;
  }
}

}  // namespace
}  // namespace ts
