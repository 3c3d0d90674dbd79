// The notifier against real peers on loopback: a webhook server that checks every channel's
// payload shape and the DingTalk/Feishu signatures, an SMTP server (aiosmtpd) with AUTH; a
// receiver outage and recovery; a restart with nothing lost and nothing sent twice.
#include <gtest/gtest.h>

#include <set>

#include "notify/silence_store.h"
#include "notify_test_util.h"
#include "peer_process.h"
#include "test_data.h"

namespace ts::notify {
namespace {

using testing::PeerProcess;
using testing::wait_for;

std::string receivers_toml(int port, const std::string& dingtalk_secret) {
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  return R"(
[[notify.receivers]]
name = "generic"
type = "webhook"
url = ")" + base + R"(/generic"
[[notify.receivers]]
name = "slack"
type = "slack"
url = ")" + base + R"(/slack"
[[notify.receivers]]
name = "wecom"
type = "wecom"
url = ")" + base + R"(/wecom?key=k"
[[notify.receivers]]
name = "dingtalk"
type = "dingtalk"
url = ")" + base + R"(/dingtalk?access_token=t"
secret = ")" + dingtalk_secret + R"("
[[notify.receivers]]
name = "feishu"
type = "feishu"
url = ")" + base + R"(/feishu/hook"
secret = "feishu-secret"
[[notify.receivers]]
name = "sms"
type = "sms"
url = ")" + base + R"(/sms"
to = ["+8613800000001", "+8613800000002"]
text = "{{symbols}} {{type}} {{count}}"
)";
}

std::string fanout_routes() {
  std::string s = "[notify.route]\nreceiver = \"generic\"\ngroup_wait_ms = 0\n";
  for (const char* r : {"generic", "slack", "wecom", "dingtalk", "feishu", "sms"}) {
    s += std::string("[[notify.route.routes]]\nreceiver = \"") + r + "\"\nmatchers = ['type=~\".+\"']\ncontinue = true\n";
  }
  return s;
}

TEST(NotifyDelivery, EveryChannelReachesItsPeerInTheRightShape) {
  auto dir = testing::scratch_dir("notify_channels");
  PeerProcess peer("webhook_peer.py", dir, "web", {"--dingtalk-secret", "SECxyz", "--feishu-secret", "feishu-secret"});
  auto cfg = testing::notify_config("[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\n" +
                                    receivers_toml(peer.port(), "SECxyz") + fanout_routes());
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  n.value()->start();
  EXPECT_TRUE(n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kRapidRise, 1)));
  // 5 webhooks + 2 SMS numbers.
  ASSERT_TRUE(wait_for([&] { return peer.received().size() >= 7; })) << peer.received().size();
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().delivered == 6; }));
  n.value()->stop();
  std::multiset<std::string> kinds;
  for (const auto& r : peer.received()) {
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
    kinds.insert(r["kind"].get<std::string>());
  }
  EXPECT_EQ(kinds, (std::multiset<std::string>{"generic", "slack", "wecom", "dingtalk", "feishu", "sms", "sms"}));
  for (const auto& r : peer.received()) {
    if (r["kind"] == "generic") {
      EXPECT_EQ(r["body"]["commonLabels"]["symbol"], "600519.SH");
      EXPECT_EQ(r["body"]["commonLabels"]["market"], "SH");
      EXPECT_EQ(r["body"]["alerts"][0]["labels"]["type"], "rapid_rise");
      EXPECT_NE(r["body"]["alerts"][0]["annotations"]["summary"].get<std::string>().find("ret_60s_bps=312.5"), std::string::npos);
    }
    if (r["kind"] == "sms") {
      EXPECT_EQ(r["body"]["text"], "600519.SH rapid_rise 1");
    }
  }
  auto counts = n.value()->outbox().counts();
  EXPECT_EQ(counts.value().delivered, 6);
  EXPECT_EQ(counts.value().pending, 0);
}

