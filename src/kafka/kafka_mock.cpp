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
  if (client_) rd_kafka_destroy(client_);
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

Result<std::vector<KafkaMockCluster::PartitionRange>> KafkaMockCluster::partition_ranges(int timeout_ms) {
  char err[512];
  if (!client_) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps().c_str(), err, sizeof err) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status(StatusCode::kInternal, std::string("mock kafka client: ") + err);
    }
    client_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!client_) {
      rd_kafka_conf_destroy(conf);
      return Status(StatusCode::kInternal, std::string("mock kafka client: ") + err);
    }
  }
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_resp_err_t e = rd_kafka_metadata(client_, 1, nullptr, &md, timeout_ms)) {
    return Status(StatusCode::kIoError, std::string("mock kafka metadata: ") + rd_kafka_err2str(e));
  }
  std::vector<PartitionRange> out;
  for (int t = 0; t < md->topic_cnt; ++t) {
    for (int p = 0; p < md->topics[t].partition_cnt; ++p) {
      PartitionRange r{md->topics[t].topic, md->topics[t].partitions[p].id, 0, 0};
      if (rd_kafka_query_watermark_offsets(client_, r.topic.c_str(), r.partition, &r.first_offset, &r.next_offset,
                                           timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        out.push_back(std::move(r));
      }
    }
  }
  rd_kafka_metadata_destroy(md);
  return out;
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
