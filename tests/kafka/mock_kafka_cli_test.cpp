// `ticksentry mock-kafka`: prints bootstrap.servers, serves the Kafka protocol (a producer
// delivers to it), and stops cleanly on SIGTERM.
#include <gtest/gtest.h>

#include <fstream>

#include "kafka/kafka_producer.h"
#include "kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

TEST(MockKafkaCli, PrintsBootstrapServersServesAndStopsOnSigterm) {
  const auto dir = scratch_dir("mock_kafka_cli");
  Child mock = spawn({"mock-kafka", "--brokers", "3", "--topic", "md", "--partitions", "6"}, dir, "mock");
  ASSERT_TRUE(wait_for_text(mock.out, "\n", 60)) << slurp(mock.err);
  const std::string out = slurp(mock.out);
  ASSERT_EQ(out.rfind("bootstrap.servers=", 0), 0u) << out;
  const std::string brokers(out.begin() + 18, out.begin() + std::ptrdiff_t(out.find('\n')));
  EXPECT_EQ(std::count(brokers.begin(), brokers.end(), ','), 2) << brokers;  // three brokers

  auto prod = KafkaProducer::create({{"bootstrap.servers", brokers}});
  ASSERT_TRUE(prod.is_ok()) << prod.status().to_string();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(prod.value()->produce("md", std::to_string(i), "v").is_ok());
  EXPECT_TRUE(prod.value()->flush(30000).is_ok());
  EXPECT_EQ(prod.value()->delivered(), 10u);
  const auto msgs = read_topic(brokers, "md");
  EXPECT_EQ(msgs.size(), 10u);
  std::set<int32_t> partitions;
  for (const auto& m : msgs) partitions.insert(m.partition);
  EXPECT_GT(partitions.size(), 1u) << "keys spread over the 6 partitions";
  prod.value().reset();

  kill(mock.pid, SIGTERM);
  EXPECT_EQ(wait_child(mock, 30), 0) << slurp(mock.err);
}

std::string mock_brokers(const Child& mock) {
  const std::string out = slurp(mock.out);
  if (out.rfind("bootstrap.servers=", 0) != 0 || out.find('\n') == std::string::npos) return "";
  return std::string(out.begin() + 18, out.begin() + std::ptrdiff_t(out.find('\n')));
}

// The README's sequence: start the mock, publish a LOBSTER day, then run --source kafka. The
// whole day must arrive (before: 34,672 of 192,368 events, the rest dropped by the mock's 5 MiB
// per partition, and exit 0).
TEST(MockKafkaCli, ReadmeSequenceProcessesTheWholeDay) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const auto dir = scratch_dir("mock_kafka_readme");
  Child mock = spawn({"mock-kafka", "--brokers", "3", "--topic", "md", "--partitions", "8"}, dir, "mock");
  ASSERT_TRUE(wait_for_text(mock.out, "\n", 60)) << slurp(mock.err);
  const std::string brokers = mock_brokers(mock);
  ASSERT_FALSE(brokers.empty()) << slurp(mock.out);
  const auto goog = lobster_file("GOOG", "message", 10).string();
  const Child pub = run_child({"publish", "--format", "lobster", goog, "--brokers", brokers, "--topic", "md"}, dir, "pub");
  ASSERT_EQ(pub.exit_code, 0) << slurp(pub.err);
  std::ofstream(dir / "k.toml") << "[kafka.consumer]\n\"session.timeout.ms\" = 6000\n";
  const Child run = run_child({"run", "--source", "kafka", "--brokers", brokers, "--topic", "md", "--group", "desk1",
                               "--exit-at-eof", "--config", "k.toml", "--no-stdout", "--jsonl", "", "--audit-db", "",
                               "--summary-json", "summary.json"},
                              dir, "run", 300);
  EXPECT_EQ(run.exit_code, 0) << slurp(run.err);
  const auto j = nlohmann::json::parse(slurp(dir / "summary.json"));
  EXPECT_EQ(j["events"].get<uint64_t>(), 192368u);
  EXPECT_FALSE(j["errors"].contains("lost_messages")) << j["errors"].dump();
  EXPECT_EQ(slurp(mock.err).find("dropped offsets"), std::string::npos) << slurp(mock.err);
  kill(mock.pid, SIGTERM);
  EXPECT_EQ(wait_child(mock, 30), 0) << slurp(mock.err);
}

