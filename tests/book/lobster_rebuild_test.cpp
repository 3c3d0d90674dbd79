// Book reconstruction against the vendor: rebuild a LOBSTER day's book from the source's events
// and compare, after every message, with the vendor's orderbook row (row k = the book after
// message k), at every level of the file, both sides, price and size.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "book/book_set.h"
#include "ingest/lobster_book.h"
#include "ingest/lobster_source.h"
#include "test_data.h"

namespace ts {
namespace {

struct RebuildStats {
  uint64_t messages = 0;        // message events delivered
  uint64_t resyncs = 0;         // resync snapshots delivered after messages (opening excluded)
  uint64_t rows = 0;            // message rows compared with the vendor's row
  uint64_t best_bid_match = 0;  // price and size
  uint64_t best_ask_match = 0;
  uint64_t full_match = 0;      // all levels of the file, both sides, price and size
  uint64_t crossed = 0;         // kCrossedBook reported by the book
  uint64_t book_errors = 0;
};

// kFullStream: every event the source delivers (messages and resync snapshots), as a replay
// sees it. kMessagesOnly: the opening snapshot and the messages, resync snapshots dropped: the
// book LOBSTER's message file alone implies (it goes stale: levels that move into view from
// beyond the file's depth change without any message).
enum class Mode { kFullStream, kMessagesOnly };

RebuildStats rebuild_lobster(const std::string& symbol, int levels, Mode mode) {
  RebuildStats st;
  SymbolTable symbols;
  InputErrors src_errors, book_errors, ob_errors;
  book_errors.set_quiet(true);
  const std::string msg = ts::testing::lobster_file(symbol, "message", levels).string();
  auto src = make_lobster_source(msg, symbols, src_errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  if (!src.is_ok()) return st;
  auto ob = open_lobster_orderbook(ts::testing::lobster_file(symbol, "orderbook", levels).string(), ob_errors);
  EXPECT_TRUE(ob.is_ok()) << ob.status().to_string();
  if (!ob.is_ok()) return st;

  BookSet books(symbols);
  LobsterBookRow row;
  bool have_row = ob.value()->next(row);
  auto same = [](const Level& a, const Level& b) { return a.price == b.price && a.qty == b.qty; };
  // Compares the book after message `seq` (and the resync that follows it, if any) with row seq.
  auto compare = [&](SymbolId id, uint64_t seq) {
    while (have_row && row.line < seq) have_row = ob.value()->next(row);
    if (!have_row || row.line != seq) return;
    const BookTop& t = books.top(id);
    ++st.rows;
    st.best_bid_match += same(t.bids[0], row.bids[0]);
    st.best_ask_match += same(t.asks[0], row.asks[0]);
    bool all = true;
    for (int k = 0; k < levels && all; ++k) all = same(t.bids[k], row.bids[k]) && same(t.asks[k], row.asks[k]);
    st.full_match += all;
  };

  std::vector<Event> batch(4096);
  uint64_t to_compare = 0;  // message seq whose comparison waits for a possible resync
  SymbolId id = kInvalidSymbol;
  while (true) {
    const size_t n = src.value()->next_batch(batch);
    if (n == 0) break;
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      const bool is_resync = e.kind == EventKind::kSnapshot && e.seq > 0;
      if (to_compare != 0 && !(is_resync && e.seq == to_compare)) {
        compare(id, to_compare);
        to_compare = 0;
      }
      if (is_resync) {
        EXPECT_EQ(e.snapshot.resync, 1) << e.seq;
        ++st.resyncs;
        if (mode == Mode::kMessagesOnly) continue;
      }
      (void)books.apply(e, book_errors);
      id = e.symbol;
      if (e.kind != EventKind::kSnapshot) {
        ++st.messages;
        to_compare = e.seq;
      }
    }
  }
  if (to_compare != 0) compare(id, to_compare);
  st.crossed = book_errors.count(InputError::kCrossedBook);
  st.book_errors = book_errors.total();
  EXPECT_EQ(src_errors.total(), 0u) << "the vendor files are clean";
  return st;
}

double rate(uint64_t k, uint64_t n) { return n ? double(k) / double(n) : 0.0; }

void print_stats(const std::string& symbol, int levels, const char* what, const RebuildStats& st) {
  std::printf("[rebuild] %s %d levels, %s: %llu messages, %llu resyncs, %llu rows compared; best bid "
              "match %.5f, best ask match %.5f, all %d levels both sides %.5f; crossed %llu, book errors %llu\n",
              symbol.c_str(), levels, what, static_cast<unsigned long long>(st.messages),
              static_cast<unsigned long long>(st.resyncs), static_cast<unsigned long long>(st.rows),
              rate(st.best_bid_match, st.rows), rate(st.best_ask_match, st.rows), levels,
              rate(st.full_match, st.rows), static_cast<unsigned long long>(st.crossed),
              static_cast<unsigned long long>(st.book_errors));
}

struct Day {
  const char* symbol;
  int levels;
  uint64_t messages;
};

class LobsterReplayBook : public ::testing::TestWithParam<Day> {};

// A replay of the full event stream (messages + resync snapshots) gives the vendor's book after
// every message: all levels of the file, both sides, price and size.
TEST_P(LobsterReplayBook, EveryRowMatchesTheVendorBook) {
  const Day d = GetParam();
  TS_REQUIRE_DATA(ts::testing::lobster_file(d.symbol, "message", d.levels));
  TS_REQUIRE_DATA(ts::testing::lobster_file(d.symbol, "orderbook", d.levels));
  const RebuildStats st = rebuild_lobster(d.symbol, d.levels, Mode::kFullStream);
  print_stats(d.symbol, d.levels, "full stream", st);
  std::printf("[rebuild] %s: %llu resyncs for %llu messages\n", d.symbol,
              static_cast<unsigned long long>(st.resyncs), static_cast<unsigned long long>(st.messages));
  EXPECT_EQ(st.messages, d.messages);
  EXPECT_EQ(st.rows, d.messages) << "every message has its vendor row";
  // Measured: 1.00000 on all three days (every row).
  EXPECT_GE(rate(st.full_match, st.rows), 0.99999);
  EXPECT_GE(rate(st.best_bid_match, st.rows), 0.99999);
  EXPECT_GE(rate(st.best_ask_match, st.rows), 0.99999);
  EXPECT_EQ(st.crossed, 0u);
  EXPECT_EQ(st.book_errors, 0u);
  EXPECT_GT(st.resyncs, 0u);
  EXPECT_LT(st.resyncs, st.messages / 2) << "most messages are explained by the message alone";
}

INSTANTIATE_TEST_SUITE_P(Days, LobsterReplayBook,
                         ::testing::Values(Day{"GOOG", 10, 147'916}, Day{"AMZN", 5, 155'935},
                                           Day{"AAPL", 1, 118'497}),
                         [](const ::testing::TestParamInfo<Day>& p) { return std::string(p.param.symbol); });

// Why the resync snapshots exist: the messages alone leave GOOG's book stale and crossed.
TEST(LobsterRebuild, Goog10LevelsFromMessagesAloneGoesStale) {
  TS_REQUIRE_DATA(ts::testing::lobster_file("GOOG", "message", 10));
  TS_REQUIRE_DATA(ts::testing::lobster_file("GOOG", "orderbook", 10));
  const RebuildStats st = rebuild_lobster("GOOG", 10, Mode::kMessagesOnly);
  print_stats("GOOG", 10, "messages alone (resyncs dropped)", st);
  ASSERT_GT(st.rows, 140000u);
  // Measured: best bid 0.08773, all levels 0.00066, thousands of crossed books.
  EXPECT_LT(rate(st.best_bid_match, st.rows), 0.5);
  EXPECT_LT(rate(st.full_match, st.rows), 0.01);
  EXPECT_GT(st.crossed, 1000u);
}

}  // namespace
}  // namespace ts
