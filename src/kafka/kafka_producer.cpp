#include "kafka/kafka_producer.h"

#include <librdkafka/rdkafka.h>

#include "core/clock.h"

namespace ts {

void KafkaProducer::on_delivery(rd_kafka_s* /*rk*/, const void* msg, void* opaque) {
  auto* self = static_cast<KafkaProducer*>(opaque);
  const auto* m = static_cast<const rd_kafka_message_t*>(msg);
  if (m->err) {
    self->delivery_errors_.fetch_add(1, std::memory_order_relaxed);
    self->last_error_code_.store(int(m->err), std::memory_order_relaxed);
  } else {
    self->delivered_.fetch_add(1, std::memory_order_relaxed);
  }
}

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::create(const KafkaProps& props) {
  KafkaProps all = {{"linger.ms", "1"}, {"enable.idempotence", "true"}};
  for (const auto& [k, v] : props) all[k] = v;
  auto conf = kafka_conf(all);
  if (!conf.is_ok()) return conf.status();
  std::unique_ptr<KafkaProducer> p(new KafkaProducer());
  rd_kafka_conf_set_opaque(conf.value(), p.get());
  rd_kafka_conf_set_dr_msg_cb(conf.value(), [](rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) {
    on_delivery(rk, m, opaque);
  });
  char err[512];
  p->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf.value(), err, sizeof err);
  if (!p->rk_) {
    rd_kafka_conf_destroy(conf.value());
    return Status(StatusCode::kInvalidArgument, std::string("kafka producer: ") + err);
  }
  return p;
}

KafkaProducer::~KafkaProducer() {
  if (rk_) {
    rd_kafka_flush(rk_, 5000);
    rd_kafka_destroy(rk_);
  }
}

Status KafkaProducer::produce(const std::string& topic, std::string_view key, std::span<const uint8_t> value,
                              std::span<const Header> headers, int block_ms) {
  rd_kafka_headers_t* hdrs = nullptr;
  const int64_t deadline_ns = mono_ns() + int64_t(block_ms) * 1'000'000;
  for (;;) {
    if (!headers.empty()) {
      hdrs = rd_kafka_headers_new(headers.size());
      for (const auto& [name, v] : headers) rd_kafka_header_add(hdrs, name, -1, v.data(), ssize_t(v.size()));
    }
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(const_cast<uint8_t*>(value.data()), value.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
    if (!err) return Status::ok();  // librdkafka owns hdrs now
    if (hdrs) rd_kafka_headers_destroy(hdrs);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return Status(StatusCode::kIoError, "kafka produce to " + topic + ": " + rd_kafka_err2str(err));
    }
    if (mono_ns() >= deadline_ns) {
      return Status(StatusCode::kOutOfRange, "kafka produce to " + topic + ": local queue full for " +
                                                 std::to_string(block_ms) + " ms");
    }
    rd_kafka_poll(rk_, 10);  // serve delivery reports: frees queue space
  }
}

void KafkaProducer::poll() const { rd_kafka_poll(rk_, 0); }

Status KafkaProducer::flush(int timeout_ms) {
  const rd_kafka_resp_err_t err = rd_kafka_flush(rk_, timeout_ms);
  if (err) {
    return Status(StatusCode::kIoError, "kafka flush: " + std::to_string(rd_kafka_outq_len(rk_)) +
                                            " messages not delivered after " + std::to_string(timeout_ms) +
                                            " ms: " + rd_kafka_err2str(err));
  }
  return Status::ok();
}

std::string KafkaProducer::last_delivery_error() const {
  return rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(last_error_code_.load()));
}

}  // namespace ts
