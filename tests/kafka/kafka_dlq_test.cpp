// The kafka source against librdkafka's mock cluster, in process: good messages in both
// encodings become events; every malformed one is counted by kind, copied to the dead-letter
// topic with its reason in headers, and shows in the metrics (messages, decode errors, DLQ, lag).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/clock.h"
#include "ingest/kafka_source.h"
#include "ingest/wire_binary.h"
#include "ingest/wire_json.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_producer.h"
#include "kafka_test_util.h"

namespace ts::testing {
namespace {

WireEvent trade(std::string_view symbol, uint64_t seq, Price price) {
  WireEvent w;
  w.event = Event::make(EventKind::kTrade);
  w.event.seq = seq;
  w.event.exch_ts_ns = 1'700'000'000'000'000'000 + int64_t(seq) * 1000;
  w.event.trade = TradeBody{price, 100, Side::kBuy, 0, 0};
  w.symbol = symbol;
  w.prev_close = 1000;
  return w;
}

// Consumes until the source is done (exit_at_eof) or 60 s pass.
std::vector<Event> drain(KafkaSource& src) {
  std::vector<Event> all, batch(256);
  const int64_t deadline = mono_ns() + 60'000'000'000;
  while (!src.done() && mono_ns() < deadline) {
    const size_t n = src.next_batch(batch);
    all.insert(all.end(), batch.begin(), batch.begin() + n);
  }
  return all;
}

TEST(KafkaSource, BadMessagesGoToTheDeadLetterTopicWithTheirReason) {
  auto cluster = KafkaMockCluster::start(3);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("md", 2).is_ok());

  auto producer = KafkaProducer::create({{"bootstrap.servers", brokers}});
  ASSERT_TRUE(producer.is_ok()) << producer.status().to_string();
  KafkaProducer& prod = *producer.value();
  for (uint64_t i = 1; i <= 40; ++i) {
    std::string v;
    const WireEvent w = trade(i % 2 ? "AAA" : "BBB", i, 1000 + Price(i));
    if (i % 4 < 2) {
      wire_json_append(w, v);
    } else {
      wire_binary_append(w, v);
    }
    ASSERT_TRUE(prod.produce("md", w.symbol, v).is_ok());
  }
  std::string bad_magic;
  wire_binary_append(trade("AAA", 99, 1000), bad_magic);
  bad_magic[0] = 'X';
  const std::vector<std::pair<std::string, InputError>> bad = {
      {"this is not json", InputError::kMalformedLine},
      {bad_magic, InputError::kBinaryGarbage},
      {R"({"v":1,"kind":"trade","symbol":"AAA","seq":1,"exch_ts_ns":5,"price":1,"qty":1,"venue":"X"})",
       InputError::kWrongColumnCount},
      {R"({"v":1,"kind":"trade","symbol":"AAA","seq":1,"exch_ts_ns":5,"price":-3,"qty":1})", InputError::kBadPrice},
      {"", InputError::kTruncatedFile},
  };
  for (const auto& [v, kind] : bad) ASSERT_TRUE(prod.produce("md", "AAA", v).is_ok());
  ASSERT_TRUE(prod.flush(10000).is_ok());
  ASSERT_EQ(prod.delivered(), 45u);

  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  Metrics metrics;
  KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = "md";
  o.group = "dlq-test";
  o.dlq_topic = "md-dlq";
  o.exit_at_eof = true;
  o.eof_idle_ms = 1000;
  auto src = KafkaSource::open(o, symbols, errors, &metrics);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const std::vector<Event> events = drain(*src.value());
  ASSERT_TRUE(src.value()->done()) << "did not reach the end of the topic in 60 s";

  ASSERT_EQ(events.size(), 40u);
  uint64_t seq_sum = 0;
  for (const Event& e : events) {
    EXPECT_EQ(e.kind, EventKind::kTrade);
    EXPECT_EQ(e.trade.price, 1000 + Price(e.seq));
    EXPECT_EQ(symbols.name(e.symbol), e.seq % 2 ? "AAA" : "BBB");
    seq_sum += e.seq;
  }
  EXPECT_EQ(seq_sum, 40u * 41u / 2);  // each good message exactly once
  EXPECT_EQ(symbols.ref(*symbols.find("AAA")).prev_close, 1000);
  for (const auto& [v, kind] : bad) EXPECT_GE(errors.count(kind), 1u) << input_error_name(kind);
  EXPECT_EQ(errors.total(), bad.size());

  const KafkaSourceStats st = src.value()->stats();
  EXPECT_EQ(st.messages, 45u);
  EXPECT_EQ(st.decoded, 40u);
  EXPECT_EQ(st.decode_errors, 5u);
  EXPECT_EQ(st.dlq, 5u);
  EXPECT_EQ(st.lag_messages, 0);
  src.value()->flush_metrics();
  const std::string m = metrics.serialize();
  EXPECT_NE(m.find("ticksentry_kafka_messages_total 45"), std::string::npos) << m;
  EXPECT_NE(m.find("ticksentry_kafka_decode_errors_total 5"), std::string::npos) << m;
  EXPECT_NE(m.find("ticksentry_kafka_dlq_total 5"), std::string::npos) << m;
  EXPECT_NE(m.find("ticksentry_kafka_lag_messages 0"), std::string::npos) << m;

  // The dead-letter topic holds each bad message unchanged, with why and where it came from.
  src.value().reset();  // closes the consumer (and flushes the dead-letter producer)
  const auto dlq = read_topic(brokers, "md-dlq");
  ASSERT_EQ(dlq.size(), bad.size());
  std::multiset<std::string> values, expected;
  for (const auto& [v, kind] : bad) expected.insert(v);
  for (const auto& d : dlq) {
    values.insert(d.value);
    EXPECT_EQ(d.key, "AAA");
    EXPECT_FALSE(d.headers.at("ticksentry.error.reason").empty());
    EXPECT_FALSE(d.headers.at("ticksentry.error.kind").empty());
    EXPECT_EQ(d.headers.at("ticksentry.source.topic"), "md");
    EXPECT_FALSE(d.headers.at("ticksentry.source.offset").empty());
  }
  EXPECT_EQ(values, expected);
}

}  // namespace
}  // namespace ts::testing
