// A receiver that is down, then back: nothing lost. A restart with notifications in flight:
// the outbox resumes, nothing lost, nothing sent twice (beyond at-least-once: see outbox.h).
#include <gtest/gtest.h>

#include <map>

#include "notify_test_util.h"
#include "peer_process.h"
#include "test_data.h"

namespace ts::notify {
namespace {

using testing::PeerProcess;
using testing::wait_for;

// One group per symbol, no grouping delay, a short backoff so that "down for an hour" is
// "down for a second" here; the rules are the same.
std::string config_toml(const std::string& db, int port, int queue = 4096) {
  return "[notify]\noutbox_db = \"" + db + "\"\nqueue_capacity = " + std::to_string(queue) +
         "\ndrain_ms = 0\n"
         "[[notify.receivers]]\nname = \"hook\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:" +
         std::to_string(port) + "/generic\"\nrate_per_s = 1000\nburst = 1000\ntimeout_ms = 2000\n"
         "[notify.route]\nreceiver = \"hook\"\ngroup_by = [\"symbol\"]\ngroup_wait_ms = 0\n"
         "[notify.retry]\ninitial_backoff_ms = 20\nmax_backoff_ms = 200\njitter = 0.5\n";
}

// How many times the peer received each alert id.
std::map<uint64_t, int> ids_received(const PeerProcess& peer) {
  std::map<uint64_t, int> out;
  for (const auto& r : peer.received()) {
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
    for (const auto& a : r["body"]["alerts"]) ++out[a["alertId"].get<uint64_t>()];
  }
  return out;
}

TEST(NotifyOutage, ReceiverDownThenBackLosesNothing) {
  auto dir = testing::scratch_dir("notify_outage");
  const int port = testing::free_port();
  SymbolTable symbols;
  auto n = Notifier::create(testing::notify_config(config_toml((dir / "outbox.db").string(), port)), symbols);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  n.value()->start();
  const int kAlerts = 20;
  for (int i = 0; i < kAlerts; ++i) {
    (void)n.value()->submit(testing::notify_alert(symbols, "60000" + std::to_string(i % 10) + ".SH",
                                                  AlertType::kVolumeBurst, uint64_t(i + 1)));
  }
  // Down: attempts fail, notifications wait in the outbox.
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().failed_attempts >= 10; }));
  EXPECT_EQ(n.value()->stats().delivered, 0u);
  EXPECT_GT(n.value()->outbox().counts().value().pending, 0);
  // Back up on the same port.
  PeerProcess peer("webhook_peer.py", dir, "web", {"--port", std::to_string(port)});
  ASSERT_TRUE(wait_for([&] { return n.value()->outbox().counts().value().pending == 0; }));
  n.value()->stop();
  auto got = ids_received(peer);
  EXPECT_EQ(got.size(), size_t(kAlerts));
  for (const auto& [id, times] : got) EXPECT_EQ(times, 1) << "alert " << id;
  EXPECT_EQ(n.value()->stats().dead, 0u);
  const auto records = n.value()->outbox().records().value();
  int retried = 0;
  for (const auto& rec : records) {
    EXPECT_EQ(rec.state, "delivered");
    EXPECT_GT(rec.latency_ns, 0);
    retried += rec.attempts > 1;
  }
  EXPECT_GE(retried, 10);  // the first message of each of the 10 symbols' groups waited out the outage
}

TEST(NotifyOutage, RestartMidDeliveryResumesWithNothingLostOrDoubled) {
  auto dir = testing::scratch_dir("notify_restart");
  const std::string db = (dir / "outbox.db").string();
  // A slow receiver (150 ms per request): the first run stops with most notifications pending.
  PeerProcess slow("webhook_peer.py", dir, "slow", {"--delay-ms", "150"});
  const int kAlerts = 30;
  {
    SymbolTable symbols;
    auto n = Notifier::create(testing::notify_config(config_toml(db, slow.port())), symbols);
    ASSERT_TRUE(n.is_ok());
    n.value()->start();
    for (int i = 0; i < kAlerts; ++i) {
      (void)n.value()->submit(testing::notify_alert(symbols, "6000" + std::to_string(10 + i) + ".SH",
                                                    AlertType::kRapidRise, uint64_t(i + 1)));
    }
    ASSERT_TRUE(wait_for([&] { return n.value()->stats().delivered >= 2; }));
    n.value()->stop();  // drain_ms = 0: the request in flight completes, the rest stays pending
    EXPECT_GT(n.value()->outbox().counts().value().pending, 0);
  }
  slow.kill_now();
  PeerProcess fast("webhook_peer.py", dir, "fast");
  SymbolTable symbols;
  auto cfg = testing::notify_config(config_toml(db, fast.port()));
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();  // a restart: nothing new submitted, the outbox resumes
  ASSERT_TRUE(wait_for([&] { return n.value()->outbox().counts().value().pending == 0; }));
  n.value()->stop();
  std::map<uint64_t, int> all = ids_received(slow);
  for (const auto& [id, times] : ids_received(fast)) all[id] += times;
  EXPECT_EQ(all.size(), size_t(kAlerts));
  for (const auto& [id, times] : all) EXPECT_EQ(times, 1) << "alert " << id;
  EXPECT_EQ(n.value()->outbox().counts().value().delivered, kAlerts);
}

