#pragma once
// A librdkafka producer for ticksentry's topics (market data by `publish`, alerts, dead letters).
// Messages are keyed; librdkafka's default partitioner (consistent_random: CRC32 of the key)
// puts one key — one symbol — always on the same partition.
//
// produce() copies key and value into librdkafka's queue and returns at once; when the local
// queue is full it serves delivery reports and retries for up to `block_ms` (back-pressure, not
// an error), then returns kOutOfRange. Delivery failures (after librdkafka's own retries) are
// counted in delivery_errors() and the last one is kept in last_delivery_error().
// Threading: produce()/poll()/flush() from one thread; the counters may be read from any.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "kafka/kafka_config.h"

struct rd_kafka_s;

namespace ts {

class KafkaProducer {
 public:
  // `props` are librdkafka properties (bootstrap.servers at least). Defaults set here unless in
  // props: linger.ms=1, enable.idempotence=true (no duplicates from producer retries).
  static Result<std::unique_ptr<KafkaProducer>> create(const KafkaProps& props);
  ~KafkaProducer();
  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;

  using Header = std::pair<const char*, std::string_view>;
  Status produce(const std::string& topic, std::string_view key, std::span<const uint8_t> value,
                 std::span<const Header> headers = {}, int block_ms = 10000);
  Status produce(const std::string& topic, std::string_view key, std::string_view value,
                 std::span<const Header> headers = {}, int block_ms = 10000) {
    return produce(topic, key, {reinterpret_cast<const uint8_t*>(value.data()), value.size()}, headers, block_ms);
  }
  // Serves delivery reports (call now and then when producing a lot).
  void poll() const;
  // Waits until every queued message is delivered or failed, up to timeout_ms (an error when
  // messages are still queued then). Failed deliveries are counted in delivery_errors().
  Status flush(int timeout_ms);
  uint64_t delivered() const { return delivered_.load(std::memory_order_relaxed); }
  uint64_t delivery_errors() const { return delivery_errors_.load(std::memory_order_relaxed); }
  std::string last_delivery_error() const;

 private:
  KafkaProducer() = default;
  static void on_delivery(rd_kafka_s* rk, const void* msg, void* opaque);
  rd_kafka_s* rk_ = nullptr;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> delivery_errors_{0};
  std::atomic<int> last_error_code_{0};
};

}  // namespace ts
