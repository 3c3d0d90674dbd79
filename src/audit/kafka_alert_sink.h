#pragma once
// Publishes alerts to a Kafka topic as JSON (the schema of audit/alert_json.h, one alert per
// message), keyed by symbol name so that one symbol's alerts stay in order on one partition.
// The alert id is deterministic (detect/alert.h), so a consumer dedupes re-sent alerts by id.
// write() queues the message in librdkafka (non-blocking unless its local queue is full);
// flush() waits until every queued alert is acknowledged by the brokers (up to 10 s) and
// reports delivery failures as an error. Threading: the dispatcher's sink thread.
#include <memory>
#include <string>

#include "detect/alert_sink.h"
#include "kafka/kafka_config.h"

namespace ts {

class KafkaProducer;

class KafkaAlertSink : public AlertSink {
 public:
  // `props` are librdkafka producer properties (bootstrap.servers at least).
  static Result<std::unique_ptr<KafkaAlertSink>> create(const KafkaProps& props, std::string topic);
  ~KafkaAlertSink() override;

  Status write(const Alert& a, const SymbolTable& symbols) override;
  Status flush() override;
  uint64_t delivered() const;

 private:
  KafkaAlertSink(std::unique_ptr<KafkaProducer> producer, std::string topic);
  std::unique_ptr<KafkaProducer> producer_;
  std::string topic_;
  std::string buf_;
  uint64_t errors_reported_ = 0;
};

}  // namespace ts
