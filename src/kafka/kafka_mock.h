#pragma once
// librdkafka's mock cluster (rdkafka_mock.h): a Kafka-protocol server on loopback with N
// brokers, topics, partitions and consumer groups, held in this process. Clients — in this
// process or another — connect through bootstraps() exactly as to a real cluster.
// Used by the tests, the benchmark and `ticksentry mock-kafka` (demos, manual use with kcat).
// The cluster lives as long as the object. Threading: the cluster runs on librdkafka's own
// threads; the methods may be called from any one thread.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace ts {

class KafkaMockCluster {
 public:
  // Starts `brokers` brokers (ids 1..brokers) on ephemeral loopback ports.
  static Result<std::unique_ptr<KafkaMockCluster>> start(int brokers);
  ~KafkaMockCluster();
  KafkaMockCluster(const KafkaMockCluster&) = delete;
  KafkaMockCluster& operator=(const KafkaMockCluster&) = delete;

  // "127.0.0.1:port,127.0.0.1:port,..." — the bootstrap.servers value for clients.
  std::string bootstraps() const;
  // Creates `topic` with `partitions` partitions (replication factor min(3, brokers)).
  // Topics not created here are auto-created on first use with 4 partitions.
  Status create_topic(const std::string& topic, int partitions);
  // Takes broker `id` (1-based) down / back up: its connections are closed and refused while down.
  Status broker_down(int id);
  Status broker_up(int id);
  int brokers() const { return brokers_; }

  // Retention: the mock keeps about 5 MiB of record batches per partition and drops the oldest
  // beyond that (hard-coded in librdkafka's rdkafka_mock.c; no API sets it). first_offset > 0
  // means offsets 0..first_offset-1 of that partition are gone.
  struct PartitionRange {
    std::string topic;
    int32_t partition = 0;
    int64_t first_offset = 0;  // low watermark
    int64_t next_offset = 0;   // high watermark
  };
  // Every partition of every topic, asked over the Kafka protocol (a client of this cluster).
  Result<std::vector<PartitionRange>> partition_ranges(int timeout_ms = 5000);

 private:
  KafkaMockCluster() = default;
  rd_kafka_s* rk_ = nullptr;  // the handle that owns the cluster
  rd_kafka_s* client_ = nullptr;  // a client of the cluster for partition_ranges(), made on first use
  rd_kafka_mock_cluster_s* cluster_ = nullptr;
  int brokers_ = 0;
};

}  // namespace ts
