#include "ingest/lobster_source.h"

#include <chrono>
#include <iostream>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "ingest/csv_source.h"
#include "ingest/csv_writer.h"
#include "ingest/field_parse.h"
#include "ingest/line_reader.h"
#include "ingest/lobster_book.h"
#include "ingest_test_util.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::lobster_file;
using ts::testing::scratch_dir;

// 2012-06-21 is in US daylight-saving time: New York = UTC-4.
constexpr int64_t kMidnight = midnight_ns(2012, 6, 21, -4);

std::vector<Event> read_lobster(const std::string& path, SymbolTable& symbols, InputErrors& errors, size_t batch = 1000) {
  auto src = make_lobster_source(path, symbols, errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  if (!src) return {};
  return drain(*src.value(), batch);
}

std::string repeat_row(const std::string& row, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += row;
  return out;
}

bool is_resync(const Event& e) { return e.kind == EventKind::kSnapshot && e.seq > 0; }

// The message events alone (opening snapshot first), resync snapshots left out.
std::vector<Event> without_resyncs(const std::vector<Event>& ev) {
  std::vector<Event> out;
  for (const Event& e : ev) {
    if (!is_resync(e)) out.push_back(e);
  }
  return out;
}

TEST(LobsterSource, NewYorkOffsetFollowsUsDaylightSavingRules) {
  EXPECT_EQ(new_york_utc_offset_hours(2012, 6, 21), -4);
  EXPECT_EQ(new_york_utc_offset_hours(2012, 1, 10), -5);
  EXPECT_EQ(new_york_utc_offset_hours(2012, 3, 10), -5);  // DST began Sunday 2012-03-11
  EXPECT_EQ(new_york_utc_offset_hours(2012, 3, 11), -4);
  EXPECT_EQ(new_york_utc_offset_hours(2012, 11, 3), -4);  // ended Sunday 2012-11-04
  EXPECT_EQ(new_york_utc_offset_hours(2012, 11, 4), -5);
}

TEST(LobsterSource, GoogDayCountsAndKnownRows) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  SymbolTable symbols;
  InputErrors errors;
  const auto all = read_lobster(lobster_file("GOOG", "message", 10).string(), symbols, errors);
  EXPECT_EQ(errors.total(), 0u) << "the vendor file is clean";
  // 147,916 messages + the opening snapshot + 44,451 resync snapshots (rows where a level came
  // into view from beyond the 10 levels, which no message describes).
  ASSERT_EQ(all.size(), 192'368u);
  const auto c = ts::testing::count_kinds(all);
  EXPECT_EQ(c[size_t(EventKind::kSnapshot)], 44'452u);
  EXPECT_EQ(c[size_t(EventKind::kOrderAdd)], 71'258u);     // type 1
  EXPECT_EQ(c[size_t(EventKind::kOrderCancel)], 64'980u);  // type 2 (19) + type 3 (64,961)
  EXPECT_EQ(c[size_t(EventKind::kOrderExecute)], 7'765u);  // type 4
  EXPECT_EQ(c[size_t(EventKind::kTrade)], 3'913u);         // type 5 (no crosses in this file)
  EXPECT_EQ(c[size_t(EventKind::kStatus)], 0u);

  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols.name(0), "GOOG");
  for (const auto& e : all) ASSERT_EQ(e.symbol, 0u);
  for (size_t i = 1; i < all.size(); ++i) {
    ASSERT_LE(all[i - 1].exch_ts_ns, all[i].exch_ts_ns);
    if (is_resync(all[i])) {  // right after its message: same seq and time, authoritative
      ASSERT_NE(all[i - 1].kind, EventKind::kSnapshot) << i;
      ASSERT_EQ(all[i].seq, all[i - 1].seq) << i;
      ASSERT_EQ(all[i].exch_ts_ns, all[i - 1].exch_ts_ns) << i;
      ASSERT_EQ(all[i].snapshot.resync, 1) << i;
      ASSERT_EQ(all[i].snapshot.phase, Phase::kUnknown) << i;
    }
  }

  const auto ev = without_resyncs(all);  // ev[k] = message k
  ASSERT_EQ(ev.size(), 147'917u);

  // 34200.015105074,4,15818974,4,5794000,1 — visible execution of a resting buy.
  const Event& m1 = ev[1];
  EXPECT_EQ(m1.kind, EventKind::kOrderExecute);
  EXPECT_EQ(m1.seq, 1u);
  EXPECT_EQ(m1.exch_ts_ns, kMidnight + 34200 * kNsPerSec + 15'105'074);
  EXPECT_EQ(m1.order.order_id, 15818974u);
  EXPECT_EQ(m1.order.qty, 4);
  EXPECT_EQ(m1.order.price, 57940);  // $579.40
  EXPECT_EQ(m1.order.side, Side::kBuy);
  // 34200.113246707,5,0,1,5795100,1 — hidden execution of a buy: a sell-initiated print.
  const Event& m3 = ev[3];
  EXPECT_EQ(m3.kind, EventKind::kTrade);
  EXPECT_EQ(m3.exch_ts_ns, kMidnight + 34200 * kNsPerSec + 113'246'707);
  EXPECT_EQ(m3.trade.price, 57951);
  EXPECT_EQ(m3.trade.qty, 1);
  EXPECT_EQ(m3.trade.aggressor, Side::kSell);
  // Line 184: 34208.145807111,1,16903596,2,5796600,-1 — a new sell limit order.
  const Event& add = ev[184];
  EXPECT_EQ(add.seq, 184u);
  EXPECT_EQ(add.kind, EventKind::kOrderAdd);
  EXPECT_EQ(add.order.order_id, 16903596u);
  EXPECT_EQ(add.order.price, 57966);
  EXPECT_EQ(add.order.qty, 2);
  EXPECT_EQ(add.order.side, Side::kSell);
  // Line 1276: 34351.613955626,5,0,40,5777750,1 — a half-cent midpoint print rounds up.
  EXPECT_EQ(ev[1276].trade.price, 57778);
  // Last line: 57599.871751084,3,287151822,100,5655000,-1 — full delete of a sell order.
  const Event& last = ev.back();
  EXPECT_EQ(last.kind, EventKind::kOrderCancel);
  EXPECT_EQ(last.seq, 147'916u);
  EXPECT_EQ(last.exch_ts_ns, kMidnight + 57599 * kNsPerSec + 871'751'084);
  EXPECT_EQ(last.order.qty, 100);
  EXPECT_EQ(last.order.side, Side::kSell);
  // 09:30 New York on 2012-06-21 is 13:30 UTC: 1340285400 s after the epoch.
  EXPECT_EQ(ev.front().exch_ts_ns / kNsPerSec, 1'340'285'400);
}

TEST(LobsterSource, OpeningSnapshotIsTheBookBeforeTheFirstMessage) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_lobster(lobster_file("GOOG", "message", 10).string(), symbols, errors);
  ASSERT_FALSE(ev.empty());
  const Event& s = ev.front();
  ASSERT_EQ(s.kind, EventKind::kSnapshot);
  EXPECT_EQ(s.seq, 0u);
  EXPECT_EQ(s.exch_ts_ns, ev[1].exch_ts_ns);
  // Row 1 shows bid 579.40 × 496 after message 1 executed 4 shares there: before, 500.
  EXPECT_EQ(s.snapshot.bids[0].price, 57940);
  EXPECT_EQ(s.snapshot.bids[0].qty, 500);
  EXPECT_EQ(s.snapshot.asks[0].price, 58023);
  EXPECT_EQ(s.snapshot.asks[0].qty, 100);
  EXPECT_EQ(s.snapshot.bids[9].price, 57000);
  EXPECT_EQ(s.snapshot.asks[9].price, 58926);
  EXPECT_EQ(s.snapshot.phase, Phase::kContinuous);
  EXPECT_EQ(s.snapshot.resync, 1) << "the opening book is the vendor's";
}

TEST(LobsterSource, OrderbookReaderGivesVendorRowsInTicks) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "orderbook", 10));
  InputErrors errors;
  auto r = LobsterBookReader::open(lobster_file("GOOG", "orderbook", 10).string(), errors);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  LobsterBookRow row;
  ASSERT_TRUE(r.value()->next(row));
  EXPECT_EQ(row.line, 1u);
  EXPECT_EQ(row.levels, 10);
  EXPECT_EQ(r.value()->levels(), 10);
  EXPECT_EQ(row.bids[0].price, 57940);
  EXPECT_EQ(row.bids[0].qty, 496);
  EXPECT_EQ(row.asks[1].price, 58043);
  size_t rows = 1;
  while (r.value()->next(row)) ++rows;
  EXPECT_EQ(rows, 147'916u);
  EXPECT_EQ(errors.total(), 0u);
}

TEST(LobsterSource, OrderbookReaderMapsVendorDummiesToEmptyLevels) {
  const auto dir = scratch_dir("lobster_book_empty");
  ts::testing::write_text(dir / "X_orderbook_2.csv", "5800100,100,5800000,50,9999999999,0,-9999999999,0\n");
  InputErrors errors;
  auto r = LobsterBookReader::open(dir / "X_orderbook_2.csv", errors);
  ASSERT_TRUE(r.is_ok());
  LobsterBookRow row;
  ASSERT_TRUE(r.value()->next(row));
  EXPECT_EQ(row.levels, 2);
  EXPECT_EQ(row.asks[0].price, 58001);
  EXPECT_EQ(row.asks[1].price, 0);
  EXPECT_EQ(row.asks[1].qty, 0);
  EXPECT_EQ(row.bids[1].price, 0);
}

// Negative levels entered the book (the csv reader refuses the same snapshot levels): now the
// row is refused and counted, and the good rows around it are kept.
TEST(LobsterSource, OrderbookReaderRefusesNegativeLevels) {
  const auto dir = scratch_dir("lobster_book_negative");
  ts::testing::write_text(dir / "X_orderbook_1.csv",
                          "5800100,100,5800000,50\n"
                          "5800100,-100,5800000,50\n"   // negative ask size
                          "-5800100,100,5800000,50\n"   // negative ask price with a size
                          "5800100,100,-5800000,50\n"   // negative bid price with a size
                          "5800100,100,5800000,-1\n"    // negative bid size
                          "5800200,100,5800000,50\n");
  InputErrors errors;
  errors.set_quiet(true);
  auto r = LobsterBookReader::open(dir / "X_orderbook_1.csv", errors);
  ASSERT_TRUE(r.is_ok());
  LobsterBookRow row;
  std::vector<uint64_t> lines;
  while (r.value()->next(row)) {
    lines.push_back(row.line);
    EXPECT_GT(row.asks[0].price, 0);
    EXPECT_GT(row.bids[0].price, 0);
  }
  EXPECT_EQ(lines, (std::vector<uint64_t>{1, 6}));
  EXPECT_EQ(errors.count(InputError::kBadSize), 2u);
  EXPECT_EQ(errors.count(InputError::kBadPrice), 2u);
}

TEST(LobsterSource, PlainAndGzipFilesGiveIdenticalEvents) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "orderbook", 10));
  const auto dir = scratch_dir("lobster_plain");
  const std::string name = "GOOG_2012-06-21_34200000_57600000_";
  ts::testing::write_text(dir / (name + "message_10.csv"),
                          ts::testing::read_gz(lobster_file("GOOG", "message", 10).string()));
  ts::testing::write_text(dir / (name + "orderbook_10.csv"),
                          ts::testing::read_gz(lobster_file("GOOG", "orderbook", 10).string()));
  SymbolTable s1, s2;
  InputErrors e1, e2;
  const auto gz = read_lobster(lobster_file("GOOG", "message", 10).string(), s1, e1);
  const auto plain = read_lobster((dir / (name + "message_10.csv")).string(), s2, e2);
  ASSERT_EQ(gz.size(), plain.size());
  for (size_t i = 0; i < gz.size(); ++i) ASSERT_TRUE(ts::testing::same_event(gz[i], plain[i])) << "event " << i;
}

// The reader overload (used by lobster_fuzz with in-memory readers) is the path version's
// second half: the GOOG day read from memory gives every event, resync and report of the file.
TEST(LobsterSource, InMemoryReadersGiveTheFilesEvents) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const std::string path = lobster_file("GOOG", "message", 10).string();
  const std::string messages = ts::testing::read_bytes(path);  // gzip: read as the file is
  const std::string book = ts::testing::read_bytes(lobster_orderbook_path(path));
  SymbolTable s1, s2;
  InputErrors e1, e2;
  const auto from_file = read_lobster(path, s1, e1);
  auto src = make_lobster_source_from_readers(ingest::LineReader::open_memory(messages, path, e2),
                                 ingest::LineReader::open_memory(book, lobster_orderbook_path(path), e2), s2, e2);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_EQ(src.value()->describe(), "lobster " + std::string(ingest::base_name(path)));
  const auto from_memory = drain(*src.value());
  ASSERT_EQ(from_memory.size(), from_file.size());
  for (size_t i = 0; i < from_file.size(); ++i) {
    ASSERT_TRUE(ts::testing::same_event(from_file[i], from_memory[i])) << "event " << i;
  }
  EXPECT_EQ(s2.name(from_memory.front().symbol), "GOOG");
  EXPECT_EQ(e2.by_kind(), e1.by_kind());

  // A message file's name without a LOBSTER date is refused by the reader overload too.
  InputErrors e3;
  auto bad = make_lobster_source_from_readers(ingest::LineReader::open_memory("34200.1,1,1,100,5800000,1\n", "x_message_1.csv", e3),
                                 ingest::LineReader::open_memory("", "x_orderbook_1.csv", e3), s2, e3);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(LobsterSource, MissingFilesAreStatusErrors) {
  SymbolTable symbols;
  InputErrors errors;
  auto none = make_lobster_source("/nonexistent/GOOG_2012-06-21_1_2_message_10.csv.gz", symbols, errors);
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);

  const auto dir = scratch_dir("lobster_no_book");
  const auto msg = dir / "GOOG_2012-06-21_34200000_57600000_message_10.csv";
  ts::testing::write_text(msg, "34200.1,1,1,100,5800000,1\n");
  auto no_book = make_lobster_source(msg.string(), symbols, errors);
  ASSERT_FALSE(no_book.is_ok());
  EXPECT_EQ(no_book.status().code(), StatusCode::kNotFound);
  EXPECT_NE(no_book.status().message().find("orderbook"), std::string::npos) << no_book.status().message();

  const auto bad_name = dir / "nodate_message_1.csv";
  ts::testing::write_text(bad_name, "34200.1,1,1,100,5800000,1\n");
  auto r = make_lobster_source(bad_name.string(), symbols, errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(LobsterSource, TradingHaltMessagesBecomeStatusEvents) {
  const auto dir = scratch_dir("lobster_halt");
  const std::string base = (dir / "XYZ_2012-06-21_34200000_57600000_").string();
  ts::testing::write_text(base + "message_1.csv",
                          "34200.1,1,1,100,5800000,1\n"
                          "36023,7,0,0,-1,-1\n"
                          "36323,7,0,0,0,-1\n"
                          "36723,7,0,0,1,-1\n");
  ts::testing::write_text(base + "orderbook_1.csv", repeat_row("5800100,100,5800000,100\n", 4));
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_lobster(base + "message_1.csv", symbols, errors);
  EXPECT_EQ(errors.total(), 0u);
  ASSERT_EQ(ev.size(), 5u);
  // Undoing the add of message 1 empties the bid the orderbook row shows.
  EXPECT_EQ(ev[0].snapshot.bids[0].price, 0);
  EXPECT_EQ(ev[0].snapshot.asks[0].price, 58001);
  EXPECT_EQ(ev[2].kind, EventKind::kStatus);
  EXPECT_EQ(ev[2].status.phase, Phase::kHalted);
  EXPECT_EQ(ev[3].status.phase, Phase::kPreOpen);
  EXPECT_EQ(ev[4].status.phase, Phase::kContinuous);
  EXPECT_EQ(ev[4].exch_ts_ns, kMidnight + 36723 * kNsPerSec);
}

// A 2-level day: asks 580.01×100, 580.02×50; bids 580.00×100, 579.99×70.
//   1: hidden execution (no visible change)        row 1: unchanged              → explained
//   2: delete of the 580.01 ask                    row 2: 580.05×20 comes into view → resync
//   3: partial cancel of 10 at 579.99              row 3: as implied             → explained
//   4: execution of the 580.00 bid                 row 4: 579.98×5 comes into view → resync
//   5: hidden execution                            row 5: 580.05 size changed (unexplained) → resync
constexpr const char* kLevelDayMessages =
    "34200.1,5,0,10,5800050,1\n"
    "34200.2,3,1,100,5800100,-1\n"
    "34200.3,2,7,10,5799900,1\n"
    "34200.4,4,9,100,5800000,1\n"
    "34200.5,5,0,10,5800050,-1\n";
constexpr const char* kLevelDayBook =
    "5800100,100,5800000,100,5800200,50,5799900,70\n"
    "5800200,50,5800000,100,5800500,20,5799900,70\n"
    "5800200,50,5800000,100,5800500,20,5799900,60\n"
    "5800200,50,5799900,60,5800500,20,5799800,5\n"
    "5800200,50,5799900,60,5800500,25,5799800,5\n";

std::string write_level_day(const std::string& dir_name, const std::string& messages, const std::string& book) {
  const auto dir = scratch_dir(dir_name);
  const std::string base = (dir / "XYZ_2012-06-21_34200000_57600000_").string();
  ts::testing::write_text(base + "message_2.csv", messages);
  ts::testing::write_text(base + "orderbook_2.csv", book);
  return base + "message_2.csv";
}

TEST(LobsterSource, NegativeOrderbookLevelsAreRefusedAndCounted) {
  const std::string book =
      "5800100,100,5800000,100,5800200,50,5799900,70\n"
      "5800200,50,5800000,-100,5800500,20,5799900,70\n"   // negative bid size
      "5800200,50,5800000,100,5800500,20,5799900,60\n"
      "-5800200,50,5799900,60,5800500,20,5799800,5\n"     // negative ask price
      "5800200,50,5799900,60,5800500,25,5799800,5\n";
  const std::string path = write_level_day("lobster_negative_levels", kLevelDayMessages, book);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_lobster(path, symbols, errors);
  EXPECT_EQ(errors.count(InputError::kBadSize), 1u);
  EXPECT_EQ(errors.count(InputError::kBadPrice), 1u);
  size_t messages = 0;
  for (const Event& e : ev) {
    if (e.kind != EventKind::kSnapshot) {
      ++messages;
      continue;
    }
    for (int i = 0; i < kBookLevels; ++i) {
      for (const Level& l : {e.snapshot.asks[i], e.snapshot.bids[i]}) {
        EXPECT_GE(l.qty, 0) << "seq " << e.seq;
        if (l.qty > 0) {
          EXPECT_GT(l.price, 0) << "seq " << e.seq;
        }
      }
    }
  }
  EXPECT_EQ(messages, 5u) << "the messages are kept";
}

TEST(LobsterSource, EmptyMessageFileIsCounted) {
  const std::string path = write_level_day("lobster_empty", "", kLevelDayBook);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  (void)read_lobster(path, symbols, errors);
  EXPECT_EQ(errors.count(InputError::kEmptyFile), 1u);
}

TEST(LobsterSource, ResyncSnapshotFollowsAMessageTheBookDoesNotExplain) {
  const std::string path = write_level_day("lobster_resync", kLevelDayMessages, kLevelDayBook);
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_lobster(path, symbols, errors);
  EXPECT_EQ(errors.total(), 0u);
  // snapshot, m1, m2, R2, m3, m4, R4, m5, R5
  ASSERT_EQ(ev.size(), 9u);
  const uint64_t want_seq[] = {0, 1, 2, 2, 3, 4, 4, 5, 5};
  const bool want_resync[] = {true, false, false, true, false, false, true, false, true};
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].seq, want_seq[i]) << i;
    EXPECT_EQ(ev[i].kind == EventKind::kSnapshot, want_resync[i]) << i;
    if (want_resync[i]) {
      EXPECT_EQ(ev[i].snapshot.resync, 1) << i;
      if (i > 0) {
        EXPECT_EQ(ev[i].exch_ts_ns, ev[i - 1].exch_ts_ns) << i;
      }
    }
  }
  // The opening book is row 1 (message 1 shows nothing).
  EXPECT_EQ(ev[0].snapshot.asks[1].price, 58002);
  EXPECT_EQ(ev[0].snapshot.bids[1].qty, 70);
  // R2 is row 2: the 580.05 ask that came into view.
  const SnapshotBody& r2 = ev[3].snapshot;
  EXPECT_EQ(r2.asks[0].price, 58002);
  EXPECT_EQ(r2.asks[0].qty, 50);
  EXPECT_EQ(r2.asks[1].price, 58005);
  EXPECT_EQ(r2.asks[1].qty, 20);
  EXPECT_EQ(r2.bids[0].price, 58000);
  EXPECT_EQ(r2.bids[1].qty, 70);
  EXPECT_EQ(r2.asks[2].qty, 0) << "levels beyond the file's depth stay empty";
  EXPECT_EQ(r2.phase, Phase::kUnknown) << "a resync does not change the phase";
  EXPECT_EQ(ev[6].snapshot.bids[1].price, 57998);
  EXPECT_EQ(ev[8].snapshot.asks[1].qty, 25);

  // Whatever the batch size, the same events in the same order (a resync that does not fit
  // waits for the next batch).
  for (size_t batch : {1u, 2u, 3u}) {
    SymbolTable s2;
    InputErrors e2;
    const auto small = read_lobster(path, s2, e2, batch);
    ASSERT_EQ(small.size(), ev.size()) << "batch " << batch;
    for (size_t i = 0; i < ev.size(); ++i) ASSERT_TRUE(ts::testing::same_event(small[i], ev[i])) << batch << " " << i;
  }
}

