// The shipped layouts on the real data: the SSE layout must give exactly the events of the
// hand-written SSE reader (the real day, and a day with bad rows); the SZSE layout reads the
// five-stock day in time order with its phases.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "ingest/ingest_test_util.h"
#include "ingest/mapped/mapped_source.h"
#include "ingest/open_source.h"
#include "ingest/sse_source.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::same_event;
using ts::testing::sse_day_dir;

std::vector<Event> read_mapped(const std::string& layout, const std::string& path, SymbolTable& symbols,
                               InputErrors& errors) {
  auto src = open_source("mapped", {path}, symbols, errors, layout);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  if (!src) return {};
  return drain(*src.value(), 700);  // a batch size unlike the other reader's
}

std::vector<Event> read_sse(const std::string& dir, SymbolTable& symbols, InputErrors& errors) {
  auto src = make_sse_source(dir, symbols, errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  if (!src) return {};
  return drain(*src.value());
}

void expect_same_events(const std::vector<Event>& want, const std::vector<Event>& got) {
  ASSERT_EQ(want.size(), got.size());
  size_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const auto same = same_event(want[i], got[i]);
    if (!same && ++differ <= 5) ADD_FAILURE() << "event " << i << ": " << same.message();
  }
  EXPECT_EQ(differ, 0u);
}