TEST(NotifyDelivery, WrongDingTalkSecretIsRefusedAndKeptForRetry) {
  auto dir = testing::scratch_dir("notify_dingtalk_bad");
  PeerProcess peer("webhook_peer.py", dir, "web", {"--dingtalk-secret", "SECright"});
  auto cfg = testing::notify_config("[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\n" +
                                    receivers_toml(peer.port(), "SECwrong") +
                                    "[notify.route]\nreceiver = \"dingtalk\"\ngroup_wait_ms = 0\n"
                                    "[notify.retry]\ninitial_backoff_ms = 50\nmax_backoff_ms = 100\n");
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();
  (void)n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kRapidRise, 1));
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().failed_attempts >= 2; }));
  n.value()->stop();
  for (const auto& r : peer.received()) EXPECT_EQ(r["error"], "dingtalk: sign not match");
  auto recs = n.value()->outbox().records().value();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].state, "pending");  // errcode != 0 is retried, never silently dropped
  EXPECT_NE(recs[0].last_error.find("310000"), std::string::npos) << recs[0].last_error;
}

TEST(NotifyDelivery, EmailOverSmtpWithAuth) {
  auto dir = testing::scratch_dir("notify_smtp");
  PeerProcess smtp("smtp_peer.py", dir, "smtp", {"--user", "desk", "--password", "s3cret"});
  auto cfg = testing::notify_config("[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\n" +
                                    "[[notify.receivers]]\nname = \"mail\"\ntype = \"email\"\n"
                                    "url = \"smtp://127.0.0.1:" + std::to_string(smtp.port()) + "\"\n"
                                    "from = \"ticksentry@desk.example\"\nto = [\"trader@desk.example\", \"risk@desk.example\"]\n"
                                    "username = \"desk\"\npassword = \"s3cret\"\nstarttls = \"off\"\n"
                                    "title = \"[{{status}}] {{symbols}} 告警 {{type}}\"\n"
                                    "[notify.route]\nreceiver = \"mail\"\ngroup_wait_ms = 0\ngroup_by = [\"symbol\"]\n");
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();
  (void)n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kHighDive, 7, Severity::kCritical));
  ASSERT_TRUE(wait_for([&] { return !smtp.received().empty(); }));
  n.value()->stop();
  const auto mail = smtp.received().at(0);
  EXPECT_EQ(mail["from"], "ticksentry@desk.example");
  EXPECT_EQ(mail["to"], (nlohmann::json{"trader@desk.example", "risk@desk.example"}));
  EXPECT_EQ(mail["subject"], "[firing] 600519.SH 告警 high_dive");
  EXPECT_TRUE(mail["authenticated"].get<bool>());
  EXPECT_NE(mail["body"].get<std::string>().find("600519.SH high_dive critical"), std::string::npos) << mail["body"];
}

TEST(NotifyDelivery, SmtpWrongPasswordIsRetriedNotLost) {
  auto dir = testing::scratch_dir("notify_smtp_bad");
  PeerProcess smtp("smtp_peer.py", dir, "smtp", {"--user", "desk", "--password", "right"});
  auto cfg = testing::notify_config("[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\n" +
                                    "[[notify.receivers]]\nname = \"mail\"\ntype = \"email\"\n"
                                    "url = \"smtp://127.0.0.1:" + std::to_string(smtp.port()) + "\"\n"
                                    "from = \"a@b.c\"\nto = [\"d@e.f\"]\nusername = \"desk\"\npassword = \"wrong\"\ntimeout_ms = 1000\n"
                                    "[notify.route]\nreceiver = \"mail\"\ngroup_wait_ms = 0\n"
                                    "[notify.retry]\ninitial_backoff_ms = 50\nmax_backoff_ms = 100\n");
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();
  (void)n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kHighDive, 7));
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().failed_attempts >= 2; }));
  n.value()->stop();
  EXPECT_TRUE(smtp.received().empty());
  EXPECT_EQ(n.value()->outbox().counts().value().pending, 1);
}

}  // namespace
}  // namespace ts::notify

