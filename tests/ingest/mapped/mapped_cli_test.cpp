// `ticksentry replay --format mapped --layout ...` as a user runs it: a shipped layout by name
// on the real SSE day, and a bad mapping refused with exit 2 naming the key and the column.
#include <filesystem>

#include <gtest/gtest.h>

#include "ingest/ingest_test_util.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::run_bin;
using ts::testing::scratch_dir;

TEST(MappedCli, ShippedSseLayoutByNameReplaysTheRealDay) {
  TS_REQUIRE_DATA(ts::testing::sse_day_dir());
  const auto dir = scratch_dir("mapped-cli-sse");
  const auto r = run_bin({"replay", "--format", "mapped", "--layout", "sse-l2", ts::testing::sse_day_dir().string(),
                          "--no-notify", "--out-dir", (dir / "out").string()},
                         dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE((r.out + r.err).find("86979 in"), std::string::npos) << r.out << r.err;
}

TEST(MappedCli, BadMappingIsExit2NamingTheKeyAndTheColumn) {
  TS_REQUIRE_DATA(ts::testing::sse_day_dir());
  const auto dir = scratch_dir("mapped-cli-bad");
  std::string layout = ts::testing::read_bytes(std::string(TICKSENTRY_SOURCE_DIR) + "/config/layouts/sse-l2.toml");
  layout.replace(layout.find("\"TradVolume\"\nbuy_order_id"), 12, "\"TradeVolume\"");
  ts::testing::write_text((dir / "bad.toml").string(), layout);
  const auto r = run_bin({"replay", "--format", "mapped", "--layout", "bad.toml", ts::testing::sse_day_dir().string()}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("file[2].size: column \"TradeVolume\" is not in the header of trade.csv.gz"), std::string::npos)
      << r.err;

  ts::testing::write_text((dir / "typo.toml").string(), "[[file]]\nrole = \"trade\"\nname = \"trade\"\nsizes = 3\n");
  const auto t = run_bin({"replay", "--format", "mapped", "--layout", "typo.toml", ts::testing::sse_day_dir().string()}, dir);
  EXPECT_EQ(t.exit_code, 2) << t.err;
  EXPECT_NE(t.err.find("typo.toml"), std::string::npos) << t.err;
}

}  // namespace
}  // namespace ts
