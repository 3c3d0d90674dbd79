// Real data through a real Kafka protocol: `publish` writes LOBSTER GOOG (recorded to csv) into
// librdkafka's mock cluster, `run --source kafka` consumes it, and the alerts equal those of
// `replay` of the same file — in both wire encodings; alerts also reach the alerts topic.
//
// The mock cluster keeps at most 5 MiB per partition (librdkafka's rdkafka_mock.c), and one
// symbol is one partition: the inputs are the first 20,000 GOOG events (≈ 3 MB binary, 4 MB JSON).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <unistd.h>

#include "kafka/kafka_mock.h"
#include "kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

constexpr int kEvents = 20000;

class KafkaRoundTrip : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One directory per process: ctest runs each case as its own process, two at a time, and a
    // shared directory was wiped by the other case's set-up mid-run (exit 2, no stderr left).
    dir_ = new std::filesystem::path(scratch_dir("kafka_roundtrip-" + std::to_string(::getpid())));
    if (!missing_data(lobster_file("GOOG", "message", 10)).empty()) return;  // each case skips in SetUp
    // The first kEvents events of GOOG in the normalized csv (header line + kEvents lines).
    const Child rec =
        run_child({"record", "--format", "lobster", lobster_file("GOOG", "message", 10).string(), "--out", "goog.csv"},
                  *dir_, "record");
    ASSERT_EQ(rec.exit_code, 0) << slurp(rec.err);
    std::ifstream in(*dir_ / "goog.csv");
    std::ofstream out(*dir_ / "goog20k.csv");
    std::string line;
    for (int i = 0; i <= kEvents && std::getline(in, line); ++i) out << line << '\n';
  }
  static void TearDownTestSuite() { delete dir_; }

  void SetUp() override {
    TS_REQUIRE_DATA(lobster_file("GOOG", "message", 10));
    auto m = KafkaMockCluster::start(3);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    cluster_ = std::move(m).value();
    brokers_ = cluster_->bootstraps();
    ASSERT_TRUE(cluster_->create_topic("md", 4).is_ok());
    // Absolute thresholds low enough that the first 20,000 GOOG events raise alerts (the
    // relative defaults need minutes of history and raise none there); run and replay both use them.
    const std::string rules = "[rules]\nrelative = false\n[rules.large_trade]\nmin_notional = 100000\n";
    std::ofstream(*dir_ / "rules.toml") << rules;
    std::ofstream cfg(*dir_ / "kafka.toml");
    // Generous idle time before --exit-at-eof ends the run: this machine is shared and slow.
    cfg << "[kafka]\neof_idle_ms = 3000\n[kafka.consumer]\n\"session.timeout.ms\" = 10000\n" << rules;
  }

  // publish → run → alerts (JSONL), checked against replay of the same csv.
  void round_trip(const std::string& encoding) {
    const std::filesystem::path& d = *dir_;
    const Child pub = run_child(
        {"publish", "--format", "csv", "goog20k.csv", "--brokers", brokers_, "--topic", "md", "--encoding", encoding}, d,
        "publish-" + encoding);
    ASSERT_EQ(pub.exit_code, 0) << slurp(pub.err);
    EXPECT_NE(slurp(pub.err).find("published 20000 events"), std::string::npos) << slurp(pub.err);

    const std::string kj = "kafka-" + encoding + ".jsonl", ks = "kafka-" + encoding + ".json";
    const Child run = run_child({"run",
                                 "--source",
                                 "kafka",
                                 "--brokers",
                                 brokers_,
                                 "--topic",
                                 "md",
                                 "--group",
                                 "rt-" + encoding,
                                 "--exit-at-eof",
                                 "--config",
                                 "kafka.toml",
                                 "--alerts-topic",
                                 "alerts-" + encoding,
                                 "--no-stdout",
                                 "--jsonl",
                                 kj,
                                 "--audit-db",
                                 "",
                                 "--summary-json",
                                 ks},
                                d, "run-" + encoding, 300);
    ASSERT_EQ(run.exit_code, 0) << slurp(run.err);
    const Child rep = run_child({"replay", "--format", "csv", "goog20k.csv", "--config", "rules.toml", "--no-stdout", "--jsonl",
                                 "replay-" + encoding + ".jsonl", "--audit-db", ""},
                                d, "replay-" + encoding);
    ASSERT_EQ(rep.exit_code, 0) << slurp(rep.err);

    const auto summary = nlohmann::json::parse(slurp(d / ks));
    EXPECT_EQ(summary.at("events").get<int64_t>(), kEvents);
    EXPECT_TRUE(summary.at("errors").empty()) << summary.at("errors").dump();
    const auto from_kafka = jsonl_alert_keys(d / kj);
    const auto from_replay = jsonl_alert_keys(d / ("replay-" + encoding + ".jsonl"));
    ASSERT_FALSE(from_replay.empty()) << "the input must raise alerts for this test to mean anything";
    EXPECT_EQ(from_kafka, from_replay);

    // Every alert also went to the alerts topic as JSON, keyed by its symbol.
    const auto published = read_topic(brokers_, "alerts-" + encoding);
    ASSERT_EQ(published.size(), from_kafka.size());
    std::multiset<std::string> topic_keys;
    for (const auto& m : published) {
      const auto a = nlohmann::json::parse(m.value);
      EXPECT_EQ(m.key, a.at("symbol").get<std::string>());
      topic_keys.insert(alert_key(a));
    }
    EXPECT_EQ(topic_keys, from_kafka);
  }

  static std::filesystem::path* dir_;
  std::unique_ptr<KafkaMockCluster> cluster_;
  std::string brokers_;
};
std::filesystem::path* KafkaRoundTrip::dir_ = nullptr;

TEST_F(KafkaRoundTrip, BinaryGivesTheSameAlertsAsReplay) { round_trip("binary"); }
TEST_F(KafkaRoundTrip, JsonGivesTheSameAlertsAsReplay) { round_trip("json"); }

}  // namespace
}  // namespace ts::testing
