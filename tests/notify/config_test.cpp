// [notify] validation: clear errors naming the key; unread-key detection still works.
#include <gtest/gtest.h>

#include "notify_test_util.h"

namespace ts::notify {
namespace {

const char* kReceiver = R"(
[[notify.receivers]]
name = "desk"
type = "slack"
url = "http://127.0.0.1:1/slack"
)";

std::string error_of(const std::string& toml) {
  try {
    (void)testing::notify_config(toml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(NotifyConfig, DefaultsAreSubSecond) {
  auto c = testing::notify_config(std::string("[notify]\n") + kReceiver + "[notify.route]\nreceiver = \"desk\"\n");
  EXPECT_EQ(c.route.group_wait_ms, 100);
  EXPECT_EQ(c.route.group_interval_ms, 500);
  EXPECT_EQ(c.route.group_by, (std::vector<std::string>{"market", "type"}));
  EXPECT_EQ(c.outbox_db, "ticksentry-outbox.db");
}

TEST(NotifyConfig, ErrorsNameTheKey) {
  const std::string head = std::string("[notify]\n") + kReceiver;
  EXPECT_NE(error_of(head).find("notify.route"), std::string::npos);
  EXPECT_NE(error_of(head + "[notify.route]\nreceiver = \"nobody\"\n").find("no receiver named 'nobody'"), std::string::npos);
  EXPECT_NE(error_of(head + "[notify.route]\nreceiver = \"desk\"\nrecever = 1\n").find("notify.route.recever: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(head + "[notify.route]\nreceiver = \"desk\"\n[[notify.route.routes]]\nmatchers = ['severity==x']\n")
                .find("notify.route.routes[0].matchers"),
            std::string::npos);
  EXPECT_NE(error_of(head + "[notify.route]\nreceiver = \"desk\"\nmute_time_windows = [\"lunch\"]\n").find("no time window named 'lunch'"),
            std::string::npos);
  EXPECT_NE(error_of("[notify]\n[[notify.receivers]]\nname = \"x\"\ntype = \"pager\"\nurl = \"http://a\"\n[notify.route]\nreceiver = \"x\"\n")
                .find("notify.receivers[0].type"),
            std::string::npos);
  EXPECT_NE(error_of(head + "[notify.route]\nreceiver = \"desk\"\n[[notify.time_windows]]\nname = \"s\"\ntimes = [\"9:30-11:30\"]\n")
                .find("notify.time_windows[0].times"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("[notify]\n[[notify.receivers]]\nname = \"m\"\ntype = \"email\"\nurl = \"smtp://h:25\"\n"
                                 "to = [\"a@b\"]\n[notify.route]\nreceiver = \"m\"\n"))
                .find("notify.receivers[0].from"),
            std::string::npos);
  EXPECT_NE(error_of(head + "[notify.route]\nreceiver = \"desk\"\n[[notify.receivers]]\nname = \"desk\"\ntype = \"slack\"\nurl = \"http://x\"\n")
                .find("two receivers named 'desk'"),
            std::string::npos);
}

TEST(NotifyConfig, RetryPerReceiverInheritsTheSectionsAndOverrides) {
  auto c = testing::notify_config(std::string("[notify]\n") + kReceiver +
                                  "[[notify.receivers]]\nname = \"pager\"\ntype = \"slack\"\nurl = \"http://127.0.0.1:1/slack\"\n"
                                  "retry = { max_attempts = 5, initial_backoff_ms = 50 }\n"
                                  "[[notify.receivers]]\nname = \"mail\"\ntype = \"slack\"\nurl = \"http://127.0.0.1:1/slack\"\n"
                                  "[notify.receivers.retry]\ngive_up_after_ms = 3600000\njitter = 0\n"
                                  "[notify.retry]\nmax_backoff_ms = 10000\njitter = 0.5\n"
                                  "[notify.route]\nreceiver = \"desk\"\n");
  ASSERT_EQ(c.receivers.size(), 3u);
  const RetryPolicy& desk = c.receivers[0].retry;  // the section's, over the built-in defaults
  EXPECT_EQ(desk.max_backoff_ms, 10000);
  EXPECT_EQ(desk.jitter, 0.5);
  EXPECT_EQ(desk.initial_backoff_ms, 200);
  EXPECT_EQ(desk.max_attempts, 0);
  EXPECT_EQ(desk.give_up_after_ms, 86'400'000);
  const RetryPolicy& pager = c.receivers[1].retry;  // its own, over the section's
  EXPECT_EQ(pager.max_attempts, 5);
  EXPECT_EQ(pager.initial_backoff_ms, 50);
  EXPECT_EQ(pager.max_backoff_ms, 10000);
  const RetryPolicy& mail = c.receivers[2].retry;
  EXPECT_EQ(mail.give_up_after_ms, 3'600'000);
  EXPECT_EQ(mail.jitter, 0.0);
  EXPECT_EQ(mail.max_attempts, 0);
  // Either limit ends the retries.
  EXPECT_FALSE(pager.gives_up(4, 10));
  EXPECT_TRUE(pager.gives_up(5, 10));
  EXPECT_TRUE(mail.gives_up(1, 3'600'000));
  EXPECT_FALSE(mail.gives_up(1000, 3'599'999));
}

TEST(NotifyConfig, BadRetrySettingsNameTheReceiver) {
  const std::string head = std::string("[notify]\n") + kReceiver;
  const std::string route = "[notify.route]\nreceiver = \"desk\"\n";
  auto with = [&](const std::string& retry) { return error_of(head + "retry = { " + retry + " }\n" + route); };
  EXPECT_NE(with("jitter = 1.5").find("notify.receivers[0].retry.jitter: must be in [0, 1)"), std::string::npos)
      << with("jitter = 1.5");
  EXPECT_NE(with("max_attempts = -1").find("notify.receivers[0].retry.max_attempts"), std::string::npos);
  EXPECT_NE(with("initial_backoff_ms = 500, max_backoff_ms = 100").find("notify.receivers[0].retry.max_backoff_ms: must be >= initial_backoff_ms (500)"),
            std::string::npos) << with("initial_backoff_ms = 500, max_backoff_ms = 100");
  EXPECT_NE(with("multiplier = 0.5").find("notify.receivers[0].retry.multiplier"), std::string::npos);
  EXPECT_NE(with("give_up_after_ms = 0").find("notify.receivers[0].retry.give_up_after_ms"), std::string::npos);
  EXPECT_NE(with("max_atempts = 3").find("notify.receivers[0].retry.max_atempts: unknown key"), std::string::npos);
  EXPECT_NE(error_of(head + "retry = 3\n" + route).find("notify.receivers[0].retry: expected a table"), std::string::npos);
  // The section's own table is checked too, and a receiver's inherits only valid values.
  EXPECT_NE(error_of(head + route + "[notify.retry]\njitter = -0.1\n").find("notify.retry.jitter"), std::string::npos);
}

TEST(NotifyConfig, KeysUnderNotifyCountAsRead) {
  Config cfg = Config::parse(std::string("[notify]\n") + kReceiver + "[notify.route]\nreceiver = \"desk\"\n[sinks]\nstdoutt = true\n");
  (void)read_notify_config(cfg);
  EXPECT_EQ(cfg.unread_keys(), (std::vector<std::string>{"sinks.stdoutt"}));
}

}  // namespace
}  // namespace ts::notify