TEST(LobsterSource, ResyncFlagSurvivesCsvAndOlderCsvSnapshotsReadAsOrdinary) {
  const std::string path = write_level_day("lobster_resync_csv", kLevelDayMessages, kLevelDayBook);
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_lobster(path, symbols, errors);
  ASSERT_EQ(ev.size(), 9u);
  const auto dir = scratch_dir("lobster_resync_csv_out");
  const std::string csv = (dir / "day.csv").string();
  {
    auto w = CsvWriter::open(csv);
    ASSERT_TRUE(w.is_ok()) << w.status().to_string();
    for (const Event& e : ev) ASSERT_TRUE(w.value().write(e, symbols).is_ok());
    ASSERT_TRUE(w.value().close().is_ok());
  }
  auto read_csv = [](const std::string& p, InputErrors& errs) {
    SymbolTable s;
    auto src = make_csv_source(p, s, errs);
    EXPECT_TRUE(src.is_ok()) << src.status().to_string();
    return src.is_ok() ? drain(*src.value()) : std::vector<Event>{};
  };
  InputErrors back_errors;
  const auto back = read_csv(csv, back_errors);
  EXPECT_EQ(back_errors.total(), 0u);
  ASSERT_EQ(back.size(), ev.size());
  for (size_t i = 0; i < ev.size(); ++i) ASSERT_TRUE(ts::testing::same_event(back[i], ev[i])) << i;
  // A file written before the resync column: snapshot lines one column shorter, read as 0.
  std::string text = ts::testing::read_bytes(csv), old_text;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    std::string line = text.substr(at, nl - at);
    if (line.rfind("snapshot,", 0) == 0) line.resize(line.rfind(','));
    old_text += line + "\n";
    at = nl + 1;
  }
  ts::testing::write_text(dir / "old.csv", old_text);
  InputErrors old_errors;
  const auto old = read_csv((dir / "old.csv").string(), old_errors);
  EXPECT_EQ(old_errors.total(), 0u);
  ASSERT_EQ(old.size(), ev.size());
  EXPECT_EQ(old[3].kind, EventKind::kSnapshot);
  EXPECT_EQ(old[3].snapshot.resync, 0);
  EXPECT_EQ(old[3].snapshot.asks[1].price, 58005);
}

