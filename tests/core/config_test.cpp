#include <gtest/gtest.h>

#include "core/config.h"

namespace ts {
namespace {

TEST(Config, EmptyConfigGivesDefaults) {
  Config c;
  auto s = c.section("sim");
  EXPECT_EQ(s.get("symbols", 1000), 1000);
  EXPECT_DOUBLE_EQ(s.get("rate", 2.5), 2.5);
  EXPECT_TRUE(s.get("enabled", true));
  EXPECT_EQ(s.get("name", "x"), "x");
  EXPECT_TRUE(c.unread_keys().empty());
}

TEST(Config, ReadsValuesAndNestedSections) {
  auto c = Config::parse("[sim]\nsymbols = 50\nrate = 3\n[rules.rapid_rise]\nret_bps = 150.5\n");
  EXPECT_EQ(c.section("sim").get("symbols", 1000), 50);
  EXPECT_DOUBLE_EQ(c.section("sim").get("rate", 1.0), 3.0) << "integers are accepted as numbers";
  EXPECT_DOUBLE_EQ(c.section("rules.rapid_rise").get("ret_bps", 0.0), 150.5);
  EXPECT_TRUE(c.unread_keys().empty());
}

TEST(Config, ReportsTyposAsUnreadKeys) {
  auto c = Config::parse("[sim]\nsymbolz = 50\n");
  EXPECT_EQ(c.section("sim").get("symbols", 1000), 1000);
  auto unread = c.unread_keys();
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_EQ(unread[0], "sim.symbolz");
}

TEST(Config, WrongTypeAndBadSyntaxAreClearErrors) {
  auto c = Config::parse("[sim]\nsymbols = \"many\"\n");
  EXPECT_THROW((void)c.section("sim").get("symbols", 1000), ConfigError);
  EXPECT_THROW(Config::parse("[sim\nsymbols = 1\n"), ConfigError);
  EXPECT_THROW(Config::load_file("/nonexistent/ticksentry.toml"), ConfigError);
}

}  // namespace
}  // namespace ts
