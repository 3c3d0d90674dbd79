#include <gtest/gtest.h>

#include "core/config.h"
#include "core/config_suggest.h"

namespace ts {
namespace {

// The distance behind "did you mean": insertions, deletions, substitutions and swaps of two
// neighbours each cost 1 (the rolling-row version gives what the full matrix gave).
TEST(ConfigSuggest, EditDistanceCountsEachTypo) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "port"), 4u);
  EXPECT_EQ(edit_distance("port", ""), 4u);
  EXPECT_EQ(edit_distance("port", "port"), 0u);
  EXPECT_EQ(edit_distance("prot", "port"), 1u) << "a swap";
  EXPECT_EQ(edit_distance("max_body_byte", "max_body_bytes"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u) << "restricted: no edit of a swapped pair";
  EXPECT_EQ(edit_distance("event_rnig", "event_ring"), 1u);
  // With a limit: the distance when below it, else the limit.
  EXPECT_EQ(edit_distance("kitten", "sitting", 4), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting", 3), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting", 2), 2u);
  EXPECT_EQ(edit_distance(std::string(5000, 'x'), "port", 3), 3u);
  EXPECT_EQ(edit_distance("max_body_byte", "max_body_bytes", 2), 1u);
}

TEST(ConfigSuggest, AnUnknownKeySuggestsTheNearestKeyAsked) {
  auto c = Config::parse("[http]\nmax_body_byte = 1\n[pipeline]\nevnt_ring = 2\n");
  (void)c.section("http").get("max_body_bytes", int64_t(0));
  (void)c.section("http").get("port", 0);
  (void)c.section("pipeline").get("event_ring", 0);
  EXPECT_EQ(c.unread_keys(), (std::vector<std::string>{"http.max_body_byte", "pipeline.evnt_ring"}));
  EXPECT_EQ(did_you_mean("http.max_body_byte"), " (did you mean 'http.max_body_bytes'?)");
  EXPECT_EQ(did_you_mean("pipeline.evnt_ring"), " (did you mean 'pipeline.event_ring'?)");
}

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

TEST(Config, RangesOverflowAndNanAreErrorsNamingTheKey) {
  auto c = Config::parse("[pipeline]\nevent_ring = -1\nsymbols = 4294967297\n"
                         "[rules.volume_burst]\nmin_volume_z = nan\n[http]\nport = 70000\nok = 8080\n");
  auto msg = [](auto&& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([&] { (void)c.section("pipeline").get_in("event_ring", 1024, 2, 1 << 24); })
                .find("pipeline.event_ring = -1: out of range [2, 16777216]"),
            std::string::npos);
  EXPECT_NE(msg([&] { (void)c.section("pipeline").get("symbols", 1); }).find("pipeline.symbols"), std::string::npos)
      << "an int key is never cut to 32 bits";
  EXPECT_NE(msg([&] { (void)c.section("rules.volume_burst").get("min_volume_z", 8.0); }).find("nan"),
            std::string::npos);
  EXPECT_NE(msg([&] { (void)c.section("http").get_in("port", 0, 0, 65535); }).find("http.port = 70000"),
            std::string::npos);
  EXPECT_EQ(c.section("http").get_in("ok", 0, 0, 65535), 8080);
  EXPECT_DOUBLE_EQ(c.section("http").get_in("absent", 2.5, 0.0, 3.0), 2.5);
}

}  // namespace
}  // namespace ts