TEST(LobsterSource, BadMessageWhoseEffectShowsIsRepairedByTheNextResync) {
  // Message 2 (an add of 30 at 580.00) is garbled; row 2 shows its effect. Message 3 then
  // implies 580.00×90 while row 3 shows ×120: a resync after message 3 repairs the book.
  const std::string path = write_level_day("lobster_resync_bad",
                                           "34200.1,5,0,10,5800050,1\n"
                                           "34200.2,1,11,30,oops,1\n"
                                           "34200.3,2,7,10,5800000,1\n",
                                           "5800100,100,5800000,100,5800200,50,5799900,70\n"
                                           "5800100,100,5800000,130,5800200,50,5799900,70\n"
                                           "5800100,100,5800000,120,5800200,50,5799900,70\n");
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_lobster(path, symbols, errors);
  EXPECT_EQ(errors.total(), 1u);
  ASSERT_EQ(ev.size(), 4u);  // snapshot, m1, m3, R3
  EXPECT_EQ(ev[2].seq, 3u);
  ASSERT_TRUE(is_resync(ev[3]));
  EXPECT_EQ(ev[3].seq, 3u);
  EXPECT_EQ(ev[3].snapshot.bids[0].qty, 120);
}

TEST(LobsterSource, OrderbookShorterThanTheMessagesIsReportedOnce) {
  std::string book = kLevelDayBook;
  book.resize(book.find('\n') + 1);  // row 1 only
  const std::string path = write_level_day("lobster_resync_short", kLevelDayMessages, book);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_lobster(path, symbols, errors);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
  ASSERT_EQ(ev.size(), 6u) << "every message is delivered; messages 2..5 are not checked";
}

