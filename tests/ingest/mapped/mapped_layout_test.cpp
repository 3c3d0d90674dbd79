// Layouts by mapping: what a vendor's own layout can say (date column, integer times, lots,
// one combined file) and how a bad mapping is refused (the key, the column, the type).
#include <filesystem>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "ingest/ingest_test_util.h"
#include "ingest/mapped/layout.h"
#include "ingest/mapped/mapped_source.h"
#include "ingest/open_source.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::scratch_dir;
using ts::testing::write_text;

// A Wind-like combined file: one row per order, cancel or trade, sizes in lots of 100, times as
// HHMMSSfff integers, prices in yuan × 10000, a date column.
constexpr const char* kCombinedLayout = R"(
[layout]
name = "vendor-x"
time_zone = "Asia/Shanghai"
merge = "time_then_file"

[[file]]
role = "combined"
name = "ticks"
price_scale = 0.01
size_scale = 100
date = "TradeDate"
time = { column = "Time", format = "hhmmssfff" }
symbol = { column = "Code", suffix = ".SZ", digits = 6 }
seq = "Seq"
kind = { column = "Type", codes = { A = "add", D = "cancel", T = "trade", H = "skip" } }
order_id = "OrderId"
price = "Px"
size = "Lots"
side = { column = "BS", codes = { "1" = "buy", "2" = "sell" } }
aggressor = { column = "BS", codes = { "1" = "buy", "2" = "sell", "0" = "none" } }
buy_order_id = "BuyId"
sell_order_id = "SellId"
)";

constexpr const char* kCombinedCsv =
    "TradeDate,Time,Code,Type,Seq,OrderId,Px,Lots,BS,BuyId,SellId\n"
    "20230201,93000120,000001,A,1,11,152300,3,1,0,0\n"
    "20230201,93000120,000001,H,2,0,0,0,0,0,0\n"
    "20230201,93000500,000001,A,3,12,152400,2,2,0,0\n"
    "20230201,93001000,000001,T,4,0,152400,1,1,11,12\n"
    "20230201,93002000,000001,D,5,11,0,2,1,0,0\n"
    "20230201,93002000,000001,A,6,13,152300,0,1,0,0\n"   // zero size: bad
    "20230201,93003000,000001,Z,7,14,152300,1,1,0,0\n";  // unknown kind: bad

TEST(MappedLayout, CombinedVendorFileWithDateColumnIntegerTimesAndLots) {
  const auto dir = scratch_dir("mapped-combined");
  write_text((dir / "vendor-x.toml").string(), kCombinedLayout);
  write_text((dir / "ticks.csv").string(), kCombinedCsv);
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  auto src = open_source("mapped", {(dir / "ticks.csv").string()}, symbols, errors, (dir / "vendor-x.toml").string());
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const auto ev = drain(*src.value());
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(errors.count(InputError::kBadSize), 1u);
  EXPECT_EQ(errors.count(InputError::kMalformedLine), 1u);
  EXPECT_EQ(symbols.name(ev[0].symbol), "000001.SZ");
  constexpr int64_t kMidnight = midnight_ns(2023, 2, 1, 8);
  EXPECT_EQ(ev[0].kind, EventKind::kOrderAdd);
  EXPECT_EQ(ev[0].exch_ts_ns, kMidnight + (9 * 3600 + 30 * 60) * kNsPerSec + 120 * kNsPerMs);
  EXPECT_EQ(ev[0].seq, 1u);
  EXPECT_EQ(ev[0].order.order_id, 11u);
  EXPECT_EQ(ev[0].order.price, 1523);  // 15.23 CNY in 0.01 ticks
  EXPECT_EQ(ev[0].order.qty, 300);     // 3 lots
  EXPECT_EQ(ev[0].order.side, Side::kBuy);
  EXPECT_EQ(ev[1].order.side, Side::kSell);
  EXPECT_EQ(ev[2].kind, EventKind::kTrade);
  EXPECT_EQ(ev[2].trade.aggressor, Side::kBuy);
  EXPECT_EQ(ev[2].trade.buy_order_id, 11u);
  EXPECT_EQ(ev[2].trade.sell_order_id, 12u);
  EXPECT_EQ(ev[2].trade.qty, 100);
  EXPECT_EQ(ev[3].kind, EventKind::kOrderCancel);
  EXPECT_EQ(ev[3].order.qty, 200);
}

// A valid one-file snapshot layout to break key by key.
constexpr const char* kSnapLayout = R"(
[layout]
name = "snap"
time_zone = "Asia/Shanghai"
[[file]]
role = "snapshot"
name = "snap"
price_scale = 100
date = "Date"
time = { column = "Time", format = "hh:mm:ss.fff" }
symbol = "Code"
prev_close = "Pre"
levels = 2
bid_price = "B{n}"
bid_size = "BV{n}"
ask_price = "A{n}"
ask_size = "AV{n}"
)";
constexpr const char* kSnapCsv =
    "Date,Time,Code,Pre,B1,BV1,B2,BV2,A1,AV1,A2,AV2\n"
    "2023-02-01,09:30:00.000,600000.SH,7.00,6.99,100,6.98,200,7.01,300,7.02,400\n";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

