// End to end: `ticksentry replay` of a real LOBSTER day with a [notify] section pointing at a
// loopback webhook peer: every alert the replay writes reaches the webhook, in the right shape,
// and the outbox records every notification as delivered.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "notify/outbox.h"
#include "peer_process.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts::notify {
namespace {

TEST(NotifyReplay, ReplayedAlertsArriveAtTheWebhook) {
  TS_REQUIRE_DATA(testing::lobster_file("GOOG", "message", 10));
  auto dir = testing::scratch_dir("notify_replay");
  testing::PeerProcess peer("webhook_peer.py", dir, "web");
  {
    std::ofstream cfg(dir / "ticksentry.toml");
    cfg << "[notify]\noutbox_db = \"outbox.db\"\ndrain_ms = 20000\n"
           "[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:"
        << peer.port()
        << "/generic\"\nrate_per_s = 1000\nburst = 1000\n"
           "[notify.route]\nreceiver = \"desk\"\ngroup_by = [\"symbol\", \"type\"]\ngroup_wait_ms = 0\n"
           // GOOG's lopsided books at the absolute threshold (49 alerts): a steady stream to
           // notify. At the default relative thresholds this day raises only 6 alerts.
           "[rules.book_imbalance]\nrelative = false\n";
  }
  const auto o = testing::run_bin({"replay", "--format", "lobster", testing::lobster_file("GOOG", "message", 10).string(),
                                   "--config", "ticksentry.toml", "--no-stdout", "--jsonl", "alerts.jsonl"},
                                  dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::set<uint64_t> written;
  {
    std::ifstream f(dir / "alerts.jsonl");
    for (std::string line; std::getline(f, line);) written.insert(nlohmann::json::parse(line)["id"].get<uint64_t>());
  }
  ASSERT_FALSE(written.empty()) << "the replay raised no alerts: nothing to notify";
  std::set<uint64_t> notified;
  for (const auto& r : peer.received()) {
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["body"]["commonLabels"]["symbol"], "GOOG");
    for (const auto& a : r["body"]["alerts"]) notified.insert(a["alertId"].get<uint64_t>());
  }
  EXPECT_EQ(notified, written);
  auto outbox = Outbox::open((dir / "outbox.db").string());
  ASSERT_TRUE(outbox.is_ok());
  const auto counts = outbox.value()->counts().value();
  EXPECT_EQ(counts.pending, 0);
  EXPECT_EQ(counts.delivered, int64_t(peer.received().size()));

  // The audit store has every delivery: `ticksentry audit deliveries` lists them.
  const auto json =
      testing::run_bin({"audit", "deliveries", "--audit-db", "ticksentry-audit.db", "--json", "--limit", "100000"}, dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::set<uint64_t> audited;
  int rows = 0;
  std::istringstream lines(json.out);
  for (std::string line; std::getline(lines, line); ++rows) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["state"], "delivered");
    EXPECT_EQ(j["receiver"], "desk");
    EXPECT_EQ(j["attempts"], 1);
    EXPECT_GT(j["alert_latency_ns"].get<int64_t>(), 0);
    for (const auto& id : j["alert_ids"]) audited.insert(id.get<uint64_t>());
  }
  EXPECT_EQ(rows, counts.delivered);
  EXPECT_EQ(audited, written);
  const auto table = testing::run_bin({"audit", "deliveries", "--audit-db", "ticksentry-audit.db", "--limit", "3"}, dir);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("desk: 3 delivered, 0 failed, 0 pending; alert → delivered p50"), std::string::npos) << table.out;
  const auto bad_state =
      testing::run_bin({"audit", "deliveries", "--audit-db", "ticksentry-audit.db", "--state", "lost"}, dir);
  EXPECT_EQ(bad_state.exit_code, 2);
  EXPECT_NE(bad_state.err.find("--state"), std::string::npos) << bad_state.err;
  const auto no_db = testing::run_bin({"audit", "deliveries", "--audit-db", "nothing-here.db"}, dir);
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_NE(no_db.err.find("nothing-here.db: no such audit database"), std::string::npos) << no_db.err;
}