struct BadLine {
  const char* name;
  std::string line;  // replaces message 2
  InputError kind;
};

class LobsterBadInput : public ::testing::TestWithParam<BadLine> {};

// Message 2 of four is bad: it alone is counted and skipped; messages 1, 3, 4 are delivered.
TEST_P(LobsterBadInput, CountsTheBadLineAndKeepsTheRest) {
  const auto dir = scratch_dir(std::string("lobster_bad_") + GetParam().name);
  const std::string base = (dir / "XYZ_2012-06-21_34200000_57600000_").string();
  ts::testing::write_text(base + "message_1.csv", "34200.100000000,1,1,100,5800000,1\n" + GetParam().line + "\n" +
                                                      "34200.300000000,3,1,100,5800000,1\n"
                                                      "34200.400000000,5,0,10,5800050,-1\n");
  // Row k is the book after message k; message 2 (the bad one) leaves no mark on it.
  ts::testing::write_text(base + "orderbook_1.csv",
                          repeat_row("5800100,100,5800000,100\n", 2) + repeat_row("5800100,100,-9999999999,0\n", 2));
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_lobster(base + "message_1.csv", symbols, errors);
  EXPECT_EQ(errors.count(GetParam().kind), 1u);
  EXPECT_EQ(errors.total(), 1u) << "only the bad line is reported";
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].kind, EventKind::kSnapshot);
  EXPECT_EQ(ev[1].seq, 1u);
  EXPECT_EQ(ev[1].kind, EventKind::kOrderAdd);
  EXPECT_EQ(ev[2].seq, 3u);
  EXPECT_EQ(ev[2].kind, EventKind::kOrderCancel);
  EXPECT_EQ(ev[3].seq, 4u);
  EXPECT_EQ(ev[3].trade.price, 58001);  // 580.005 rounds half up
  EXPECT_EQ(ev[3].trade.aggressor, Side::kBuy);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LobsterBadInput,
                         ::testing::Values(BadLine{"type", "34200.2,9,2,100,5800000,1", InputError::kMalformedLine},
                                           BadLine{"time", "9:30,1,2,100,5800000,1", InputError::kMalformedLine},
                                           BadLine{"direction", "34200.2,1,2,100,5800000,0", InputError::kMalformedLine},
                                           BadLine{"columns", "34200.2,1,2,100,5800000", InputError::kWrongColumnCount},
                                           BadLine{"columns_extra", "34200.2,1,2,100,5800000,1,7",
                                                   InputError::kWrongColumnCount},
                                           BadLine{"nan_price", "34200.2,1,2,100,nan,1", InputError::kNotANumber},
                                           BadLine{"inf_size", "34200.2,1,2,inf,5800000,1", InputError::kNotANumber},
                                           BadLine{"nan_time", "NaN,1,2,100,5800000,1", InputError::kNotANumber},
                                           BadLine{"zero_price", "34200.2,1,2,100,0,1", InputError::kBadPrice},
                                           BadLine{"negative_price", "34200.2,4,2,100,-5800000,1", InputError::kBadPrice},
                                           BadLine{"halt_price", "34200.2,7,0,0,5,-1", InputError::kMalformedLine},
                                           BadLine{"zero_size", "34200.2,1,2,0,5800000,1", InputError::kBadSize},
                                           BadLine{"negative_size", "34200.2,3,2,-5,5800000,1", InputError::kBadSize},
                                           BadLine{"backwards", "34100.0,1,2,100,5800000,1", InputError::kOutOfOrder},
                                           // Found by lobster_fuzz (UBSan): ns overflowed int64.
                                           BadLine{"time_past_int64", "300000000000.5,1,2,100,5800000,1",
                                                   InputError::kMalformedLine},
                                           BadLine{"time_after_the_day", "86400.0,1,2,100,5800000,1",
                                                   InputError::kMalformedLine},
                                           BadLine{"garbage", std::string("34200.2,1,2\0\x01\x02,100,5800000,1", 27),
                                                   InputError::kBinaryGarbage}),
                         [](const ::testing::TestParamInfo<BadLine>& p) { return std::string(p.param.name); });

