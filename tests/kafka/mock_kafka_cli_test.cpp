// `ticksentry mock-kafka`: prints bootstrap.servers, serves the Kafka protocol (a producer
// delivers to it), and stops cleanly on SIGTERM.
#include <gtest/gtest.h>

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
