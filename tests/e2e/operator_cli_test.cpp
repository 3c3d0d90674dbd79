// Configuring ticksentry without reading its source (issue 27): a rule's thresholds and cooldown
// in one section, per-symbol rule groups, "did you mean" for unknown keys, and the routing-tree
// tester (`ticksentry notify test-route`), each through the real binary on real data.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "run_bin.h"
#include "test_data.h"

namespace ts::testing {
namespace {

struct Fired {
  std::string symbol, type;
  int64_t exch_ts_ns;
};

std::map<uint64_t, Fired> alerts_of(const std::filesystem::path& p) {
  std::map<uint64_t, Fired> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    out[j.at("id").get<uint64_t>()] = {j.at("symbol"), j.at("type"), std::stoll(j.at("exch_ts_ns").get<std::string>())};
  }
  return out;
}

class OperatorCli : public ::testing::Test {
 protected:
  void SetUp() override {
    goog_ = lobster_file("GOOG", "message", 10);
    aapl_ = lobster_file("AAPL", "message", 1);
    dir_ = scratch_dir(std::string("operator_cli_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  Outcome replay(const std::string& config_text, const std::string& jsonl) {
    std::ofstream(dir_ / (jsonl + ".toml")) << config_text;
    return run_bin({"replay", "--format", "lobster", goog_.string(), aapl_.string(), "--config", jsonl + ".toml",
                    "--no-stdout", "--http", "off", "--audit-db", "", "--jsonl", jsonl},
                   dir_);
  }
  std::filesystem::path goog_, aapl_, dir_;
};

// [rules.large_trade] cooldown_ms applies to large_buy and large_sell (it used to be read from
// [rules.large_buy] / [rules.large_sell] only); a [[rules.groups]] group changes its symbols'
// thresholds and nothing else: the other symbol's alerts are the same alerts, ids and all.
TEST_F(OperatorCli, OneSectionPerRuleAndPerSymbolGroups) {
  TS_REQUIRE_DATA(goog_);
  TS_REQUIRE_DATA(aapl_);
  const std::string base = "[rules]\nrelative = false\n";
  auto o = replay(base, "base.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto all = alerts_of(dir_ / "base.jsonl");
  size_t aapl_trades = 0, goog = 0;
  for (const auto& [id, a] : all) {
    aapl_trades += a.symbol == "AAPL" && (a.type == "large_buy" || a.type == "large_sell");
    goog += a.symbol == "GOOG";
  }
  ASSERT_GT(aapl_trades, 2u) << "AAPL's large trades at the absolute thresholds (14 on 2012-06-21): the test needs them";
  ASSERT_GT(goog, 0u);

  // One section: a 10-minute cooldown on both sides of large trades.
  o = replay(base + "[rules.large_trade]\ncooldown_ms = 600000\n", "cooldown.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> times;
  for (const auto& [id, a] : alerts_of(dir_ / "cooldown.jsonl")) {
    if (a.type == "large_buy" || a.type == "large_sell") times[{a.symbol, a.type}].push_back(a.exch_ts_ns);
  }
  size_t trades_with_cooldown = 0;
  for (auto& [key, ts] : times) {
    std::sort(ts.begin(), ts.end());
    trades_with_cooldown += ts.size();
    for (size_t i = 1; i < ts.size(); ++i) EXPECT_GE(ts[i] - ts[i - 1], 600'000'000'000LL) << key.first << " " << key.second;
  }
  size_t trades_before = 0;
  for (const auto& [id, a] : all) trades_before += a.type == "large_buy" || a.type == "large_sell";
  EXPECT_LT(trades_with_cooldown, trades_before);

  // A group for AAPL with a notional no print reaches: AAPL loses its large trades, keeps the
  // rest; GOOG keeps exactly its alerts.
  o = replay(base +
                 "[[rules.groups]]\nname = \"aapl\"\nsymbols = [\"AA*\"]\n"
                 "[rules.groups.large_trade]\nmin_notional = 1e12\ncritical_notional = 2e12\n",
             "group.jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::map<uint64_t, Fired> want;
  for (const auto& [id, a] : all) {
    if (!(a.symbol == "AAPL" && (a.type == "large_buy" || a.type == "large_sell"))) want[id] = a;
  }
  const auto got = alerts_of(dir_ / "group.jsonl");
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [id, a] : want) EXPECT_TRUE(got.count(id)) << a.symbol << " " << a.type << " " << a.exch_ts_ns;

  // Mistakes name the key and the nearest valid one.
  o = replay(base + "[rules.large_trade]\nmin_notionl = 5\n", "typo.jsonl");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("unknown config key 'rules.large_trade.min_notionl' (did you mean "
                       "'rules.large_trade.min_notional'?)"),
            std::string::npos)
      << o.err;
  o = replay(base + "[rules.large_trad]\nmin_notional = 5\n", "typo2.jsonl");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("did you mean 'rules.large_trade.min_notional'"), std::string::npos) << o.err;
  o = replay(base + "[[rules.groups]]\nname = \"g\"\nsymbols = [\"GOOG\"]\n[rules.groups.large_trade]\nmin_notionl = 5\n",
             "typo3.jsonl");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("'rules.groups[0].large_trade.min_notionl' (did you mean "
                       "'rules.groups[0].large_trade.min_notional'?)"),
            std::string::npos)
      << o.err;
  o = replay(base + "[[rules.groups]]\nname = \"g\"\n", "nomatch.jsonl");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("needs symbols, regex or markets"), std::string::npos) << o.err;
}

// `ticksentry notify test-route`, like `amtool config routes test`.
TEST_F(OperatorCli, TestRouteNamesTheReceiversAndTheRoutes) {
  std::ofstream(dir_ / "n.toml") << R"([notify]
[[notify.receivers]]
name = "desk"
type = "webhook"
url = "http://127.0.0.1:1/desk"
[[notify.receivers]]
name = "oncall"
type = "webhook"
url = "http://127.0.0.1:1/oncall"
[[notify.receivers]]
name = "risk"
type = "webhook"
url = "http://127.0.0.1:1/risk"
[notify.route]
receiver = "desk"
[[notify.route.routes]]
matchers = ['severity="critical"']
receiver = "oncall"
continue = true
[[notify.route.routes]]
matchers = ['type=~"limit_.*"', 'market="SH"']
receiver = "risk"

[[silences.declared]]
matchers = ["symbol=600519.SH"]
comment = "reviewed daily"
)";
  auto o = run_bin({"notify", "test-route", "--config", "n.toml", "--labels",
                    "symbol=600519.SH,type=limit_up_sealed,severity=critical"},
                   dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("receivers: oncall, risk"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("market=SH"), std::string::npos) << "derived from the symbol: " << o.out;
  EXPECT_NE(o.out.find("silenced:  by declared silence config-1 (reviewed daily)"), std::string::npos) << o.out;
  o = run_bin({"notify", "test-route", "--config", "n.toml", "--labels", "symbol=AAPL,type=large_buy", "--json"}, dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["receivers"], nlohmann::json::array({"desk"}));
  EXPECT_EQ(j["routes"][0]["route"], "root");
  o = run_bin({"notify", "test-route", "--config", "n.toml", "--labels", "symbol=AAPL", "--verify", "oncall"}, dir_);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("expected receivers oncall, got desk"), std::string::npos) << o.err;
  std::ofstream(dir_ / "bad.toml") << "[notify]\n[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\n"
                                      "url = \"http://127.0.0.1:1/\"\n[notify.route]\nreceiver = \"desk\"\n"
                                      "group_wiat_ms = 5\n";
  o = run_bin({"notify", "test-route", "--config", "bad.toml", "--labels", "symbol=AAPL"}, dir_);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("group_wiat_ms: unknown key (did you mean 'group_wait_ms'?)"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts::testing