// Found by lobster_fuzz (UBSan): rounding a price near INT64_MAX to ticks overflowed, in a
// message and in an orderbook row. Every int64 rounds half up (away from zero below 0).
TEST(LobsterSource, PriceRoundingIsDefinedForEveryInt64) {
  static_assert(lobster_price_ticks(5777750) == 57778);
  static_assert(lobster_price_ticks(5777749) == 57777);
  static_assert(lobster_price_ticks(-5777750) == -57778);
  static_assert(lobster_price_ticks(INT64_MAX) == INT64_MAX / 100);  // ...807: remainder 7 < 50
  static_assert(lobster_price_ticks(INT64_MIN) == INT64_MIN / 100);  // ...808: remainder -8
  static_assert(lobster_price_ticks(INT64_MAX - 57) == INT64_MAX / 100);       // ...750: half up
  static_assert(lobster_price_ticks(INT64_MAX - 58) == INT64_MAX / 100 - 1);   // ...749
  static_assert(lobster_price_ticks(9999999999) == 100000000);
  const auto dir = scratch_dir("lobster_huge_price");
  const std::string base = (dir / "XYZ_2012-06-21_34200000_57600000_").string();
  ts::testing::write_text(base + "message_1.csv", "34200.1,1,1,100,9223372036854775807,1\n");
  ts::testing::write_text(base + "orderbook_1.csv", "9223372036854775807,100,9223372036854775800,100\n");
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_lobster(base + "message_1.csv", symbols, errors);
  ASSERT_GE(ev.size(), 2u);  // the opening snapshot, then the add
  EXPECT_EQ(ev[1].kind, EventKind::kOrderAdd);
  EXPECT_EQ(ev[1].order.price, INT64_MAX / 100);
}