// Opens the one-file snapshot with `layout_text`; the error message ("" when it opened).
std::string open_error(const std::string& layout_text, const std::string& test) {
  const auto dir = scratch_dir("mapped-err-" + test);
  write_text((dir / "l.toml").string(), layout_text);
  write_text((dir / "snap.csv").string(), kSnapCsv);
  SymbolTable symbols;
  InputErrors errors;
  auto src = open_source("mapped", {(dir / "snap.csv").string()}, symbols, errors, (dir / "l.toml").string());
  if (src.is_ok()) {
    const auto ev = drain(*src.value());
    EXPECT_EQ(ev.size(), 1u);
    EXPECT_EQ(errors.total(), 0u);
    if (ev.size() == 1) {
      EXPECT_EQ(ev[0].snapshot.bids[1].price, 698);
      EXPECT_EQ(ev[0].snapshot.asks[1].qty, 400);
    }
    return "";
  }
  const StatusCode code = src.status().code();
  EXPECT_TRUE(code == StatusCode::kInvalidArgument || code == StatusCode::kParseError) << status_code_name(code);
  return src.status().message();
}

TEST(MappedLayout, ValidSnapshotLayoutOpens) { EXPECT_EQ(open_error(kSnapLayout, "ok"), ""); }

TEST(MappedLayout, UnknownKeyIsNamed) {
  const std::string msg = open_error(replace(kSnapLayout, "prev_close = ", "prev_closing = "), "unknown");
  EXPECT_NE(msg.find("file[0].prev_closing: unknown key"), std::string::npos) << msg;
}

TEST(MappedLayout, KeyOfAnotherRoleIsNamed) {
  const std::string msg = open_error(replace(kSnapLayout, "levels = 2", "levels = 2\norder_id = \"Id\""), "role");
  EXPECT_NE(msg.find("file[0].order_id: not used by a snapshot file"), std::string::npos) << msg;
}

TEST(MappedLayout, MissingColumnNamesKeyAndColumn) {
  const std::string msg = open_error(replace(kSnapLayout, "ask_size = \"AV{n}\"", "ask_size = \"AskVol{n}\""), "column");
  EXPECT_NE(msg.find("file[0].ask_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"AskVol1\" is not in the header of snap.csv"), std::string::npos) << msg;
  const std::string msg2 = open_error(replace(kSnapLayout, "prev_close = \"Pre\"", "prev_close = \"PreClose\""), "col2");
  EXPECT_NE(msg2.find("file[0].prev_close: column \"PreClose\" is not in the header"), std::string::npos) << msg2;
}

TEST(MappedLayout, WrongTypeIsNamed) {
  std::string msg = open_error(replace(kSnapLayout, "levels = 2", "levels = \"two\""), "type1");
  EXPECT_NE(msg.find("file[0].levels: expected an integer, got a string"), std::string::npos) << msg;
  msg = open_error(replace(kSnapLayout, "prev_close = \"Pre\"", "prev_close = 7"), "type2");
  EXPECT_NE(msg.find("file[0].prev_close: expected a string, got an integer"), std::string::npos) << msg;
  msg = open_error(replace(kSnapLayout, "levels = 2", "levels = 11"), "range");
  EXPECT_NE(msg.find("file[0].levels: 11 is outside 0..10"), std::string::npos) << msg;
  msg = open_error(replace(kSnapLayout, "format = \"hh:mm:ss.fff\"", "format = \"hh:mm\""), "fmt");
  EXPECT_NE(msg.find("file[0].time.format: \"hh:mm\" is not"), std::string::npos) << msg;
}

TEST(MappedLayout, BadCodeValueAndBadTomlAreNamed) {
  std::string msg = open_error(
      replace(kSnapLayout, "levels = 2", "levels = 2\nphase = { column = \"Code\", codes = { T = \"trading\" } }"), "code");
  EXPECT_NE(msg.find("file[0].phase.codes.T: \"trading\" is not one of"), std::string::npos) << msg;
  msg = open_error(replace(kSnapLayout, "levels = 2", "levels = = 2"), "toml");
  EXPECT_NE(msg.find("line 13"), std::string::npos) << msg;
}

TEST(MappedLayout, UnknownLayoutNameListsTheShippedOnes) {
  SymbolTable symbols;
  InputErrors errors;
  auto src = open_source("mapped", {"/nonexistent"}, symbols, errors, "no-such-layout");
  ASSERT_FALSE(src.is_ok());
  EXPECT_NE(src.status().message().find("sse-l2"), std::string::npos) << src.status().message();
  EXPECT_NE(src.status().message().find("szse-l2"), std::string::npos) << src.status().message();
  auto no_layout = open_source("mapped", {"/nonexistent"}, symbols, errors);
  ASSERT_FALSE(no_layout.is_ok());
  EXPECT_NE(no_layout.status().message().find("--layout"), std::string::npos);
}

TEST(MappedLayout, EveryShippedLayoutParses) {
  ASSERT_GE(mapped::builtin_layouts().size(), 2u);
  for (const auto& b : mapped::builtin_layouts()) {
    auto l = mapped::parse_layout(b.text, std::string(b.name));
    EXPECT_TRUE(l.is_ok()) << l.status().to_string();
  }
}

}  // namespace
}  // namespace ts
