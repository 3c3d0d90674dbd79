// SilenceStore: create / list / expire, validation, persistence across reopen; templates;
// retry delays and the rate limiter.
#include <gtest/gtest.h>

#include "notify/delivery.h"
#include "notify/silence_store.h"
#include "notify/template.h"
#include "test_data.h"

namespace ts::notify {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(NotifySilences, CreateListExpireAndSurviveReopen) {
  auto dir = testing::scratch_dir("notify_silences");
  const std::string db = (dir / "outbox.db").string();
  const Labels moutai{{"symbol", "600519.SH"}, {"type", "rapid_rise"}};
  const Labels other{{"symbol", "600036.SH"}, {"type", "rapid_rise"}};
  std::string id;
  {
    auto store = SilenceStore::open(db);
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    Silence s;
    s.matchers = parse_matchers({"symbol=\"600519.SH\""}).value();
    s.author = "li.wei";
    s.comment = "earnings call, expected moves";
    s.ends_unix_ns = 1000 * kS;
    auto created = store.value()->create(s, 100 * kS);
    ASSERT_TRUE(created.is_ok()) << created.status().to_string();
    id = created.value();
    EXPECT_EQ(store.value()->silenced_by(moutai, 200 * kS), id);
    EXPECT_FALSE(store.value()->silenced_by(other, 200 * kS));
    EXPECT_FALSE(store.value()->silenced_by(moutai, 1000 * kS));  // ended
  }
  auto store = SilenceStore::open(db);  // a restart
  ASSERT_TRUE(store.is_ok());
  auto list = store.value()->list(200 * kS);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].author, "li.wei");
  EXPECT_EQ(list[0].matchers[0].to_string(), "symbol=\"600519.SH\"");
  EXPECT_TRUE(store.value()->expire(id, 300 * kS).is_ok());
  EXPECT_FALSE(store.value()->silenced_by(moutai, 301 * kS));
  EXPECT_TRUE(store.value()->list(301 * kS).empty());
  EXPECT_EQ(store.value()->list(301 * kS, true).size(), 1u);
  EXPECT_EQ(store.value()->expire("nope", 301 * kS).code(), StatusCode::kNotFound);
}

// Declared silences (the config file's) match and are listed like stored ones, are never written
// to the file, and cannot be expired; silences of the file they used to share with the outbox
// are imported once into their own file.
TEST(NotifySilences, DeclaredOnesMatchAndLegacyOnesAreImportedOnce) {
  auto dir = testing::scratch_dir("notify_silences_declared");
  const std::string legacy = (dir / "outbox.db").string(), own = (dir / "silences.db").string();
  const Labels goog{{"symbol", "GOOG"}, {"type", "large_trade"}};
  std::string old_id;
  {
    auto store = SilenceStore::open(legacy);
    ASSERT_TRUE(store.is_ok());
    Silence s;
    s.matchers = parse_matchers({"symbol=AAPL"}).value();
    s.author = "a";
    s.comment = "made before silences had their own file";
    s.ends_unix_ns = 1000 * kS;
    old_id = store.value()->create(s, 100 * kS).value();
  }
  Silence d;
  d.matchers = parse_matchers({"type=large_trade"}).value();
  d.author = "config";
  d.comment = "block trades reviewed daily";
  d.ends_unix_ns = INT64_MAX;
  auto store = SilenceStore::open(own, {d}, {legacy, (dir / "missing.db").string()});
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  EXPECT_EQ(store.value()->imported(), 1u);
  EXPECT_EQ(store.value()->silenced_by(goog, 200 * kS), "config-1");
  const auto list = store.value()->list(200 * kS);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, "config-1");
  EXPECT_EQ(list[1].id, old_id);
  const Status st = store.value()->expire("config-1", 200 * kS);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("[[silences.declared]]"), std::string::npos) << st.message();
  ASSERT_TRUE(store.value()->expire(old_id, 300 * kS).is_ok());
  store.value().reset();
  // Reopened: the import is not repeated (the expired silence stays expired), the declared one
  // was never stored.
  auto again = SilenceStore::open(own, {}, {legacy});
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again.value()->imported(), 0u);
  const auto all = again.value()->list(301 * kS, true);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].ends_unix_ns, 300 * kS);
}

TEST(NotifySilences, RefusesIncompleteSilences) {
  auto dir = testing::scratch_dir("notify_silences_bad");
  auto store = SilenceStore::open((dir / "outbox.db").string()).value();
  Silence s;
  s.author = "a";
  s.comment = "c";
  s.ends_unix_ns = 10 * kS;
  EXPECT_NE(store->create(s, kS).status().message().find("matcher"), std::string::npos);
  s.matchers = parse_matchers({"type=\"x\""}).value();
  s.author = "";
  EXPECT_NE(store->create(s, kS).status().message().find("author"), std::string::npos);
  s.author = "a";
  EXPECT_NE(store->create(s, 20 * kS).status().message().find("past"), std::string::npos);
}

TEST(NotifyTemplate, VariablesAndUnknownOnes) {
  Notification n;
  n.receiver = "desk";
  n.group_labels = Labels{{"type", "rapid_rise"}};
  for (int i = 0; i < 3; ++i) {
    NotifyAlert a;
    a.labels = Labels{{"symbol", "60000" + std::to_string(i) + ".SH"}, {"type", "rapid_rise"}};
    a.summary = "line" + std::to_string(i);
    n.alerts.push_back(a);
  }
  auto t = Template::parse("[{{status}}] {{count}} {{type}} {{symbols}}|{{symbol}}|\n{{alerts}}");
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t.value().render(n, 2), "[firing] 3 rapid_rise 600000.SH,600001.SH,600002.SH||\nline0\nline1\n... and 1 more");
  EXPECT_EQ(Template::parse("{{x}}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Template::parse("{{alerts").is_ok());
  auto j = Template::parse("{\"t\":\"{{alerts}}\"}").value();
  n.alerts[0].summary = "say \"hi\"";
  EXPECT_EQ(j.render(n, 1, TemplateEscape::kJson), "{\"t\":\"say \\\"hi\\\"\\n... and 2 more\"}");
}

TEST(NotifyRetry, ExponentialBackoffWithJitterCapped) {
  RetryPolicy p;
  p.initial_backoff_ms = 100;
  p.max_backoff_ms = 1000;
  p.jitter = 0.5;
  EXPECT_EQ(retry_delay_ms(p, 1, 0.0), 100);
  EXPECT_EQ(retry_delay_ms(p, 3, 0.0), 400);
  EXPECT_EQ(retry_delay_ms(p, 3, 0.999), 200);
  EXPECT_EQ(retry_delay_ms(p, 30, 0.0), 1000);
}

TEST(NotifyRateLimit, BurstThenSustainedRate) {
  TokenBucket b(10, 3);  // 10/s, burst 3
  EXPECT_EQ(b.take(1), 0);
  EXPECT_EQ(b.take(1), 0);
  EXPECT_EQ(b.take(1), 0);
  const int64_t wait = b.take(1);
  EXPECT_GT(wait, 90'000'000);
  EXPECT_LE(wait, 100'000'000);
  EXPECT_EQ(b.take(1 + 100'000'000), 0);
}

}  // namespace
}  // namespace ts::notify
