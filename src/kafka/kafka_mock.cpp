#include "kafka/kafka_mock.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>

namespace ts {

Result<std::unique_ptr<KafkaMockCluster>> KafkaMockCluster::start(int brokers) {
  if (brokers < 1) return Status(StatusCode::kInvalidArgument, "mock kafka: brokers must be >= 1");
  std::unique_ptr<KafkaMockCluster> m(new KafkaMockCluster());
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // A handle only to own the cluster: it never connects anywhere.
  if (rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status(StatusCode::kInternal, std::string("mock kafka: ") + err);
  }
  m->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!m->rk_) {
    rd_kafka_conf_destroy(conf);
    return Status(StatusCode::kInternal, std::string("mock kafka: ") + err);
  }
  m->cluster_ = rd_kafka_mock_cluster_new(m->rk_, brokers);
  if (!m->cluster_) return Status(StatusCode::kInternal, "mock kafka: rd_kafka_mock_cluster_new failed");
  m->brokers_ = brokers;
  return m;
}

KafkaMockCluster::~KafkaMockCluster() {
  if (cluster_) rd_kafka_mock_cluster_destroy(cluster_);
  if (rk_) rd_kafka_destroy(rk_);
}

std::string KafkaMockCluster::bootstraps() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }

Status KafkaMockCluster::create_topic(const std::string& topic, int partitions) {
  const rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, std::min(3, brokers_));
  if (err) return Status(StatusCode::kInvalidArgument, "mock kafka: create topic " + topic + ": " + rd_kafka_err2str(err));
  return Status::ok();
}

Status KafkaMockCluster::broker_down(int id) {
  if (rd_kafka_resp_err_t err = rd_kafka_mock_broker_set_down(cluster_, id)) {
    return Status(StatusCode::kInvalidArgument, "mock kafka: broker " + std::to_string(id) + " down: " + rd_kafka_err2str(err));
  }
  return Status::ok();
}

Status KafkaMockCluster::broker_up(int id) {
  if (rd_kafka_resp_err_t err = rd_kafka_mock_broker_set_up(cluster_, id)) {
    return Status(StatusCode::kInvalidArgument, "mock kafka: broker " + std::to_string(id) + " up: " + rd_kafka_err2str(err));
  }
  return Status::ok();
}

}  // namespace ts
