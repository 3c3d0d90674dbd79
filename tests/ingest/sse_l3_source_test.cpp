// The SSE tick-by-tick vendor layout (sse-l3): merge by ApplSeqNum, the book rebuilt from the
// flow and checked, bad rows, and the csv round trip.
#include <gtest/gtest.h>

#include <algorithm>

#include "book/book_set.h"
#include "core/clock.h"
#include "exchange_test_util.h"
#include "ingest/sse_l3_source.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::file_lines;
using ts::testing::scratch_dir;
using ts::testing::sse_l3_dir;
using ts::testing::with_field;

constexpr int64_t kMidnight = midnight_ns(2023, 7, 11, 8);

std::vector<Event> read_l3(const std::string& dir, SymbolTable& symbols, InputErrors& errors) {
  auto src = make_sse_l3_source(dir, symbols, errors);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  return src ? drain(*src.value()) : std::vector<Event>{};
}

bool continuous(int64_t ts) {
  const int64_t s = (ts - kMidnight) / kNsPerSec;
  return (s >= 9 * 3600 + 30 * 60 && s < 11 * 3600 + 30 * 60) || (s >= 13 * 3600 && s < 14 * 3600 + 57 * 60);
}

TEST(SseL3, RealDayMergesByApplSeqNumAndRebuildsACleanBook) {
  TS_REQUIRE_DATA(sse_l3_dir());
  SymbolTable symbols;
  InputErrors errors;
  const auto ev = read_l3(sse_l3_dir().string(), symbols, errors);
  EXPECT_EQ(errors.total(), 0u) << "the day's files are clean";
  const auto c = ts::testing::count_kinds(ev);
  EXPECT_EQ(c[size_t(EventKind::kOrderAdd)], 109'771u);
  EXPECT_EQ(c[size_t(EventKind::kOrderCancel)], 39'588u);
  EXPECT_EQ(c[size_t(EventKind::kTrade)], 109'616u);
  EXPECT_EQ(symbols.size(), 5u);
  for (size_t i = 1; i < ev.size(); ++i) {
    ASSERT_LE(ev[i - 1].exch_ts_ns, ev[i].exch_ts_ns) << i;
    if (ev[i - 1].exch_ts_ns == ev[i].exch_ts_ns) {
      ASSERT_LT(ev[i - 1].seq, ev[i].seq) << "ApplSeqNum order at " << i;
    }
  }
  // 2023.07.11,09:15:00.280,...,605580.SH: OrderType 2, 15.929999999999999 → 1593 ticks, 300,
  // OrderBSFlag 2 (sell), ApplSeqNum 186445, OrderNO 1329.
  const auto id = symbols.find("605580.SH");
  ASSERT_TRUE(id.has_value());
  auto it = std::find_if(ev.begin(), ev.end(), [](const Event& e) { return e.seq == 186'445u; });
  ASSERT_NE(it, ev.end());
  EXPECT_EQ(it->kind, EventKind::kOrderAdd);
  EXPECT_EQ(it->symbol, *id);
  EXPECT_EQ(it->exch_ts_ns, kMidnight + (9 * 3600 + 15 * 60) * kNsPerSec + 280 * kNsPerMs);
  EXPECT_EQ(it->order.price, 1'593);
  EXPECT_EQ(it->order.qty, 300);
  EXPECT_EQ(it->order.side, Side::kSell);
  EXPECT_EQ(it->order.order_id, 1'329u);

  // The book from the flow: every cancel finds its order; never crossed in continuous trading.
  BookSet books(symbols);
  InputErrors book_errors;
  book_errors.set_quiet(true);
  size_t crossed = 0, checked = 0;
  for (const auto& e : ev) {
    books.apply(e, book_errors);
    if (!continuous(e.exch_ts_ns)) continue;
    const BookTop& t = books.top(e.symbol);
    ++checked;
    if (t.bid_levels > 0 && t.ask_levels > 0 && t.bids[0].price >= t.asks[0].price) ++crossed;
  }
  EXPECT_EQ(book_errors.count(InputError::kUnknownOrder), 0u);
  EXPECT_GT(checked, 200'000u);
  EXPECT_EQ(crossed, 0u);
  for (SymbolId s = 0; s < symbols.size(); ++s) {
    EXPECT_GT(books.bid_depth(s), 0u) << symbols.name(s);
    EXPECT_GT(books.ask_depth(s), 0u) << symbols.name(s);
  }
  ts::testing::expect_csv_round_trip(ev, symbols, (scratch_dir("sse_l3_csv") / "l3.csv.gz").string());
}

TEST(SseL3, BadRowsCountedByKindWithFileAndLine) {
  TS_REQUIRE_DATA(sse_l3_dir());
  const auto orders = file_lines(sse_l3_dir() / "SHorders.csv.gz");
  const auto trades = file_lines(sse_l3_dir() / "SHtrans.csv.gz");
  using ts::testing::column_of;
  const std::string& oh = orders[0];
  const std::string& th = trades[0];
  struct Case {
    bool in_trades;
    std::string row;
    InputError kind;
  };
  // Row 3 of the chosen file is replaced; the real rows 1..20 of each file are otherwise kept.
  const std::vector<Case> cases = {
      {false, with_field(orders[3], column_of(oh, "OrderType"), "7"), InputError::kMalformedLine},
      {false, with_field(orders[3], column_of(oh, "OrderBSFlag"), "B"), InputError::kMalformedLine},
      {false, with_field(orders[3], column_of(oh, "OrderPrice"), "0"), InputError::kBadPrice},
      {false, with_field(orders[3], column_of(oh, "OrderQty"), "-100"), InputError::kBadSize},
      {false, with_field(orders[3], column_of(oh, "SecurityID"), "605580.SZ"), InputError::kUnknownSymbol},
      {false, with_field(orders[3], column_of(oh, "ApplSeqNum"), "nan"), InputError::kNotANumber},
      {false, orders[2], InputError::kOutOfOrder},  // ApplSeqNum repeated
      {true, with_field(trades[3], column_of(th, "TradePrice"), "-1"), InputError::kBadPrice},
      {true, with_field(trades[3], column_of(th, "TradeBSFlag"), "X"), InputError::kMalformedLine},
      {true, with_field(trades[3], column_of(th, "MDTime"), "25:00"), InputError::kMalformedLine},
      {true, trades[3] + ",1", InputError::kWrongColumnCount},
  };
  for (const auto& c : cases) {
    const auto dir = scratch_dir("sse_l3_bad");
    std::string o = oh + "\n", t = th + "\n";
    for (size_t i = 1; i <= 20; ++i) {
      o += (!c.in_trades && i == 3 ? c.row : orders[i]) + "\n";
      t += (c.in_trades && i == 3 ? c.row : trades[i]) + "\n";
    }
    ts::testing::write_text((dir / "SHorders.csv").string(), o);
    ts::testing::write_gz((dir / "SHtrans.csv.gz").string(), t);
    SymbolTable symbols;
    InputErrors errors;
    errors.set_quiet(true);
    const auto ev = read_l3(dir.string(), symbols, errors);
    EXPECT_EQ(errors.total(), 1u) << c.row;
    EXPECT_EQ(errors.count(c.kind), 1u) << input_error_name(c.kind) << ": " << c.row;
    EXPECT_EQ(ev.size(), 39u) << c.row;
  }
}

TEST(SseL3, MissingFileOrColumnIsAStatusError) {
  TS_REQUIRE_DATA(sse_l3_dir());
  const auto dir = scratch_dir("sse_l3_missing");
  const auto orders = file_lines(sse_l3_dir() / "SHorders.csv.gz");
  ts::testing::write_text((dir / "SHorders.csv").string(), orders[0] + "\n" + orders[1] + "\n");
  SymbolTable symbols;
  InputErrors errors;
  auto r = make_sse_l3_source(dir.string(), symbols, errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("SHtrans"), std::string::npos) << r.status().message();
  ts::testing::write_text((dir / "SHtrans.csv").string(), "MDDate,MDTime,SecurityID\n");
  r = make_sse_l3_source(dir.string(), symbols, errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_NE(r.status().message().find("ChannelNo"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace ts
