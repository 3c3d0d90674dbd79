// The brokers go away for 10 s and come back: nothing produced before, during or after the
// outage is lost or delivered twice (the producer is idempotent and buffers; the consumer resumes
// from its position).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "core/clock.h"
#include "ingest/kafka_source.h"
#include "ingest/wire_binary.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_producer.h"

namespace ts {
namespace {

TEST(KafkaOutage, AllBrokersDownFor10SecondsLosesNothing) {
  auto cluster = KafkaMockCluster::start(3);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  KafkaMockCluster& mock = *cluster.value();
  ASSERT_TRUE(mock.create_topic("md", 4).is_ok());
  auto producer = KafkaProducer::create({{"bootstrap.servers", mock.bootstraps()},
                                          {"message.timeout.ms", "120000"},
                                          {"reconnect.backoff.max.ms", "1000"}});
  ASSERT_TRUE(producer.is_ok()) << producer.status().to_string();

  SymbolTable symbols;
  InputErrors errors;
  KafkaSourceOptions o;
  o.brokers = mock.bootstraps();
  o.topic = "md";
  o.group = "outage";
  o.props = {{"session.timeout.ms", "30000"}, {"reconnect.backoff.max.ms", "1000"}};
  auto src = KafkaSource::open(o, symbols, errors);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();

  constexpr uint64_t kPerPhase = 3000;
  std::atomic<bool> stop{false};
  std::multiset<uint64_t> seen;
  std::atomic<uint64_t> got{0};
  std::thread consumer([&] {
    std::vector<Event> batch(256);
    while (!stop.load()) {
      const size_t n = src.value()->next_batch(batch);
      for (size_t i = 0; i < n; ++i) seen.insert(batch[i].seq);
      got.fetch_add(n);
    }
  });
  const char* names[] = {"AAA", "BBB", "CCC", "DDD", "EEE", "FFF", "GGG", "HHH"};
  auto produce = [&](uint64_t from, uint64_t to) {
    for (uint64_t s = from; s < to; ++s) {
      WireEvent w;
      w.event = Event::make(EventKind::kTrade);
      w.event.seq = s;
      w.event.exch_ts_ns = 1'700'000'000'000'000'000 + int64_t(s);
      w.event.trade = TradeBody{1000, 100, Side::kBuy, 0, 0};
      w.symbol = names[s % 8];
      std::string v;
      wire_binary_append(w, v);
      ASSERT_TRUE(producer.value()->produce("md", w.symbol, v).is_ok());
    }
    producer.value()->poll();
  };
  produce(0, kPerPhase);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int b = 1; b <= 3; ++b) ASSERT_TRUE(mock.broker_down(b).is_ok());
  produce(kPerPhase, 2 * kPerPhase);  // buffered by the producer while no broker answers
  std::this_thread::sleep_for(std::chrono::seconds(10));
  for (int b = 1; b <= 3; ++b) ASSERT_TRUE(mock.broker_up(b).is_ok());
  produce(2 * kPerPhase, 3 * kPerPhase);
  EXPECT_TRUE(producer.value()->flush(120000).is_ok());
  EXPECT_EQ(producer.value()->delivery_errors(), 0u) << producer.value()->last_delivery_error();

  const int64_t deadline = mono_ns() + 120'000'000'000;
  while (mono_ns() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (got.load() >= 3 * kPerPhase) break;
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // anything extra would show up here
  stop = true;
  consumer.join();
  EXPECT_EQ(seen.size(), 3 * kPerPhase);
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 3 * kPerPhase) << "duplicates";
  EXPECT_EQ(*seen.begin(), 0u);
  EXPECT_EQ(*seen.rbegin(), 3 * kPerPhase - 1);
  EXPECT_EQ(errors.total(), 0u);
}

}  // namespace
}  // namespace ts
