// One wiring builds every run (app/run_wiring.h): the dashboard that `run` serves is there for
// `run --source kafka` too. Each case starts the real binary with --http on a free loopback port,
// asks /healthz, then stops it with SIGINT (a clean exit 0).
#include <gtest/gtest.h>
#include <httplib.h>

#include <regex>
#include <string>

#include <unistd.h>

#include "kafka/kafka_mock.h"
#include "kafka/kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

// Waits for the run's "dashboard: http://HOST:PORT/?token=..." line; the port, or 0.
int dashboard_port(const Child& c) {
  if (!wait_for_text(c.err, "dashboard: http://", 60)) return 0;
  std::smatch m;
  const std::string err = slurp(c.err);
  static const std::regex url(R"(dashboard: http://[^:/]+:([0-9]+)/)");
  return std::regex_search(err, m, url) ? std::stoi(m[1].str()) : 0;
}

// /healthz answers on `port` while the child runs; then SIGINT ends the run with exit 0.
void expect_healthz_then_clean_stop(Child& c) {
  const int port = dashboard_port(c);
  ASSERT_GT(port, 0) << "no dashboard line; stderr:\n" << slurp(c.err);
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(10);
  client.set_read_timeout(10);
  auto r = client.Get("/healthz");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("ok"), std::string::npos) << r->body;
  kill(c.pid, SIGINT);
  EXPECT_EQ(wait_child(c, 60), 0) << slurp(c.err);
}

TEST(RunWiring, KafkaRunServesTheDashboardWithHttp) {
  const auto dir = scratch_dir("run_wiring_kafka-" + std::to_string(::getpid()));
  auto cluster = KafkaMockCluster::start(1);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  ASSERT_TRUE(cluster.value()->create_topic("md", 1).is_ok());
  // An empty topic: the run waits for data until SIGINT, its dashboard up meanwhile.
  Child c = spawn({"run", "--source", "kafka", "--brokers", cluster.value()->bootstraps(), "--topic", "md",
                   "--http", "127.0.0.1:0", "--no-stdout"},
                  dir, "run-kafka");
  expect_healthz_then_clean_stop(c);
}

TEST(RunWiring, SimulatorRunServesTheDashboardWithHttp) {
  const auto dir = scratch_dir("run_wiring_sim-" + std::to_string(::getpid()));
  Child c = spawn({"run", "--symbols", "5", "--http", "127.0.0.1:0", "--no-stdout"}, dir, "run-sim");
  expect_healthz_then_clean_stop(c);
}

}  // namespace
}  // namespace ts::testing
