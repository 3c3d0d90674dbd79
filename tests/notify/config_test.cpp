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

TEST(NotifyConfig, KeysUnderNotifyCountAsRead) {
  Config cfg = Config::parse(std::string("[notify]\n") + kReceiver + "[notify.route]\nreceiver = \"desk\"\n[sinks]\nstdoutt = true\n");
  (void)read_notify_config(cfg);
  EXPECT_EQ(cfg.unread_keys(), (std::vector<std::string>{"sinks.stdoutt"}));
}

}  // namespace
}  // namespace ts::notify