namespace ts::notify {
namespace {

// The router end to end: a silence, an inhibition rule and a muting time window each keep
// alerts away from the webhook; the rest arrive.
TEST(NotifyDelivery, SilencesInhibitionAndTimeWindowsMuteBeforeDelivery) {
  auto dir = testing::scratch_dir("notify_mute");
  PeerProcess peer("webhook_peer.py", dir, "web");
  auto cfg = testing::notify_config(
      "[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\n"
      "[[notify.receivers]]\nname = \"hook\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:" + std::to_string(peer.port()) +
      "/generic\"\n"
      "[[notify.time_windows]]\nname = \"lunch\"\nutc_offset_hours = 8\ntimes = [\"11:30-13:00\"]\n"
      "[notify.route]\nreceiver = \"hook\"\ngroup_by = [\"...\"]\ngroup_wait_ms = 0\nmute_time_windows = [\"lunch\"]\n"
      "[[notify.inhibit_rules]]\nsource_matchers = ['symbol=\"000001.SH\"', 'type=\"high_dive\"']\n"
      "target_matchers = ['symbol!=\"000001.SH\"']\nequal = [\"market\"]\n");
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  Silence s;
  s.matchers = parse_matchers({"symbol=\"600036.SH\""}).value();
  s.author = "desk";
  s.comment = "known news";
  s.ends_unix_ns = wall_ns() + 3600 * kNsPerSec;
  ASSERT_TRUE(n.value()->silences().create(s, wall_ns()).is_ok());
  n.value()->start();
  using testing::notify_alert;
  (void)n.value()->submit(notify_alert(symbols, "600519.SH", AlertType::kRapidRise, 1));       // delivered
  (void)n.value()->submit(notify_alert(symbols, "600036.SH", AlertType::kRapidRise, 2));       // silenced
  (void)n.value()->submit(notify_alert(symbols, "600519.SH", AlertType::kRapidRise, 3, Severity::kWarning,
                                       2 * 3600));                                                  // 12:00: lunch
  (void)n.value()->submit(notify_alert(symbols, "000002.SZ", AlertType::kLargeSell, 4));       // delivered (SZ)
  (void)n.value()->submit(notify_alert(symbols, "000001.SH", AlertType::kHighDive, 5, Severity::kCritical));  // delivered
  (void)n.value()->submit(notify_alert(symbols, "601318.SH", AlertType::kAcceleratingDrop, 6));  // inhibited (SH)
  (void)n.value()->submit(notify_alert(symbols, "000002.SZ", AlertType::kAcceleratingDrop, 7));  // delivered (SZ)
  ASSERT_TRUE(wait_for([&] { return n.value()->stats().delivered >= 4; }));
  n.value()->stop();
  std::set<uint64_t> ids;
  for (const auto& r : peer.received()) {
    for (const auto& a : r["body"]["alerts"]) ids.insert(a["alertId"].get<uint64_t>());
  }
  EXPECT_EQ(ids, (std::set<uint64_t>{1, 4, 5, 7}));
  const NotifierStats st = n.value()->stats();
  EXPECT_EQ(st.silenced, 1u);
  EXPECT_EQ(st.inhibited, 1u);
  EXPECT_EQ(st.muted_by_time, 1u);
}

}  // namespace
}  // namespace ts::notify

namespace ts::notify {
namespace {

// STARTTLS required by the server, its self-signed certificate trusted through ca_file; AUTH
// only after TLS (aiosmtpd refuses it before).
TEST(NotifyDelivery, EmailWithStartTlsAndAuth) {
  auto dir = testing::scratch_dir("notify_smtp_tls");
  const std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
                          "subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a test certificate";
  PeerProcess smtp("smtp_peer.py", dir, "smtp", {"--user", "desk", "--password", "s3cret", "--tls-cert", cert, "--tls-key", key});
  auto cfg = testing::notify_config("[notify]\noutbox_db = \"" + (dir / "outbox.db").string() + "\"\n" +
                                    "[[notify.receivers]]\nname = \"mail\"\ntype = \"email\"\n"
                                    "url = \"smtp://127.0.0.1:" + std::to_string(smtp.port()) + "\"\n"
                                    "from = \"ticksentry@desk.example\"\nto = [\"risk@desk.example\"]\n"
                                    "username = \"desk\"\npassword = \"s3cret\"\nstarttls = \"required\"\n"
                                    "ca_file = \"" + cert + "\"\n"
                                    "[notify.route]\nreceiver = \"mail\"\ngroup_wait_ms = 0\n");
  SymbolTable symbols;
  auto n = Notifier::create(cfg, symbols);
  ASSERT_TRUE(n.is_ok());
  n.value()->start();
  (void)n.value()->submit(testing::notify_alert(symbols, "600519.SH", AlertType::kLimitDownSealed, 9, Severity::kCritical));
  ASSERT_TRUE(wait_for([&] { return !smtp.received().empty(); }));
  n.value()->stop();
  const auto mail = smtp.received().at(0);
  EXPECT_TRUE(mail["tls"].get<bool>());
  EXPECT_TRUE(mail["authenticated"].get<bool>());
  EXPECT_NE(mail["body"].get<std::string>().find("limit_down_sealed"), std::string::npos);
}

}  // namespace
}  // namespace ts::notify