// A day the mock cannot hold (uncompressed: ~150 bytes an event): the mock says which offsets it
// dropped, and the consumer counts them and fails with the numbers instead of exiting 0.
TEST(MockKafkaCli, ADayBeyondTheMocksRetentionIsALossNotSilence) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const auto dir = scratch_dir("mock_kafka_loss");
  Child mock = spawn({"mock-kafka", "--brokers", "1", "--topic", "md", "--partitions", "1"}, dir, "mock");
  ASSERT_TRUE(wait_for_text(mock.out, "\n", 60)) << slurp(mock.err);
  const std::string brokers = mock_brokers(mock);
  ASSERT_FALSE(brokers.empty()) << slurp(mock.out);
  std::ofstream(dir / "k.toml") << "[kafka.producer]\n\"compression.type\" = \"none\"\n"
                                   "[kafka.consumer]\n\"session.timeout.ms\" = 6000\n";
  const auto goog = lobster_file("GOOG", "message", 10).string();
  const Child pub = run_child({"publish", "--format", "lobster", goog, "--brokers", brokers, "--topic", "md",
                               "--config", "k.toml"},
                              dir, "pub");
  ASSERT_EQ(pub.exit_code, 0) << slurp(pub.err);
  const Child run = run_child({"run", "--source", "kafka", "--brokers", brokers, "--topic", "md", "--exit-at-eof",
                               "--config", "k.toml", "--no-stdout", "--jsonl", "", "--audit-db", "", "--summary-json",
                               "summary.json"},
                              dir, "run", 300);
  EXPECT_EQ(run.exit_code, 1) << slurp(run.err);
  const std::string err = slurp(run.err);
  EXPECT_NE(err.find("md[0]: offsets 0.."), std::string::npos) << err;
  EXPECT_NE(err.find("were lost"), std::string::npos) << err;
  const auto j = nlohmann::json::parse(slurp(dir / "summary.json"));
  const uint64_t lost = j["errors"].value("lost_messages", uint64_t(0));
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(j["events"].get<uint64_t>() + lost, 192368u) << "read + lost = the day";
  EXPECT_TRUE(wait_for_text(mock.err, "dropped offsets 0..", 10)) << slurp(mock.err);
  kill(mock.pid, SIGTERM);
  EXPECT_EQ(wait_child(mock, 30), 0) << slurp(mock.err);
}

// publish --symbol --from --to: one stock of a two-stock input, 10:50-11:00 New York time; the
// topic holds exactly the events `record` writes with the same selection.
TEST(MockKafkaCli, PublishSendsOnlyTheSymbolsAndTheWindowAsked) {
  const auto goog = ::ts::testing::lobster_file("GOOG", "message", 10), aapl = ::ts::testing::lobster_file("AAPL", "message", 1);
  TS_REQUIRE_DATA(goog);
  TS_REQUIRE_DATA(aapl);
  const auto dir = scratch_dir("publish_select");
  Child mock = spawn({"mock-kafka", "--brokers", "1", "--topic", "md", "--partitions", "2"}, dir, "mock");
  ASSERT_TRUE(wait_for_text(mock.out, "\n", 60)) << slurp(mock.err);
  const std::string brokers = mock_brokers(mock);
  ASSERT_FALSE(brokers.empty()) << slurp(mock.out);
  const std::vector<std::string> select = {"--symbol", "GO*", "--from", "10:50", "--to", "11:00"};
  std::vector<std::string> args = {"publish", "--format", "lobster", goog.string(), aapl.string(), "--brokers", brokers,
                                   "--topic", "md", "--encoding", "json"};
  args.insert(args.end(), select.begin(), select.end());
  const Child pub = run_child(args, dir, "pub");
  ASSERT_EQ(pub.exit_code, 0) << slurp(pub.err);
  EXPECT_NE(slurp(pub.err).find("--from/--to: GOOG 2012-06-21T10:50:00-04:00"), std::string::npos) << slurp(pub.err);
  args = {"record", "--format", "lobster", goog.string(), aapl.string(), "--out", "sel.csv"};
  args.insert(args.end(), select.begin(), select.end());
  const Child rec = run_child(args, dir, "rec");
  ASSERT_EQ(rec.exit_code, 0) << slurp(rec.err);
  size_t rows = 0;
  {
    std::ifstream csv(dir / "sel.csv");
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) ++rows;
  }
  const auto msgs = read_topic(brokers, "md");
  EXPECT_GT(rows, 1000u);
  EXPECT_EQ(msgs.size(), rows);
  const int64_t from = 1340290200LL * 1'000'000'000, to = 1340290800LL * 1'000'000'000;  // 10:50, 11:00 EDT
  for (const auto& m : msgs) {
    ASSERT_EQ(m.key, "GOOG");
    const int64_t t = nlohmann::json::parse(m.value).at("exch_ts_ns").get<int64_t>();
    ASSERT_TRUE(t >= from && t < to) << m.value;
  }
  kill(mock.pid, SIGTERM);
  EXPECT_EQ(wait_child(mock, 30), 0) << slurp(mock.err);
}

TEST(MockKafkaCli, PublishRefusesAnUnknownEncoding) {
  const auto dir = scratch_dir("publish_cli");
  const Child c = run_child({"publish", "--format", "sim", "--brokers", "127.0.0.1:1", "--topic", "t", "--encoding",
                             "avro"},
                            dir, "publish");
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(slurp(c.err).find("--encoding must be binary or json"), std::string::npos) << slurp(c.err);
}

}  // namespace
}  // namespace ts::testing
