#include "ingest/open_source.h"

#include <gtest/gtest.h>

#include "ingest/lobster_source.h"
#include "ingest_test_util.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::drain;
using ts::testing::lobster_file;

TEST(OpenSource, UnknownFormatListsTheKnownOnes) {
  SymbolTable symbols;
  InputErrors errors;
  auto r = open_source("itch", {"x"}, symbols, errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  for (const char* f : {"lobster", "sse-l2", "csv"}) {
    EXPECT_NE(r.status().message().find(f), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(open_source("csv", {}, symbols, errors).status().code(), StatusCode::kInvalidArgument);
}

TEST(OpenSource, MissingPathIsAnErrorForEveryFormat) {
  SymbolTable symbols;
  InputErrors errors;
  for (const char* f : {"lobster", "sse-l2", "csv"}) {
    auto r = open_source(f, {"/nonexistent/AAPL_2012-06-21_1_2_message_1.csv"}, symbols, errors);
    ASSERT_FALSE(r.is_ok()) << f;
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << f;
  }
}

TEST(OpenSource, SeveralLobsterFilesMergeInTimeOrder) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("AAPL", "message", 1));
  TS_REQUIRE_DATA(::ts::testing::lobster_file("AMZN", "message", 5));
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const std::vector<std::string> paths = {lobster_file("AAPL", "message", 1).string(),
                                          lobster_file("AMZN", "message", 5).string(),
                                          lobster_file("GOOG", "message", 10).string()};
  size_t expected = 0;
  for (const auto& p : paths) {
    SymbolTable s;
    InputErrors e;
    auto one = make_lobster_source(p, s, e);
    ASSERT_TRUE(one.is_ok());
    expected += drain(*one.value()).size();
  }
  SymbolTable symbols;
  InputErrors errors;
  auto r = open_source("lobster", paths, symbols, errors);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto ev = drain(*r.value());
  EXPECT_EQ(ev.size(), expected);
  // Messages + one opening snapshot each + the resync snapshots (AAPL 30,071, AMZN 33,840,
  // GOOG 44,451: rows where the vendor's book changed beyond what the message explains).
  EXPECT_EQ(ev.size(), 118'497u + 155'935u + 147'916u + 3 + 30'071u + 33'840u + 44'451u);
  EXPECT_EQ(symbols.size(), 3u);
  std::array<size_t, 3> per_symbol{};
  for (size_t i = 0; i < ev.size(); ++i) {
    ++per_symbol.at(ev[i].symbol);
    if (i > 0) {
      ASSERT_LE(ev[i - 1].exch_ts_ns, ev[i].exch_ts_ns) << i;
    }
  }
  EXPECT_EQ(per_symbol[symbols.find("GOOG").value()], 147'917u + 44'451u);
  EXPECT_EQ(errors.total(), 0u);
}

TEST(OpenSource, SseAndCsvOpenThroughTheFactory) {
  TS_REQUIRE_DATA(::ts::testing::sse_day_dir());
  SymbolTable symbols;
  InputErrors errors;
  auto r = open_source("sse-l2", {ts::testing::sse_day_dir().string()}, symbols, errors);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(drain(*r.value()).size(), 86'979u);
}

}  // namespace
}  // namespace ts
