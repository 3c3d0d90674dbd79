#include <gtest/gtest.h>

#include "core/symbol_table.h"

namespace ts {
namespace {

TEST(SymbolTable, DenseIdsAndLookup) {
  SymbolTable t;
  EXPECT_EQ(t.intern("600519.SH"), 0u);
  EXPECT_EQ(t.intern("000001.SZ"), 1u);
  EXPECT_EQ(t.intern("AAPL"), 2u);
  EXPECT_EQ(t.intern("600519.SH"), 0u);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.name(1), "000001.SZ");
  EXPECT_EQ(t.find("AAPL").value(), 2u);
  EXPECT_FALSE(t.find("MSFT").has_value());
}

TEST(SymbolTable, PriceLimitBands) {
  EXPECT_DOUBLE_EQ(limit_pct_for("600519.SH", false), 0.10);
  EXPECT_DOUBLE_EQ(limit_pct_for("000001.SZ", false), 0.10);
  EXPECT_DOUBLE_EQ(limit_pct_for("300750.SZ", false), 0.20);
  EXPECT_DOUBLE_EQ(limit_pct_for("688981.SH", false), 0.20);
  EXPECT_DOUBLE_EQ(limit_pct_for("600000.SH", true), 0.05);
  EXPECT_DOUBLE_EQ(limit_pct_for("000001.SZ", true), 0.05);
  EXPECT_DOUBLE_EQ(limit_pct_for("300001.SZ", true), 0.20);  // ST on ChiNext keeps ±20%
  EXPECT_DOUBLE_EQ(limit_pct_for("688001.SH", true), 0.20);  // and on STAR
  EXPECT_DOUBLE_EQ(limit_pct_for("430047.BJ", true), 0.30);
  EXPECT_DOUBLE_EQ(limit_pct_for("AAPL", false), 0.0);
}

TEST(SymbolTable, LimitPricesRoundToTheTick) {
  SymbolTable t;
  // Moutai 2023-02-01: previous close 1845.76 → limit up 2030.34, limit down 1661.18.
  auto id = t.intern("600519.SH");
  t.set_prev_close(id, 184576);
  EXPECT_EQ(t.ref(id).limit_up, 203034);
  EXPECT_EQ(t.ref(id).limit_down, 166118);
  // ChiNext ±20%: 10.05 → 12.06 / 8.04.
  auto cy = t.intern("300750.SZ");
  t.set_prev_close(cy, 1005);
  EXPECT_EQ(t.ref(cy).limit_up, 1206);
  EXPECT_EQ(t.ref(cy).limit_down, 804);
  // ST ±5%: 3.33 → 3.50 / 3.16.
  auto st = t.intern("600001.SH");
  t.set_st(st, true);
  t.set_prev_close(st, 333);
  EXPECT_EQ(t.ref(st).limit_up, 350);
  EXPECT_EQ(t.ref(st).limit_down, 316);
  // No band in the US.
  auto us = t.intern("AAPL");
  t.set_prev_close(us, 58000);
  EXPECT_EQ(t.ref(us).limit_up, 0);
  EXPECT_EQ(t.ref(us).lot_size, 1);
}

}  // namespace
}  // namespace ts

#include <thread>

namespace ts {
namespace {

// Readers of published ids keep working while the owner thread adds symbols (no storage moves).
TEST(SymbolTable, ReadersAreSafeWhileSymbolsAreAdded) {
  SymbolTable t;
  const SymbolId first = t.intern("600519.SH");
  t.set_prev_close(first, 184576);
  const RefData* before = &t.ref(first);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) ASSERT_EQ(t.ref(first).limit_up, 203034);
  });
  for (int i = 0; i < 50000; ++i) {
    std::string name = "S";  // built with append: GCC 12 warns (-Wrestrict) on "S" + to_string
    name.append(std::to_string(i));
    t.intern(name);
  }
  done = true;
  reader.join();
  EXPECT_EQ(&t.ref(first), before) << "a reference never moves";
  EXPECT_EQ(t.size(), 50001u);
  EXPECT_EQ(t.name(50000), "S49999");
}

}  // namespace
}  // namespace ts