TEST(MappedSse, ShippedLayoutGivesTheHandWrittenReadersEventsOnTheRealDay) {
  TS_REQUIRE_DATA(sse_day_dir());
  SymbolTable sym_a, sym_b;
  InputErrors err_a, err_b;
  const auto want = read_sse(sse_day_dir().string(), sym_a, err_a);
  const auto got = read_mapped("sse-l2", sse_day_dir().string(), sym_b, err_b);
  EXPECT_EQ(got.size(), 86'979u);
  expect_same_events(want, got);
  EXPECT_EQ(err_b.total(), err_a.total());
  EXPECT_EQ(err_b.total(), 0u);
  ASSERT_EQ(sym_b.size(), 1u);
  EXPECT_EQ(sym_b.name(0), "600519.SH");
  EXPECT_EQ(sym_b.ref(0).prev_close, sym_a.ref(0).prev_close);
  EXPECT_EQ(sym_b.ref(0).limit_up, sym_a.ref(0).limit_up);
}

// The days published without an order file (600519-20230202, -0203): the shipped layout runs on
// the snapshot and trade files it finds, as the hand-written reader does.
TEST(MappedSse, ShippedLayoutRunsTheDaysWithoutAnOrderFile) {
  for (const char* day : {"600519-20230202", "600519-20230203"}) {
    SCOPED_TRACE(day);
    const auto dir = sse_day_dir().parent_path() / day;
    TS_REQUIRE_DATA(dir);
    SymbolTable sym_a, sym_b;
    InputErrors err_a, err_b;
    const auto want = read_sse(dir.string(), sym_a, err_a);
    const auto got = read_mapped("sse-l2", dir.string(), sym_b, err_b);
    EXPECT_GT(got.size(), 20'000u);
    expect_same_events(want, got);
    EXPECT_EQ(err_b.total(), 0u);
    EXPECT_EQ(err_a.total(), 0u);
  }
}

TEST(MappedSse, LayoutFileInConfigIsTheOneCompiledIn) {
  std::ifstream in(std::filesystem::path(TICKSENTRY_SOURCE_DIR) / "config" / "layouts" / "sse-l2.toml");
  std::stringstream text;
  text << in.rdbuf();
  bool found = false;
  for (const auto& b : mapped::builtin_layouts()) {
    if (b.name == "sse-l2") {
      found = true;
      EXPECT_EQ(b.text, text.str());
    }
  }
  EXPECT_TRUE(found);
}

// The first `n` lines (header included) of a real day file, with `extra` rows appended.
std::string head_of(const char* name, size_t n, const std::string& extra) {
  const std::string text = ts::testing::read_gz((sse_day_dir() / (std::string(name) + ".csv.gz")).string());
  size_t pos = 0;
  for (size_t i = 0; i < n && pos != std::string::npos; ++i) pos = text.find('\n', pos) + 1;
  return text.substr(0, pos) + extra;
}

std::string replace_field(std::string row, size_t index, const std::string& value) {
  size_t start = 0;
  for (size_t i = 0; i < index; ++i) start = row.find(',', start) + 1;
  const size_t end = row.find(',', start);
  return row.substr(0, start) + value + (end == std::string::npos ? "" : row.substr(end));
}

std::string line_of(const std::string& text, size_t index) {
  size_t pos = 0;
  for (size_t i = 0; i < index; ++i) pos = text.find('\n', pos) + 1;
  return text.substr(pos, text.find('\n', pos) - pos);
}

TEST(MappedSse, BadRowsAreCountedAndSkippedAsByTheHandWrittenReader) {
  TS_REQUIRE_DATA(sse_day_dir());
  const auto dir = ts::testing::scratch_dir("mapped-sse-bad") / "600519-20230201";
  std::filesystem::create_directories(dir);
  // Real rows (time-ordered) with corruptions after them, each of a different kind.
  std::string snap = head_of("snapshot", 400, "");
  const std::string s_row = line_of(snap, 399);
  snap += replace_field(s_row, 3, "nan") + "\n";           // PreCloPrice not a number
  snap += replace_field(s_row, 1, "60051") + "\n";         // not a six-digit code
  snap += replace_field(s_row, 42, "-1") + "\n";           // negative level price
  snap += "09:99:00.000,600519,1\n";                       // wrong column count
  snap += replace_field(s_row, 0, "08:00:00.000") + "\n";  // backwards in time
  std::string ent = head_of("entrust", 2000, "");
  const std::string e_row = line_of(ent, 1999);
  ent += replace_field(e_row, 5, "X") + "\n";    // OrderType not A/D
  ent += replace_field(e_row, 9, "Q") + "\n";    // OrderBSFlag not B/S
  ent += replace_field(e_row, 8, "0") + "\n";    // Balance 0
  ent += replace_field(e_row, 7, "abc") + "\n";  // OrderPrice garbage
  ent += e_row + "\n";                           // a good row again
  std::string trd = head_of("trade", 1000, "");
  const std::string t_row = line_of(trd, 999);
  trd += replace_field(t_row, 10, "Z") + "\n";  // TradeBSFlag not B/S/N
  trd += replace_field(t_row, 5, "0") + "\n";   // TradPrice 0
  trd += replace_field(t_row, 4, "") + "\n";    // empty time
  trd += replace_field(t_row, 8, "-5") + "\n";  // TradeBuyNo negative
  ts::testing::write_gz((dir / "snapshot.csv.gz").string(), snap);
  ts::testing::write_text((dir / "entrust.csv").string(), ent);
  ts::testing::write_gz((dir / "trade.csv.gz").string(), trd);

  SymbolTable sym_a, sym_b;
  InputErrors err_a, err_b;
  const auto want = read_sse(dir.string(), sym_a, err_a);
  const auto got = read_mapped("sse-l2", dir.string(), sym_b, err_b);
  ASSERT_GT(want.size(), 3000u);
  expect_same_events(want, got);
  EXPECT_EQ(err_a.total(), 13u);
  EXPECT_EQ(err_b.total(), err_a.total());
  EXPECT_EQ(err_b.by_kind(), err_a.by_kind());
}

TEST(MappedSzse, ShippedLayoutReadsTheFiveStockDayInTimeOrder) {
  const auto file = ts::testing::data_dir() / "szse-l2" / "5stocks-20220601" / "tick.csv.gz";
  TS_REQUIRE_DATA(file);
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_mapped("szse-l2", file.string(), symbols, errors);
  EXPECT_EQ(errors.total(), 0u);
  for (const auto& [kind, n] : errors.by_kind()) ADD_FAILURE() << kind << ": " << n;
  EXPECT_EQ(ev.size(), 20'980u);
  EXPECT_EQ(symbols.size(), 5u);
  constexpr int64_t kMidnight = midnight_ns(2022, 6, 1, 8);
  int64_t prev = INT64_MIN;
  size_t backwards = 0, continuous_at_10 = 0, in_call = 0, opening = 0;
  for (const auto& e : ev) {
    ASSERT_EQ(e.kind, EventKind::kSnapshot);
    backwards += e.exch_ts_ns < prev;
    prev = e.exch_ts_ns;
    const int64_t tod_s = (e.exch_ts_ns - kMidnight) / kNsPerSec;
    if (tod_s >= 10 * 3600 && tod_s < 11 * 3600) continuous_at_10 += e.snapshot.phase == Phase::kContinuous;
    if (tod_s >= 9 * 3600 + 15 * 60 && tod_s < 9 * 3600 + 25 * 60) {
      ++in_call;
      opening += e.snapshot.phase == Phase::kOpeningAuction;
    }
  }
  EXPECT_EQ(backwards, 0u);
  EXPECT_GT(continuous_at_10, 5u * 1000u);  // 5 symbols × 1,200 3-s snapshots, nearly all present
  EXPECT_GT(in_call, 100u);
  EXPECT_EQ(opening, in_call);  // code 1 throughout 09:15-09:25
  // The first row of the file: 300918.SZ at 09:15:03, previous close 8.18 CNY.
  const auto id = symbols.find("300918.SZ");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(symbols.ref(*id).prev_close, 818);
  EXPECT_EQ(symbols.ref(*id).limit_up, 982);    // the file's MaxPx 9.82
  EXPECT_EQ(symbols.ref(*id).limit_down, 654);  // MinPx 6.54
}

}  // namespace
}  // namespace ts