TEST(NotifyOutage, EachReceiverRetriesByItsOwnPolicy) {
  // Both receivers post to a peer answering 503: "pager" gives up after 3 attempts, "desk"
  // (the section's policy, no attempt limit) keeps its notification pending.
  auto dir = testing::scratch_dir("notify_retry_policy");
  PeerProcess peer("webhook_peer.py", dir, "web", {"--fail-status", "503"});
  const std::string url = "http://127.0.0.1:" + std::to_string(peer.port()) + "/generic";
  SymbolTable symbols;
  auto n = Notifier::create(
      testing::notify_config("[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\ndrain_ms = 0\n"
                             "[notify.retry]\ninitial_backoff_ms = 10\nmax_backoff_ms = 20\n"
                             "[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"" + url + "\"\n"
                             "[[notify.receivers]]\nname = \"pager\"\ntype = \"webhook\"\nurl = \"" + url + "\"\n"
                             "retry = { max_attempts = 3 }\n"
                             "[notify.route]\nreceiver = \"desk\"\ngroup_wait_ms = 0\n"
                             "[[notify.route.routes]]\nreceiver = \"pager\"\nmatchers = ['severity=\"critical\"']\ncontinue = true\n"
                             "[[notify.route.routes]]\nreceiver = \"desk\"\nmatchers = ['severity=\"critical\"']\n"),
      symbols);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  n.value()->start();
  ASSERT_TRUE(n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kRapidRise, 1, Severity::kCritical)));
  ASSERT_TRUE(wait_for([&] { return n.value()->outbox().counts("pager").value().dead == 1; }));
  // desk has failed more often than pager's limit and still waits.
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().failed_attempts >= 8; }));
  n.value()->stop();
  EXPECT_EQ(n.value()->outbox().counts("desk").value().pending, 1);
  EXPECT_EQ(n.value()->outbox().counts("desk").value().dead, 0);
  const auto records = n.value()->outbox().records().value();
  for (const auto& rec : records) {
    if (rec.receiver == "pager") {
      EXPECT_EQ(rec.attempts, 3);
      EXPECT_NE(rec.last_error.find("503"), std::string::npos) << rec.last_error;
    } else {
      EXPECT_GE(rec.attempts, 4);
    }
  }
}

TEST(NotifyOutage, FullQueueSpillsToTheOutboxAndLosesNothing) {
  auto dir = testing::scratch_dir("notify_spill");
  PeerProcess peer("webhook_peer.py", dir, "web");
  SymbolTable symbols;
  auto n = Notifier::create(testing::notify_config(config_toml((dir / "outbox.db").string(), peer.port(), 2)), symbols);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();
  const int kAlerts = 200;
  for (int i = 0; i < kAlerts; ++i) {
    ASSERT_TRUE(n.value()->submit(testing::notify_alert(symbols, "6001" + std::to_string(10 + i % 50) + ".SH",
                                                        AlertType::kLargeBuy, uint64_t(i + 1))));
  }
  EXPECT_GT(n.value()->stats().spilled, 0u);
  ASSERT_TRUE(wait_for([&] {
    size_t total = 0;
    for (const auto& [id, times] : ids_received(peer)) total += size_t(times);
    return total >= size_t(kAlerts);
  }));
  n.value()->stop();
  auto got = ids_received(peer);
  EXPECT_EQ(got.size(), size_t(kAlerts));
}

}  // namespace
}  // namespace ts::notify