// Replaying history with --no-notify pages nobody: no request reaches the webhook, no outbox is
// made; the alerts still go to the other sinks, and a bad [notify] is still refused.
TEST(NotifyReplay, NoNotifyContactsNoReceiverButStillChecksTheSection) {
  TS_REQUIRE_DATA(testing::lobster_file("GOOG", "message", 10));
  auto dir = testing::scratch_dir("notify_replay_off");
  testing::PeerProcess peer("webhook_peer.py", dir, "web");
  {
    std::ofstream cfg(dir / "ticksentry.toml");
    cfg << "[notify]\noutbox_db = \"outbox.db\"\n"
           "[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:"
        << peer.port() << "/generic\"\n[notify.route]\nreceiver = \"desk\"\ngroup_wait_ms = 0\n";
    std::ofstream bad(dir / "bad.toml");
    bad << "[notify]\n[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:9/x\"\n"
           "[notify.route]\nreceiver = \"nobody\"\n";
  }
  const std::string day = testing::lobster_file("GOOG", "message", 10).string();
  auto o = testing::run_bin({"replay", "--format", "lobster", day, "--config", "ticksentry.toml", "--no-stdout",
                             "--no-notify", "--jsonl", "alerts.jsonl", "--http", "off"},
                            dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("notifications off (--no-notify)"), std::string::npos) << o.err;
  std::ifstream f(dir / "alerts.jsonl");
  std::string line;
  EXPECT_TRUE(std::getline(f, line)) << "the alerts still reach the JSONL file";
  EXPECT_TRUE(peer.received().empty()) << peer.received().size() << " requests reached the webhook";
  EXPECT_FALSE(std::filesystem::exists(dir / "outbox.db")) << "nothing queued for later either";
  o = testing::run_bin({"replay", "--format", "lobster", day, "--config", "bad.toml", "--no-stdout", "--no-notify",
                        "--jsonl", "", "--audit-db", ""},
                       dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("notify.route.receiver: no receiver named 'nobody'"), std::string::npos) << o.err;
}

// A receiver that is down when the run ends: the run says how many notifications are still
// pending (stderr and the summary JSON) instead of ending as if all went out; the next run says
// how many it resumed.
TEST(NotifyReplay, PendingNotificationsAreReportedAtShutdown) {
  TS_REQUIRE_DATA(testing::lobster_file("GOOG", "message", 10));
  auto dir = testing::scratch_dir("notify_replay_pending");
  {
    std::ofstream cfg(dir / "ticksentry.toml");
    cfg << "[notify]\noutbox_db = \"outbox.db\"\ndrain_ms = 200\n"
           "[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:9/down\"\n"
           "[notify.route]\nreceiver = \"desk\"\ngroup_wait_ms = 0\n";
  }
  const auto o = testing::run_bin({"replay", "--format", "lobster", testing::lobster_file("GOOG", "message", 10).string(),
                                   "--config", "ticksentry.toml", "--no-stdout", "--jsonl", "", "--http", "off",
                                   "--summary-json", "s.json"},
                                  dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto outbox = Outbox::open((dir / "outbox.db").string());
  ASSERT_TRUE(outbox.is_ok());
  const int64_t pending = outbox.value()->counts().value().pending;
  ASSERT_GT(pending, 0) << "the receiver is down: something must be pending";
  EXPECT_NE(o.err.find("notifications: " + std::to_string(pending) + " still pending in the outbox"), std::string::npos)
      << o.err;
  std::ifstream sj(dir / "s.json");
  const auto summary = nlohmann::json::parse(sj);
  EXPECT_EQ(summary["notify"]["pending"].get<int64_t>(), pending);
  EXPECT_EQ(summary["notify"]["pending_at_start"].get<int64_t>(), 0) << "a fresh outbox";

  // The next run with the same outbox resumes them and says so, at start and at the end.
  const auto again = testing::run_bin({"replay", "--format", "lobster",
                                       testing::lobster_file("GOOG", "message", 10).string(), "--config",
                                       "ticksentry.toml", "--no-stdout", "--jsonl", "", "--audit-db", "", "--http",
                                       "off", "--to", "09:31", "--summary-json", "s2.json"},
                                      dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find(std::to_string(pending) + " notifications pending from an earlier run in outbox.db; "
                                                     "delivering them now"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("notifications: " + std::to_string(pending) +
                           " were pending from an earlier run when this one started (resumed)"),
            std::string::npos)
      << again.err;
  std::ifstream sj2(dir / "s2.json");
  EXPECT_EQ(nlohmann::json::parse(sj2)["notify"]["pending_at_start"].get<int64_t>(), pending);
}

TEST(NotifyReplay, BadNotifySectionIsAClearStartupError) {
  // The source opens before the config's [notify] section is checked: it needs the file.
  TS_REQUIRE_DATA(testing::lobster_file("GOOG", "message", 10));
  auto dir = testing::scratch_dir("notify_replay_bad");
  {
    std::ofstream cfg(dir / "ticksentry.toml");
    cfg << "[notify]\n[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:9/x\"\n"
           "[notify.route]\nreceiver = \"nobody\"\n";
  }
  const auto o = testing::run_bin({"replay", "--format", "lobster", testing::lobster_file("GOOG", "message", 10).string(),
                                   "--config", "ticksentry.toml", "--no-stdout"},
                                  dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("notify.route.receiver: no receiver named 'nobody'"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts::notify
