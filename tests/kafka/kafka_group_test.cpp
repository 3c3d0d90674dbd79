// Scale-out and crash: two `run --source kafka` instances in one consumer group split a
// simulator topic; one is SIGKILLed mid-stream. The survivor takes its partitions over, re-reads
// them from the group's last commit (rebuilding those symbols' books and features), and after
// deduplication by alert id the two instances raised exactly the alerts of one uninterrupted
// consumer — none lost, none twice; the survivor ends with lag 0.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "kafka/kafka_mock.h"
#include "kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

// Alert ids in a JSONL file; a line cut short by SIGKILL is skipped.
std::multiset<uint64_t> jsonl_ids(const std::filesystem::path& p) {
  std::multiset<uint64_t> ids;
  std::ifstream f(p);
  for (std::string line; std::getline(f, line);) {
    try {
      ids.insert(nlohmann::json::parse(line).at("id").get<uint64_t>());
    } catch (const std::exception&) {
    }
  }
  return ids;
}

TEST(KafkaGroup, KilledInstanceIsTakenOverAndEveryAlertIsRaisedOnce) {
  const auto dir = scratch_dir("kafka_group");
  {
    std::ofstream sim(dir / "sim.toml");
    sim << "[sim]\nevents_per_s = 1000.0\nanomalies_per_hour = 120.0\nanomaly_warmup_s = 20.0\n";
    std::ofstream cfg(dir / "kafka.toml");
    // The survivor waits long enough at the end for the group to notice the dead member.
    cfg << "[kafka]\neof_idle_ms = 20000\n[kafka.consumer]\n\"session.timeout.ms\" = 6000\n"
           "\"heartbeat.interval.ms\" = 500\n[rules]\nrelative = false\n";
    std::ofstream ref(dir / "ref.toml");
    // The absolute thresholds (both configs): the simulator's anomalies raise enough alerts to
    // split between two consumers (at the relative defaults, 3).
    ref << "[kafka]\neof_idle_ms = 3000\n[rules]\nrelative = false\n";
  }
  auto cluster = KafkaMockCluster::start(3);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("md", 16).is_ok());

  auto instance = [&](const std::string& name) {
    return spawn({"run", "--source", "kafka", "--brokers", brokers, "--topic", "md", "--group", "desk", "--exit-at-eof",
                  "--config", "kafka.toml", "--no-stdout", "--jsonl", name + ".jsonl", "--audit-db", ""},
                 dir, name);
  };
  Child a = instance("a");
  ASSERT_TRUE(wait_for_text(a.err, "assigned", 60)) << slurp(a.err);
  Child b = instance("b");
  // Both own partitions before data flows (a cooperative rebalance hands B its share in a second
  // round, after A has revoked it).
  bool split = false;
  for (int i = 0; i < 600 && !split; ++i) {
    const std::string log = slurp(b.err);
    for (size_t at = log.find("assigned md partitions ["); at != std::string::npos && !split;
         at = log.find("assigned md partitions [", at + 1)) {
      split = std::isdigit(static_cast<unsigned char>(log[at + 24]));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(split) << "B never got partitions: " << slurp(b.err);

  // Publish while both consume, paced so that the kill lands mid-stream.
  Child pub = spawn({"publish", "--format", "sim", "--config", "sim.toml", "--symbols", "16", "--sim-seconds", "60",
                     "--seed", "7", "--brokers", brokers, "--topic", "md", "--rate", "20000"},
                    dir, "publish");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  kill(a.pid, SIGKILL);
  EXPECT_EQ(wait_child(a, 30), 128 + SIGKILL);
  ASSERT_EQ(wait_child(pub, 300), 0) << slurp(pub.err);
  ASSERT_EQ(wait_child(b, 300), 0) << slurp(b.err);
  const std::string b_log = slurp(b.err);
  EXPECT_NE(b_log.find("lag 0"), std::string::npos) << b_log;

  // The reference: one consumer, never interrupted.
  const Child ref = run_child({"run", "--source", "kafka", "--brokers", brokers, "--topic", "md", "--group", "ref",
                               "--exit-at-eof", "--config", "ref.toml", "--no-stdout", "--jsonl", "ref.jsonl",
                               "--audit-db", ""},
                              dir, "ref", 300);
  ASSERT_EQ(ref.exit_code, 0) << slurp(ref.err);
  const auto want = jsonl_ids(dir / "ref.jsonl");
  ASSERT_GT(want.size(), 3u) << "the simulator must raise alerts for this test to mean anything";
  EXPECT_EQ(std::set<uint64_t>(want.begin(), want.end()).size(), want.size());

  std::multiset<uint64_t> got = jsonl_ids(dir / "a.jsonl");
  const auto from_b = jsonl_ids(dir / "b.jsonl");
  got.insert(from_b.begin(), from_b.end());
  const std::set<uint64_t> deduped(got.begin(), got.end());
  EXPECT_EQ(deduped, std::set<uint64_t>(want.begin(), want.end()));
  // The survivor alone raised every alert of the partitions it ended up owning, A's included.
  EXPECT_EQ(std::set<uint64_t>(from_b.begin(), from_b.end()).size(), deduped.size())
      << "B re-read A's partitions from the last commit";
}

}  // namespace
}  // namespace ts::testing
