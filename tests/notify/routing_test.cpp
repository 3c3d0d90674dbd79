// Matchers, the routing tree (child routes, continue), time windows, inhibition.
#include <gtest/gtest.h>

#include "notify/inhibitor.h"
#include "notify/route.h"
#include "notify_test_util.h"

namespace ts::notify {
namespace {

Labels labels(const std::string& symbol, const std::string& type, const std::string& sev, const std::string& market = "SH") {
  return Labels{{"symbol", symbol}, {"type", type}, {"severity", sev}, {"market", market}, {"source", "rule"}};
}

TEST(NotifyMatcher, FourOperatorsAnchoredRegexAndMissingLabels) {
  const Labels l = labels("600519.SH", "rapid_rise", "critical");
  EXPECT_TRUE(Matcher::parse("severity=\"critical\"").value().matches(l));
  EXPECT_FALSE(Matcher::parse("severity!=critical").value().matches(l));
  EXPECT_TRUE(Matcher::parse("symbol=~\"60.*\"").value().matches(l));
  EXPECT_FALSE(Matcher::parse("symbol=~\"60\"").value().matches(l));  // anchored: whole value
  EXPECT_TRUE(Matcher::parse("type!~\"limit_.*\"").value().matches(l));
  EXPECT_TRUE(Matcher::parse("model=\"\"").value().matches(l));      // absent label is ""
  EXPECT_FALSE(Matcher::parse("severity==x").is_ok());
  EXPECT_FALSE(Matcher::parse("symbol=~\"(\"").is_ok());
  EXPECT_FALSE(Matcher::parse("=x").is_ok());
  EXPECT_EQ(Matcher::parse("symbol =~ \"60.*\"").value().to_string(), "symbol=~\"60.*\"");
}

TEST(NotifyLabels, DerivedFromAnAlert) {
  SymbolTable symbols;
  const Alert a = testing::notify_alert(symbols, "000001.SZ", AlertType::kLimitUpSealed, 1, Severity::kCritical);
  const Labels l = alert_labels(a, symbols);
  EXPECT_EQ(l.to_string(), "market=SZ,severity=critical,source=rule,symbol=000001.SZ,type=limit_up_sealed");
}

TEST(NotifyLabels, ModelAlertsNameTheirModel) {
  struct Score {
    char model[32] = "alert-default";
    uint32_t version = 2;
  };
  struct ModelAlert {
    Score model;
  };
  Labels l{{"source", "rule"}};
  add_model_labels(ModelAlert{}, l);
  EXPECT_EQ(l.to_string(), "model=alert-default,model_version=2,source=model");
  Labels rule{{"source", "rule"}};
  ModelAlert unversioned;
  unversioned.model.version = 0;
  add_model_labels(unversioned, rule);
  EXPECT_EQ(rule.to_string(), "source=rule");
}

TEST(NotifyRoute, FirstMatchingChildUnlessContinue) {
  auto cfg = testing::notify_config(R"(
[notify]
[[notify.receivers]]
name = "desk"
type = "slack"
url = "http://127.0.0.1:1/slack"
[[notify.receivers]]
name = "oncall"
type = "dingtalk"
url = "http://127.0.0.1:1/dingtalk"
[[notify.receivers]]
name = "sz"
type = "wecom"
url = "http://127.0.0.1:1/wecom"
[notify.route]
receiver = "desk"
group_wait_ms = 50
[[notify.route.routes]]
matchers = ['severity="critical"']
receiver = "oncall"
continue = true
group_wait_ms = 0
  [[notify.route.routes.routes]]
  matchers = ['market="SZ"']
  receiver = "sz"
[[notify.route.routes]]
matchers = ['market=~"SH|SZ"']
)");
  const Route& root = cfg.route;
  auto recv = [&](const Labels& l) {
    std::string s;
    for (const Route* r : root.match(l)) s += r->receiver + "@" + r->id + " ";
    return s;
  };
  EXPECT_EQ(recv(labels("600519.SH", "rapid_rise", "critical")), "oncall@root.0 desk@root.1 ");
  EXPECT_EQ(recv(labels("000001.SZ", "rapid_rise", "critical", "SZ")), "sz@root.0.0 desk@root.1 ");
  EXPECT_EQ(recv(labels("AAPL", "rapid_rise", "info", "US")), "desk@root ");
  // Children inherit what they do not set.
  EXPECT_EQ(root.routes[0].routes[0].group_wait_ms, 0);
  EXPECT_EQ(root.routes[1].group_wait_ms, 50);
  EXPECT_EQ(root.routes[1].receiver, "desk");
}

TEST(NotifyTimeWindow, SessionsLunchAndHolidays) {
  TimeWindow w;
  w.utc_offset_minutes = 8 * 60;
  w.weekday_mask = parse_weekdays({"mon", "tue", "wed", "thu", "fri"}).value();
  w.times = {parse_time_range("09:30-11:30").value(), parse_time_range("13:00-15:00").value()};
  w.exclude_days = {parse_date_days("2023-02-02").value()};
  auto at = [](int y, unsigned m, unsigned d, int hh, int mm) {
    return midnight_ns(y, m, d, 8) + (hh * 3600 + mm * 60) * kNsPerSec;
  };
  EXPECT_TRUE(w.contains(at(2023, 2, 1, 9, 30)));    // Wednesday, session opens
  EXPECT_FALSE(w.contains(at(2023, 2, 1, 9, 29)));
  EXPECT_FALSE(w.contains(at(2023, 2, 1, 12, 0)));   // lunch
  EXPECT_TRUE(w.contains(at(2023, 2, 1, 14, 59)));
  EXPECT_FALSE(w.contains(at(2023, 2, 1, 15, 0)));   // end exclusive
  EXPECT_FALSE(w.contains(at(2023, 2, 2, 10, 0)));   // holiday
  EXPECT_FALSE(w.contains(at(2023, 2, 4, 10, 0)));   // Saturday
  EXPECT_FALSE(parse_time_range("9:30-11:30").is_ok());
  EXPECT_FALSE(parse_time_range("11:30-09:30").is_ok());
  EXPECT_FALSE(parse_weekdays({"monday"}).is_ok());

  Route r;
  r.mute_time_windows = {w};
  EXPECT_FALSE(r.active_at(at(2023, 2, 1, 10, 0)));
  EXPECT_TRUE(r.active_at(at(2023, 2, 1, 12, 0)));
  Route a;
  a.active_time_windows = {w};
  EXPECT_TRUE(a.active_at(at(2023, 2, 1, 10, 0)));
  EXPECT_FALSE(a.active_at(at(2023, 2, 1, 12, 0)));
}

NotifyAlert na(const Labels& l, AlertType t = AlertType::kRapidRise) {
  NotifyAlert a;
  a.labels = l;
  a.type = t;
  return a;
}

TEST(NotifyInhibitor, IndexCrashMutesItsMarketForAWhile) {
  InhibitRule rule;
  rule.source_matchers = parse_matchers({"symbol=\"000001.SH\"", "type=\"high_dive\""}).value();
  rule.target_matchers = parse_matchers({"symbol!=\"000001.SH\""}).value();
  rule.equal = {"market"};
  rule.duration_ms = 1000;
  Inhibitor inh({rule});
  const auto crash = na(labels("000001.SH", "high_dive", "critical"), AlertType::kHighDive);
  const auto sh = na(labels("600519.SH", "accelerating_drop", "warning"));
  const auto sz = na(labels("000002.SZ", "accelerating_drop", "warning", "SZ"));
  EXPECT_FALSE(inh.inhibited(sh, 0));
  inh.observe(crash, 0);
  EXPECT_TRUE(inh.inhibited(sh, 500'000'000));
  EXPECT_FALSE(inh.inhibited(sz, 500'000'000));     // other market
  EXPECT_FALSE(inh.inhibited(crash, 500'000'000));  // never itself
  EXPECT_FALSE(inh.inhibited(sh, 1'000'000'000));   // duration over
}

TEST(NotifyInhibitor, SourceWithAnEndMutesUntilItEnds) {
  InhibitRule rule;
  rule.source_matchers = parse_matchers({"type=\"limit_down_sealed\""}).value();
  rule.target_matchers = parse_matchers({"type=\"large_sell\""}).value();
  rule.equal = {"symbol"};
  rule.duration_ms = 1;
  Inhibitor inh({rule});
  inh.observe(na(labels("600519.SH", "limit_down_sealed", "critical"), AlertType::kLimitDownSealed), 0);
  const auto sell = na(labels("600519.SH", "large_sell", "warning"), AlertType::kLargeSell);
  EXPECT_TRUE(inh.inhibited(sell, 3'600 * kNsPerSec));
  inh.resolve(AlertType::kLimitDownSealed, "600519.SH");
  EXPECT_FALSE(inh.inhibited(sell, 3'600 * kNsPerSec));
}

}  // namespace
}  // namespace ts::notify
