#include "audit/kafka_alert_sink.h"

#include "audit/alert_json.h"
#include "kafka/kafka_producer.h"

namespace ts {

Result<std::unique_ptr<KafkaAlertSink>> KafkaAlertSink::create(const KafkaProps& props, std::string topic) {
  if (topic.empty()) return Status(StatusCode::kInvalidArgument, "kafka alert sink: empty topic");
  auto p = KafkaProducer::create(props);
  if (!p.is_ok()) return p.status().with_context("kafka alert sink");
  return std::unique_ptr<KafkaAlertSink>(new KafkaAlertSink(std::move(p).value(), std::move(topic)));
}

KafkaAlertSink::KafkaAlertSink(std::unique_ptr<KafkaProducer> producer, std::string topic)
    : producer_(std::move(producer)), topic_(std::move(topic)) {}

KafkaAlertSink::~KafkaAlertSink() = default;

Status KafkaAlertSink::write(const Alert& a, const SymbolTable& symbols) {
  buf_ = alert_to_json(a, symbols).dump();
  return producer_->produce(topic_, symbols.name(a.symbol), buf_);
}

Status KafkaAlertSink::flush() {
  TS_RETURN_IF_ERROR(producer_->flush(10000));
  const uint64_t failed = producer_->delivery_errors();
  if (failed > errors_reported_) {
    const uint64_t n = failed - errors_reported_;
    errors_reported_ = failed;
    return Status(StatusCode::kIoError, "kafka alert sink: " + std::to_string(n) + " alerts failed delivery to " +
                                            topic_ + " (" + producer_->last_delivery_error() + ")");
  }
  return Status::ok();
}

uint64_t KafkaAlertSink::delivered() const { return producer_->delivered(); }

}  // namespace ts
