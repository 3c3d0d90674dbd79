// kill -9 mid-delivery: a real `ticksentry replay` of a LOBSTER day notifies a slow loopback
// webhook; once every alert is in the outbox and some notifications have gone out, the process is
// SIGKILLed. A second ticksentry on the same outbox (replaying nothing new) delivers the rest.
// Nothing is lost, and at most one notification per receiver arrives twice: the one whose send
// had completed when the process died but whose outbox mark had not (docs/notifications.md,
// "At-least-once").
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "audit/audit_store.h"
#include "notify/outbox.h"
#include "peer_process.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts::notify {
namespace {

using testing::PeerProcess;
using testing::wait_for;

pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& dir, const std::string& name) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen((dir / (name + ".out")).c_str(), "w", stdout) || !freopen((dir / (name + ".err")).c_str(), "w", stderr)) {
      _exit(99);
    }
    if (chdir(dir.c_str()) != 0) _exit(98);
    std::vector<char*> argv{const_cast<char*>(TICKSENTRY_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TICKSENTRY_BIN, argv.data());
    _exit(97);
  }
  return pid;
}

// The ids of the complete lines: the replay is still writing the file, so the text after the
// last newline may be half a line (one that can even end in a nested object's '}').
std::set<uint64_t> jsonl_ids(const std::filesystem::path& path) {
  std::set<uint64_t> out;
  std::ifstream f(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) out.insert(nlohmann::json::parse(line)["id"].get<uint64_t>());
  }
  return out;
}

TEST(NotifyCrash, KillNineMidDeliveryLosesNothingAndRepeatsAtMostOnePerReceiver) {
  TS_REQUIRE_DATA(testing::lobster_file("GOOG", "message", 10));
  auto dir = testing::scratch_dir("notify_crash");
  // 120 ms per request: the notifications of the day take seconds to deliver, so the kill lands
  // while most of them are pending.
  PeerProcess peer("webhook_peer.py", dir, "web", {"--delay-ms", "120"});
  {
    std::ofstream cfg(dir / "ticksentry.toml");
    cfg << "[notify]\noutbox_db = \"outbox.db\"\ndrain_ms = 30000\n"
           "[[notify.receivers]]\nname = \"desk\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:"
        << peer.port()
        << "/generic\"\nrate_per_s = 1000\nburst = 1000\n"
           "[notify.route]\nreceiver = \"desk\"\ngroup_by = [\"symbol\", \"type\"]\ngroup_wait_ms = 0\n"
           "group_interval_ms = 0\n"
           // GOOG's lopsided books at the absolute threshold (49 alerts): a steady stream to
           // notify. At the default relative thresholds this day raises only 6 alerts.
           "[rules.book_imbalance]\nrelative = false\n";
  }
  const std::vector<std::string> common = {"--config", "ticksentry.toml", "--no-stdout", "--audit-db",
                                           "audit.db", "--http",          "off"};
  std::vector<std::string> first = {
      "replay", "--format", "lobster", testing::lobster_file("GOOG", "message", 10).string(), "--jsonl", "alerts.jsonl"};
  first.insert(first.end(), common.begin(), common.end());
  const pid_t pid = spawn(first, dir, "first");

  // Wait until every alert the replay raised is committed to the outbox and a few notifications
  // have been delivered, then kill -9.
  std::unique_ptr<Outbox> outbox;
  ASSERT_TRUE(wait_for(
      [&] {
        if (!outbox && std::filesystem::exists(dir / "outbox.db"))
          outbox = Outbox::open((dir / "outbox.db").string()).value();
        return outbox != nullptr;
      },
      20));
  std::set<uint64_t> raised;
  bool all_in_outbox = wait_for(
      [&] {
        raised = jsonl_ids(dir / "alerts.jsonl");
        auto recs = outbox->audit_records(1);
        if (!recs.is_ok() || raised.empty()) return false;
        std::set<uint64_t> queued;
        for (const auto& r : recs.value()) queued.insert(r.alert_ids.begin(), r.alert_ids.end());
        // The replay has raised everything once the alert file stops growing with all of it queued
        // (its summary comes only after the drain).
        if (queued != raised) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return jsonl_ids(dir / "alerts.jsonl") == raised && peer.received().size() >= 3;
      },
      20);
  const size_t before_kill = peer.received().size();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(all_in_outbox) << "the replay did not commit its alerts to the outbox in time";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "ticksentry ended before the kill";
  const auto at_kill = outbox->counts().value();
  ASSERT_GT(at_kill.pending, 0) << "everything was delivered before the kill: the test proves nothing";
  ASSERT_GE(raised.size(), 10u);

  // Restart on the same outbox with nothing new to alert on (one small trade: a file with no
  // record at all is exit 2): it delivers what is pending, then exits (drain) once nothing is left.
  {
    std::ofstream empty(dir / "one_trade.csv");
    empty << "kind,symbol,exch_ts_ns,seq,fields\ntrade,GOOG,1340285400113246707,3,57951,1,S,0,0\n";
  }
  // --append: the audit store holds the first run's alerts; this run resumes it.
  std::vector<std::string> second = {"replay", "--format", "csv", "one_trade.csv", "--jsonl", "", "--append"};
  second.insert(second.end(), common.begin(), common.end());
  const auto o = testing::run_bin(second, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;

  // Nothing lost: every alert raised reached the webhook.
  std::map<uint64_t, int> times;
  std::map<std::string, int> messages;  // one delivered notification = one group key + alert ids
  for (const auto& r : peer.received()) {
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    std::string key = r["body"]["groupKey"].get<std::string>();
    for (const auto& a : r["body"]["alerts"]) {
      ++times[a["alertId"].get<uint64_t>()];
      key += '/';
      key += std::to_string(a["alertId"].get<uint64_t>());
    }
    ++messages[key];
  }
  std::set<uint64_t> notified;
  for (const auto& [id, n] : times) notified.insert(id);
  EXPECT_EQ(notified, raised);
  // At most one notification (the one in flight at the kill) arrived twice; none three times.
  int repeated = 0;
  for (const auto& [key, n] : messages) {
    EXPECT_LE(n, 2) << key;
    repeated += n - 1;
  }
  EXPECT_LE(repeated, 1) << "of " << peer.received().size() << " requests (" << before_kill << " before the kill)";
  const auto after = outbox->counts().value();
  EXPECT_EQ(after.pending, 0);
  EXPECT_EQ(after.dead, 0);
  EXPECT_EQ(size_t(after.delivered) + size_t(repeated), peer.received().size());
  // The audit store has the same record: every notification delivered, its latency counted.
  const auto rows = AuditStore::open((dir / "audit.db").string()).value()->deliveries({.limit = 100000}).value();
  EXPECT_EQ(int64_t(rows.size()), after.delivered);
  for (const auto& r : rows) {
    EXPECT_EQ(r.state, "delivered");
    EXPECT_GT(r.latency_ns, 0);
  }
}

}  // namespace
}  // namespace ts::notify
