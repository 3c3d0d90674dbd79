// Messages a consumer never reads are counted, never silent: librdkafka's mock cluster keeps
// 5 MiB per partition, so a topic written past that has lost its first offsets — the situation of
// a consumer that starts behind the topic's retention, or whose committed offset was deleted.
#include <gtest/gtest.h>

#include <librdkafka/rdkafka.h>

#include <string>

#include "core/clock.h"
#include "ingest/kafka_source.h"
#include "ingest/wire_binary.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_producer.h"

namespace ts {
namespace {

// Writes `n` binary trades (one symbol) to md[0]; uncompressed, so that 100,000 overflow 5 MiB.
void produce(const std::string& brokers, uint64_t first_seq, uint64_t n) {
  auto producer = KafkaProducer::create({{"bootstrap.servers", brokers}, {"compression.type", "none"}});
  ASSERT_TRUE(producer.is_ok()) << producer.status().to_string();
  for (uint64_t i = first_seq; i < first_seq + n; ++i) {
    WireEvent w;
    w.event = Event::make(EventKind::kTrade);
    w.event.seq = i;
    w.event.exch_ts_ns = 1'700'000'000'000'000'000 + int64_t(i) * 1000;
    w.event.trade = TradeBody{1000, 100, Side::kBuy, 0, 0};
    w.symbol = "AAA";
    w.prev_close = 1000;
    std::string v;
    wire_binary_append(w, v);
    ASSERT_TRUE(producer.value()->produce("md", w.symbol, v).is_ok());
    if (i % 1000 == 0) producer.value()->poll();
  }
  ASSERT_TRUE(producer.value()->flush(30000).is_ok());
}

struct Consumed {
  KafkaSourceStats stats;
  bool loss_is_error = false;
  std::string metrics;
};

Consumed consume(const std::string& brokers, const std::string& group, KafkaProps props = {}) {
  SymbolTable symbols;
  InputErrors errors;
  Metrics metrics;
  KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = "md";
  o.group = group;
  o.exit_at_eof = true;
  o.eof_idle_ms = 500;
  o.props = std::move(props);
  // A restarted member of the group rejoins at once instead of after the default 45 s.
  o.props["session.timeout.ms"] = "6000";
  o.props["heartbeat.interval.ms"] = "500";
  auto src = KafkaSource::open(o, symbols, errors, &metrics);
  EXPECT_TRUE(src.is_ok()) << src.status().to_string();
  Consumed c;
  if (!src) return c;
  std::vector<Event> batch(1024);
  const int64_t deadline = mono_ns() + 60'000'000'000;
  while (!src.value()->done() && mono_ns() < deadline) (void)src.value()->next_batch(batch);
  EXPECT_TRUE(src.value()->done()) << "did not reach the end of the topic in 60 s";
  EXPECT_TRUE(src.value()->commit().is_ok());
  src.value()->flush_metrics();
  c.stats = src.value()->stats();
  c.loss_is_error = src.value()->loss_is_error();
  c.metrics = metrics.serialize();
  return c;
}

// The partition's first and next offsets, from the broker.
std::pair<int64_t, int64_t> watermarks(const std::string& brokers) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[256];
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  int64_t lo = -1, hi = -1;
  EXPECT_EQ(rd_kafka_query_watermark_offsets(rk, "md", 0, &lo, &hi, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
  return {lo, hi};
}

TEST(KafkaLoss, StartingBehindTheRetentionIsCountedAndAnError) {
  auto cluster = KafkaMockCluster::start(1);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("md", 1).is_ok());
  produce(brokers, 1, 100'000);
  const auto [lo, hi] = watermarks(brokers);
  ASSERT_EQ(hi, 100'000);
  ASSERT_GT(lo, 0) << "the mock kept everything: the test needs the first offsets gone";

  const Consumed c = consume(brokers, "fresh");
  EXPECT_EQ(c.stats.messages, uint64_t(hi - lo));
  EXPECT_EQ(c.stats.lost_messages, uint64_t(lo)) << "offsets 0..lo-1 were never read";
  EXPECT_TRUE(c.loss_is_error) << "auto.offset.reset at its default";
  EXPECT_NE(c.metrics.find("ticksentry_kafka_lost_messages_total " + std::to_string(lo)), std::string::npos)
      << c.metrics;

  // Said explicitly, the same start is still counted but accepted.
  const Consumed e = consume(brokers, "accepting", {{"auto.offset.reset", "earliest"}});
  EXPECT_EQ(e.stats.lost_messages, uint64_t(lo));
  EXPECT_FALSE(e.loss_is_error);
}

TEST(KafkaLoss, CommittedOffsetDeletedByRetentionIsCounted) {
  auto cluster = KafkaMockCluster::start(1);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("md", 1).is_ok());
  produce(brokers, 1, 10);
  const Consumed first = consume(brokers, "desk");
  EXPECT_EQ(first.stats.messages, 10u);
  EXPECT_EQ(first.stats.lost_messages, 0u);  // a clean start: nothing counted

  produce(brokers, 11, 100'000);  // the group's committed offset 10 is deleted meanwhile
  const auto [lo, hi] = watermarks(brokers);
  ASSERT_GT(lo, 10);
  const Consumed second = consume(brokers, "desk");
  EXPECT_EQ(second.stats.messages, uint64_t(hi - lo));
  EXPECT_EQ(second.stats.lost_messages, uint64_t(lo - 10));

  const Consumed third = consume(brokers, "desk");  // resumes at its commit: nothing new, nothing lost
  EXPECT_EQ(third.stats.messages, 0u);
  EXPECT_EQ(third.stats.lost_messages, 0u);
}

// A consumer that falls behind while the broker deletes what it has not read yet: its next fetch
// is out of range, librdkafka resets to the partition's start, and the jump is counted.
TEST(KafkaLoss, RetentionOvertakingARunningConsumerIsCounted) {
  auto cluster = KafkaMockCluster::start(1);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("md", 1).is_ok());
  produce(brokers, 1, 2000);

  SymbolTable symbols;
  InputErrors errors;
  KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = "md";
  o.group = "slow";
  o.exit_at_eof = true;
  o.eof_idle_ms = 500;
  // A tiny prefetch queue, so that the consumer is really behind: what it has not asked for is
  // still on the broker when the retention deletes it.
  o.props = {{"session.timeout.ms", "6000"},     {"heartbeat.interval.ms", "500"},
             {"queued.max.messages.kbytes", "1"}, {"fetch.max.bytes", "1024"},
             {"message.max.bytes", "1000"},       {"max.partition.fetch.bytes", "1024"},
             {"fetch.wait.max.ms", "10"}};
  auto src = KafkaSource::open(o, symbols, errors);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  std::vector<Event> batch(10);
  uint64_t read = 0;
  const int64_t deadline = mono_ns() + 60'000'000'000;
  while (read < 10 && mono_ns() < deadline) read += src.value()->next_batch(batch);
  ASSERT_GE(read, 10u);

  produce(brokers, 2001, 100'000);  // meanwhile the retention deletes the unread rest
  const auto [lo, hi] = watermarks(brokers);
  ASSERT_GT(lo, 2000);
  std::vector<Event> big(1024);
  const int64_t drain_deadline = mono_ns() + 180'000'000'000;  // a loaded machine is slow to catch up
  while (!src.value()->done() && mono_ns() < drain_deadline) (void)src.value()->next_batch(big);
  ASSERT_TRUE(src.value()->done());
  const KafkaSourceStats st = src.value()->stats();
  EXPECT_GT(st.lost_messages, 0u);
  EXPECT_EQ(st.messages + st.lost_messages, uint64_t(hi)) << "every offset either read or counted lost";
}

}  // namespace
}  // namespace ts
