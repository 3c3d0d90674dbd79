// `run --source kafka --encoding binance-json`: a topic carrying Binance's own messages (the
// websocket frames unchanged, the REST depth snapshot keyed by its URL) gives the same events
// as replaying the capture files, through librdkafka's mock cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/clock.h"
#include "ingest/crypto/capture_line.h"
#include "ingest/crypto/crypto_source.h"
#include "ingest/kafka_source.h"
#include "ingest/line_reader.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_producer.h"
#include "test_data.h"

namespace ts::testing {
namespace {

struct Captured {
  int64_t recv_ns;
  std::string url;  // REST bodies only
  std::string json;
};

std::vector<Captured> read_capture(const std::vector<std::string>& paths) {
  std::vector<Captured> all;
  InputErrors errors;
  for (const auto& p : paths) {
    auto r = ingest::LineReader::open(p, errors);
    EXPECT_TRUE(r.is_ok());
    if (!r.is_ok()) continue;
    ingest::Line line;
    while (r.value()->next(line)) {
      const auto c = crypto::parse_capture_line(line.text);
      if (c.kind == crypto::CaptureKind::kMessage) all.push_back({c.recv_ns, "", std::string(c.json)});
      if (c.kind == crypto::CaptureKind::kRest) all.push_back({c.recv_ns, std::string(c.url), std::string(c.json)});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Captured& a, const Captured& b) { return a.recv_ns < b.recv_ns; });
  return all;
}

TEST(KafkaVenueEncoding, BinanceMessagesFromATopicMatchTheFileReplay) {
  const auto ws = data_dir() / "crypto" / "BINANCE.ws.1.0";
  const auto http = data_dir() / "crypto" / "BINANCE.http.0.0";
  TS_REQUIRE_DATA(ws);
  TS_REQUIRE_DATA(http);
  // The file replay: the reference.
  SymbolTable file_symbols;
  InputErrors file_errors;
  auto file = crypto::open_crypto_source({ws.string(), http.string()}, crypto::Venue::kBinance, file_symbols,
                                         file_errors);
  ASSERT_TRUE(file.is_ok());
  std::vector<Event> expected, batch(256);
  while (size_t n = file.value()->next_batch(batch)) expected.insert(expected.end(), batch.begin(), batch.begin() + n);
  ASSERT_GT(expected.size(), 100u);

  auto cluster = KafkaMockCluster::start(1);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  const std::string brokers = cluster.value()->bootstraps();
  ASSERT_TRUE(cluster.value()->create_topic("binance", 1).is_ok());
  auto producer = KafkaProducer::create({{"bootstrap.servers", brokers}});
  ASSERT_TRUE(producer.is_ok()) << producer.status().to_string();
  const auto messages = read_capture({ws.string(), http.string()});
  for (const auto& m : messages) {
    ASSERT_TRUE(producer.value()->produce("binance", m.url.empty() ? "binance" : m.url, m.json).is_ok());
  }
  ASSERT_TRUE(producer.value()->produce("binance", "binance", "{not json").is_ok());
  ASSERT_TRUE(producer.value()->flush(10000).is_ok());

  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = "binance";
  o.group = "venue-test";
  o.encoding = "binance-json";
  o.exit_at_eof = true;
  o.eof_idle_ms = 500;
  auto src = KafkaSource::open(o, symbols, errors);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  std::vector<Event> got;
  std::vector<Event> small(7);  // a small batch: events of one message span batches
  const int64_t deadline = mono_ns() + 60'000'000'000;
  while (!src.value()->done() && mono_ns() < deadline) {
    const size_t n = src.value()->next_batch(small);
    got.insert(got.end(), small.begin(), small.begin() + n);
  }
  ASSERT_TRUE(src.value()->done());
  EXPECT_EQ(errors.count(InputError::kMalformedLine), 1u);
  EXPECT_EQ(src.value()->stats().decode_errors, 1u);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].kind, expected[i].kind) << i;
    EXPECT_EQ(symbols.name(got[i].symbol), file_symbols.name(expected[i].symbol)) << i;
    if (got[i].kind == EventKind::kSnapshot) {
      EXPECT_EQ(got[i].snapshot.bids[0].price, expected[i].snapshot.bids[0].price) << i;
      EXPECT_EQ(got[i].snapshot.asks[0].qty, expected[i].snapshot.asks[0].qty) << i;
    } else {
      EXPECT_EQ(got[i].trade.price, expected[i].trade.price) << i;
    }
  }
  EXPECT_EQ(KafkaSource::open({.topic = "x", .encoding = "nasdaq-itch"}, symbols, errors).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ts::testing
