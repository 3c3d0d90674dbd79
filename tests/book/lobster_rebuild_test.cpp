// Book reconstruction against the vendor: rebuild GOOG's book from LOBSTER messages and compare,
// after every message, with the vendor's orderbook row (row k = the book after message k).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <vector>

#include "book/book_set.h"
#include "ingest/lobster_book.h"
#include "ingest/lobster_source.h"
#include "test_data.h"

namespace ts {
namespace {

struct RebuildStats {
  uint64_t rows = 0;
  uint64_t best_bid_match = 0;  // price and size
  uint64_t best_ask_match = 0;
  uint64_t full_match = 0;      // all levels of the file, both sides, price and size
  uint64_t known_match = 0;     // every level the rebuilt book has equals the vendor's level
  uint64_t book_errors = 0;
};

// mode kContinuous: one book rebuilt from the opening snapshot and the messages alone.
// mode kOneStep: before each message k the book is reset to the vendor's row k-1, so every row
// checks exactly one message's effect; only levels entering the file's depth from beyond it
// (which no message describes) can differ.
enum class Mode { kContinuous, kOneStep };

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
  std::vector<Event> batch(4096);
  LobsterBookRow row, prev_row;
  bool have_row = ob.value()->next(row);
  while (true) {
    const size_t n = src.value()->next_batch(batch);
    if (n == 0) break;
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      if (mode == Mode::kOneStep && e.seq > 1 && prev_row.line + 1 == e.seq) {
        books.reset(e.symbol);
        Event s = Event::make(EventKind::kSnapshot);
        s.symbol = e.symbol;
        s.snapshot.phase = Phase::kContinuous;
        for (int k = 0; k < kBookLevels; ++k) {
          s.snapshot.bids[k] = prev_row.bids[k];
          s.snapshot.asks[k] = prev_row.asks[k];
        }
        (void)books.apply(s, book_errors);
      }
      (void)books.apply(e, book_errors);
      if (e.seq == 0) continue;  // the opening snapshot
      while (have_row && row.line < e.seq) {
        prev_row = row;
        have_row = ob.value()->next(row);
      }
      if (!have_row || row.line != e.seq) continue;
      const BookTop& t = books.top(e.symbol);
      ++st.rows;
      auto same = [](const Level& a, const Level& b) { return a.price == b.price && a.qty == b.qty; };
      st.best_bid_match += same(t.bids[0], row.bids[0]);
      st.best_ask_match += same(t.asks[0], row.asks[0]);
      bool all = true;
      for (int k = 0; k < levels && all; ++k) all = same(t.bids[k], row.bids[k]) && same(t.asks[k], row.asks[k]);
      st.full_match += all;
      bool known = true;
      for (int k = 0; k < levels && known; ++k) {
        known = (t.bids[k].qty == 0 || same(t.bids[k], row.bids[k])) && (t.asks[k].qty == 0 || same(t.asks[k], row.asks[k]));
      }
      st.known_match += known;
      prev_row = row;
      have_row = ob.value()->next(row);
    }
  }
  st.book_errors = book_errors.total();
  for (auto& [k, v] : book_errors.by_kind()) std::printf("[rebuild] book error %s: %llu\n", k.c_str(), (unsigned long long)v);
  return st;
}

void print_stats(const char* what, const RebuildStats& st) {
  std::printf("[rebuild] GOOG 10 levels, %s: %llu rows; best bid match %.5f, best ask match %.5f, "
              "all 10 levels both sides %.5f; every level the rebuild knows %.5f; book errors %llu\n",
              what, static_cast<unsigned long long>(st.rows), double(st.best_bid_match) / double(st.rows),
              double(st.best_ask_match) / double(st.rows), double(st.full_match) / double(st.rows),
              double(st.known_match) / double(st.rows), static_cast<unsigned long long>(st.book_errors));
}

TEST(LobsterRebuild, Goog10LevelsEachMessageMatchesVendorBook) {
  const RebuildStats st = rebuild_lobster("GOOG", 10, Mode::kOneStep);
  print_stats("one message from the vendor's previous row", st);
  ASSERT_GT(st.rows, 140000u);
  const double bid = double(st.best_bid_match) / double(st.rows);
  const double ask = double(st.best_ask_match) / double(st.rows);
  const double full = double(st.full_match) / double(st.rows);
  // Measured: best bid/ask 147916/147916 rows, every known level 1.00000, all 10
  // levels 0.69948 (the rest: a level entering the 10-level window from beyond it).
  EXPECT_GE(bid, 0.9999);
  EXPECT_GE(ask, 0.9999);
  EXPECT_GE(double(st.known_match) / double(st.rows), 0.9999);
  EXPECT_GE(full, 0.69);
  EXPECT_EQ(st.book_errors, 0u);
}

TEST(LobsterRebuild, Goog10LevelsContinuousRebuild) {
  const RebuildStats st = rebuild_lobster("GOOG", 10, Mode::kContinuous);
  ASSERT_GT(st.rows, 140000u);
  const double bid = double(st.best_bid_match) / double(st.rows);
  const double ask = double(st.best_ask_match) / double(st.rows);
  const double full = double(st.full_match) / double(st.rows);
  print_stats("continuous from messages alone", st);
  ASSERT_GT(st.rows, 140000u);
  // From messages alone the rebuild cannot know levels that were beyond the 10-level window
  // while they changed; GOOG fell 2.5% through such levels, so the touch is soon unknown.
  // Measured: best bid 0.08773, best ask 0.38235, all levels 0.00066. Regression guard only.
  EXPECT_GE(bid, 0.08);
  EXPECT_GE(ask, 0.37);
  EXPECT_GE(full, 0.0005);
}

}  // namespace
}  // namespace ts
