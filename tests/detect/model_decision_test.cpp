// The model-alert decision: threshold, hysteresis (one alert per excursion), cooldown.
#include "detect/model_decision.h"
#include "core/config.h"
#include "detect/model_alert.h"
#include "detect/symbol_groups.h"
#include "serve/serve_options.h"

#include <gtest/gtest.h>

namespace ts {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(ModelDecision, FiresAtTheThresholdOncePerExcursion) {
  ModelDecision d({.threshold = 0.9, .hysteresis = 0.1, .cooldown_ns = 0});
  EXPECT_FALSE(d.decide(1, 0.5, 1 * kS));
  EXPECT_TRUE(d.decide(1, 0.9, 2 * kS)) << "at the threshold";
  EXPECT_FALSE(d.decide(1, 0.95, 3 * kS)) << "still high: the same excursion";
  EXPECT_FALSE(d.decide(1, 0.85, 4 * kS)) << "inside the hysteresis band: not re-armed";
  EXPECT_FALSE(d.decide(1, 0.92, 5 * kS));
  EXPECT_FALSE(d.decide(1, 0.79, 6 * kS)) << "below threshold - hysteresis re-arms";
  EXPECT_TRUE(d.decide(1, 0.91, 7 * kS)) << "a new excursion";
}

TEST(ModelDecision, CooldownIsPerSymbolInExchangeTime) {
  ModelDecision d({.threshold = 0.9, .hysteresis = 0.0, .cooldown_ns = 60 * kS});
  EXPECT_TRUE(d.decide(1, 0.99, 100 * kS));
  EXPECT_TRUE(d.decide(2, 0.99, 101 * kS)) << "another symbol is not cooled down";
  EXPECT_FALSE(d.decide(1, 0.5, 110 * kS));  // re-armed
  EXPECT_FALSE(d.decide(1, 0.99, 150 * kS)) << "re-armed but within 60 s of the last alert";
  EXPECT_FALSE(d.decide(1, 0.5, 155 * kS));
  EXPECT_TRUE(d.decide(1, 0.99, 160 * kS)) << "60 s later";
}

TEST(ModelDecision, SymbolGroupsHaveTheirOwnThresholdHysteresisAndCooldown) {
  // Symbol 1 is in group 0 (strict: 0.97, cooldown 0), 2 in no group (model: 0.9, cooldown 60 s).
  auto group_of = [](SymbolId s) { return s == 1 ? 0 : -1; };
  int lookups = 0;
  ModelDecision d({.threshold = 0.9, .hysteresis = 0.1, .cooldown_ns = 60 * kS},
                  {{.threshold = 0.97, .hysteresis = 0.02, .cooldown_ns = 0}}, [&](SymbolId s) {
                    ++lookups;
                    return group_of(s);
                  });
  EXPECT_FALSE(d.decide(1, 0.95, 1 * kS)) << "0.95 is below the group's 0.97";
  EXPECT_TRUE(d.decide(2, 0.95, 1 * kS)) << "0.95 is above the model's 0.9";
  EXPECT_TRUE(d.decide(1, 0.97, 2 * kS));
  EXPECT_FALSE(d.decide(1, 0.96, 3 * kS)) << "inside the group's hysteresis band (0.95..0.97)";
  EXPECT_FALSE(d.decide(1, 0.94, 4 * kS)) << "re-armed below 0.95";
  EXPECT_TRUE(d.decide(1, 0.98, 5 * kS)) << "the group has no cooldown";
  EXPECT_DOUBLE_EQ(d.options_for(1).threshold, 0.97);
  EXPECT_DOUBLE_EQ(d.options_for(2).threshold, 0.9);
  EXPECT_EQ(lookups, 2) << "a symbol's group is resolved once";
}

TEST(SymbolGroups, FirstMatchingGroupWinsByGlobRegexAndMarket) {
  auto g = SymbolGroups::compile({
      {.name = "star", .symbols = {"688*", "689*"}, .regex = "", .markets = {"SH"}},
      {.name = "chinext", .symbols = {}, .regex = "30[01][0-9]{3}\\.SZ", .markets = {}},
      {.name = "us", .symbols = {}, .regex = "", .markets = {"US"}},
      {.name = "moutai", .symbols = {"600519.SH"}, .regex = "", .markets = {}},
  });
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(g.value().match("688981.SH"), 0);
  EXPECT_EQ(g.value().match("688981.SZ"), -1) << "688 glob but not in market SH";
  EXPECT_EQ(g.value().match("300750.SZ"), 1);
  EXPECT_EQ(g.value().match("3007500.SZ"), -1) << "the regex matches the whole name";
  EXPECT_EQ(g.value().match("AAPL"), 2);
  EXPECT_EQ(g.value().match("600519.SH"), 3);
  EXPECT_EQ(g.value().match("600000.SH"), -1);
  EXPECT_TRUE(SymbolGroups::glob_match("*.S?", "000001.SZ"));
  EXPECT_FALSE(SymbolGroups::glob_match("*.S?", "000001.SZX"));
  EXPECT_TRUE(SymbolGroups::glob_match("a*b*c", "aXXbYYbc"));
}

TEST(SymbolGroups, BadGroupsAreRefusedWithTheGroupNamed) {
  auto no_match = SymbolGroups::compile({{.name = "empty", .symbols = {}, .regex = "", .markets = {}}});
  ASSERT_FALSE(no_match);
  EXPECT_NE(no_match.status().message().find("symbol group 'empty': needs symbols, regex or markets"), std::string::npos)
      << no_match.status().message();
  auto regex = SymbolGroups::compile({{.name = "r", .symbols = {}, .regex = "([", .markets = {}}});
  ASSERT_FALSE(regex);
  EXPECT_NE(regex.status().message().find("symbol group 'r': bad regex '(['"), std::string::npos)
      << regex.status().message();
  auto market = SymbolGroups::compile({{.name = "m", .symbols = {}, .regex = "", .markets = {"HK"}}});
  ASSERT_FALSE(market);
  EXPECT_NE(market.status().message().find("unknown market 'HK'"), std::string::npos) << market.status().message();
}

serve::ServeOptions parse_model(const std::string& toml) {
  return serve::ServeOptions::from_config(Config::parse(toml).section("model"));
}

// [model]'s trigger and decision keys (detect/model_alert.h), read after the serving keys as a run does.
ModelAlertOptions parse_alerts(const std::string& toml) {
  const int window_rows = parse_model(toml).window_rows;
  return ModelAlertOptions::from_config(Config::parse(toml).section("model"), window_rows);
}

std::string config_error(const std::string& toml) {
  try {
    parse_alerts(toml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelAlertOptions, GroupsFromTheConfigInheritTheModelsValues) {
  const auto o = parse_alerts(R"(
[model]
threshold = 0.8
hysteresis = 0.05
cooldown_s = 30
[[model.groups]]
name = "star"
symbols = ["688*"]
threshold = 0.95
[[model.groups]]
name = "us"
markets = ["US"]
cooldown_s = 5
)");
  ASSERT_EQ(o.groups.size(), 2u);
  EXPECT_EQ(o.groups[0].match.name, "star");
  EXPECT_EQ(o.groups[0].match.symbols, std::vector<std::string>{"688*"});
  EXPECT_DOUBLE_EQ(o.groups[0].threshold, 0.95);
  EXPECT_DOUBLE_EQ(o.groups[0].hysteresis, 0.05);
  EXPECT_DOUBLE_EQ(o.groups[0].cooldown_s, 30);
  EXPECT_DOUBLE_EQ(o.groups[1].threshold, 0.8);
  EXPECT_DOUBLE_EQ(o.groups[1].cooldown_s, 5);
}

// max_delay_us left out is chosen with the backend (50 µs on cuda, 200 on cpu: app/model_wiring);
// a value given is kept, a negative one refused.
TEST(ServeOptions, MaxDelayIsTheBackendsUnlessGiven) {
  EXPECT_TRUE(parse_model("[model]\n").max_delay_auto);
  const auto o = parse_model("[model]\nmax_delay_us = 300\n");
  EXPECT_FALSE(o.max_delay_auto);
  EXPECT_EQ(o.batcher.max_delay_us, 300);
  EXPECT_EQ(parse_model("[model]\nmax_delay_us = 0\n").batcher.max_delay_us, 0);
  EXPECT_NE(config_error("[model]\nmax_delay_us = -1\n").find("model.max_delay_us = -1: out of range [0, 10000000]"), std::string::npos);
  EXPECT_NE(config_error("[model]\nworkers = 17\n").find("model.workers = 17: out of range [0, 16]"), std::string::npos);
}

TEST(ServeOptions, WarmUpPauseHasADefaultAndABoundedRange) {
  EXPECT_EQ(parse_model("[model]\n").warm_up_pause_us, 500);
  EXPECT_EQ(parse_model("[model]\nwarm_up_pause_us = 0\n").warm_up_pause_us, 0);
  EXPECT_NE(config_error("[model]\nwarm_up_pause_us = -5\n").find("model.warm_up_pause_us = -5: out of range [0, 100000]"),
            std::string::npos);
}

TEST(ModelAlertOptions, BadGroupsAreConfigErrorsNamingTheGroup) {
  EXPECT_NE(config_error("[model]\n[[model.groups]]\nname = \"a\"\nsymbols = [\"1*\"]\nthreshold = 1.5\n")
                .find("[model.groups[0]] threshold must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(config_error("[model]\n[[model.groups]]\nname = \"a\"\nsymbols = [\"1*\"]\nthreshhold = 0.5\n")
                .find("unknown key 'model.groups[0].threshhold'"),
            std::string::npos)
      << config_error("[model]\n[[model.groups]]\nname = \"a\"\nsymbols = [\"1*\"]\nthreshhold = 0.5\n");
  EXPECT_NE(
      config_error("[model]\n[[model.groups]]\nname = \"a\"\nsymbols = \"688*\"\n").find("expected an array of strings"),
      std::string::npos);
  EXPECT_NE(config_error("[model]\n[[model.groups]]\nsymbols = [\"688*\"]\n").find("needs a name"), std::string::npos);
  EXPECT_NE(config_error("[model]\ngroups = 3\n").find("expected an array of tables"), std::string::npos);
}

}  // namespace
}  // namespace ts