TEST(LobsterSource, UnterminatedCutLastLineIsATruncation) {
  const auto dir = scratch_dir("lobster_cut_plain");
  const std::string base = (dir / "XYZ_2012-06-21_34200000_57600000_").string();
  ts::testing::write_text(base + "message_1.csv", "34200.1,1,1,100,5800000,1\n34200.2,1,2,100,58");
  ts::testing::write_text(base + "orderbook_1.csv", "5800100,100,5800000,100\n5800100,100,5800000,200\n");
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  const auto ev = read_lobster(base + "message_1.csv", symbols, errors);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
  EXPECT_EQ(ev.size(), 2u);
}

TEST(LobsterSource, TruncatedGzipDeliversEveryMessageBeforeTheCut) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "orderbook", 10));
  const auto dir = scratch_dir("lobster_cut_gz");
  const std::string name = "GOOG_2012-06-21_34200000_57600000_";
  const std::string gz = ts::testing::read_bytes(lobster_file("GOOG", "message", 10).string());
  ts::testing::write_text(dir / (name + "message_10.csv.gz"), gz.substr(0, gz.size() / 2));
  ts::testing::write_text(dir / (name + "orderbook_10.csv.gz"),
                          ts::testing::read_bytes(lobster_file("GOOG", "orderbook", 10).string()));
  SymbolTable s1, s2;
  InputErrors e1, e2;
  e2.set_quiet(true);
  const auto full = read_lobster(lobster_file("GOOG", "message", 10).string(), s1, e1);
  const auto cut = read_lobster((dir / (name + "message_10.csv.gz")).string(), s2, e2);
  EXPECT_EQ(e2.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(e2.total(), 1u);
  ASSERT_GT(cut.size(), 50'000u);
  ASSERT_LT(cut.size(), full.size());
  for (size_t i = 0; i < cut.size(); ++i) ASSERT_TRUE(ts::testing::same_event(cut[i], full[i])) << "event " << i;
}

TEST(LobsterSource, ParseRateOnTheGoogDay) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "orderbook", 10));
  // Best of 3 runs (the build machine is shared), .csv.gz and the same file decompressed.
  const auto dir = scratch_dir("lobster_rate");
  const std::string name = "GOOG_2012-06-21_34200000_57600000_";
  ts::testing::write_text(dir / (name + "message_10.csv"),
                          ts::testing::read_gz(lobster_file("GOOG", "message", 10).string()));
  ts::testing::write_text(dir / (name + "orderbook_10.csv"),
                          ts::testing::read_gz(lobster_file("GOOG", "orderbook", 10).string()));
  for (const std::string& path :
       {lobster_file("GOOG", "message", 10).string(), (dir / (name + "message_10.csv")).string()}) {
    double best_s = 1e9;
    size_t n = 0;
    for (int run = 0; run < 3; ++run) {
      SymbolTable symbols;
      InputErrors errors;
      const auto t0 = std::chrono::steady_clock::now();
      auto src = make_lobster_source(path, symbols, errors);
      ASSERT_TRUE(src.is_ok());
      std::vector<Event> buf(1024);
      size_t k;
      n = 0;
      while ((k = src.value()->next_batch(std::span<Event>(buf))) > 0) n += k;
      best_s = std::min(best_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    EXPECT_EQ(n, 192'368u);
    std::cout << "[ perf ] lobster " << std::string(ingest::base_name(path)) << ": " << n << " events in " << best_s * 1e3
              << " ms = " << n / best_s / 1e6 << " M events/s\n";
  }
}

}  // namespace
}  // namespace ts
