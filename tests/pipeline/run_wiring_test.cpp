// One wiring builds every run (app/run_wiring.h): the dashboard that `run` serves is there for
// `run --source kafka` too. Each case starts the real binary with --http on a free loopback port,
// asks /healthz, then stops it with SIGINT (a clean exit 0).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <string>

#include <unistd.h>

#include "dashboard_child.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

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
  Child c = spawn({"run", "--source", "kafka", "--brokers", cluster.value()->bootstraps(), "--topic", "md", "--http",
                   "127.0.0.1:0", "--no-stdout"},
                  dir, "run-kafka");
  expect_healthz_then_clean_stop(c);
}

// The production path end to end: events published to the topic are consumed by
// `run --source kafka`, and its dashboard's /metrics and admin API show them.
TEST(RunWiring, KafkaRunServesMetricsAndApiOverPublishedEvents) {
  const auto dir = scratch_dir("run_wiring_kafka_api-" + std::to_string(::getpid()));
  auto cluster = KafkaMockCluster::start(1);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  ASSERT_TRUE(cluster.value()->create_topic("md", 1).is_ok());
  const std::string brokers = cluster.value()->bootstraps();
  // A small stream that the mock cluster keeps whole (~5 MiB per partition): a run that starts
  // behind the topic's beginning counts lost_messages and exits 1.
  std::ofstream(dir / "sim.toml") << "[sim]\nevents_per_s = 1000.0\n";
  Child pub = run_child({"publish", "--format", "sim", "--config", "sim.toml", "--symbols", "5", "--sim-seconds", "20",
                         "--brokers", brokers, "--topic", "md"},
                        dir, "publish", 120);
  ASSERT_EQ(pub.exit_code, 0) << slurp(pub.err);
  const std::string token = "kafka-wiring-token";
  Child c = spawn({"run", "--source", "kafka", "--brokers", brokers, "--topic", "md", "--http", "127.0.0.1:0",
                   "--http-token", token, "--no-stdout"},
                  dir, "run-kafka-api");
  const int port = dashboard_port(c);
  ASSERT_GT(port, 0) << "no dashboard line; stderr:\n" << slurp(c.err);
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(10);
  client.set_read_timeout(10);
  client.set_bearer_token_auth(token.c_str());
  // /metrics counts the consumed events (published once a second by the source loop).
  std::string metrics;
  for (int i = 0; i < 100; ++i) {
    auto r = client.Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 200);
    metrics = r->body;
    const size_t at = metrics.find("\nticksentry_events_total ");
    if (at != std::string::npos && std::stod(metrics.substr(at + 25)) > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const size_t at = metrics.find("\nticksentry_events_total ");
  ASSERT_NE(at, std::string::npos) << metrics.substr(0, 2000);
  EXPECT_GT(std::stod(metrics.substr(at + 25)), 0.0) << "no consumed event on /metrics";
  // Feed staleness by source: the wall time of the last delivery is recent, the exchange time is
  // the simulator's session (2023-02-01).
  const std::string recv = "\nticksentry_feed_last_receive_time_seconds{source=\"kafka\"} ";
  const std::string exch = "\nticksentry_feed_last_exchange_time_seconds{source=\"kafka\"} ";
  ASSERT_NE(metrics.find(recv), std::string::npos) << metrics.substr(0, 3000);
  ASSERT_NE(metrics.find(exch), std::string::npos);
  const double now_s = double(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch()).count());
  EXPECT_NEAR(std::stod(metrics.substr(metrics.find(recv) + recv.size())), now_s, 120);
  EXPECT_NEAR(std::stod(metrics.substr(metrics.find(exch) + exch.size())), 1675213200.0, 86400);
  EXPECT_NE(metrics.find("\nticksentry_build_info{"), std::string::npos);
  EXPECT_NE(metrics.find("\nprocess_resident_memory_bytes "), std::string::npos);
  auto r = client.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = client.Get("/api/info");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const auto info = nlohmann::json::parse(r->body);
  EXPECT_TRUE(info["services"]["market"].get<bool>()) << r->body;
  EXPECT_TRUE(info["services"]["alerts"].get<bool>()) << r->body;
  r = client.Get("/api/symbols");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_GT(r->body.size(), 2u) << "no symbol on the Kafka run's dashboard: " << r->body;
  // Without the token: 401, the API is not open on the production path either.
  httplib::Client anon("127.0.0.1", port);
  r = anon.Get("/api/info");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  kill(c.pid, SIGINT);
  EXPECT_EQ(wait_child(c, 60), 0) << slurp(c.err);
}

// Issue 27: two processes must never share the dashboard's port; an explicit --http on a taken
// port is exit 2 naming it.
TEST(RunWiring, ASecondRunOnATakenPortExitsTwo) {
  const auto dir = scratch_dir("run_wiring_port-" + std::to_string(::getpid()));
  Child first = spawn({"run", "--symbols", "5", "--http", "127.0.0.1:0", "--no-stdout"}, dir, "first");
  const int port = dashboard_port(first);
  ASSERT_GT(port, 0) << slurp(first.err);
  Child second = run_child({"run", "--symbols", "5", "--http", "127.0.0.1:" + std::to_string(port), "--no-stdout",
                            "--duration", "5"},
                           dir, "second", 60);
  EXPECT_EQ(second.exit_code, 2) << slurp(second.err);
  EXPECT_NE(slurp(second.err).find("port " + std::to_string(port) + " is in use"), std::string::npos)
      << slurp(second.err);
  kill(first.pid, SIGINT);
  EXPECT_EQ(wait_child(first, 60), 0) << slurp(first.err);
}

// A model served from a file (--model) is described by /api/models (was 503 "no model
// registry"); promotions are refused with what to do instead.
TEST(RunWiring, ModelsApiDescribesAModelServedFromAFile) {
  const std::string model = std::string(TICKSENTRY_SOURCE_DIR) + "/models/default.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " missing";
  const auto dir = scratch_dir("run_wiring_file_model-" + std::to_string(::getpid()));
  const std::string token = "file-model-token";
  Child c = spawn({"run", "--symbols", "5", "--model", model, "--http", "127.0.0.1:0", "--http-token", token,
                   "--no-stdout", "--jsonl", "", "--audit-db", ""},
                  dir, "run-file-model");
  const int port = dashboard_port(c);
  ASSERT_GT(port, 0) << slurp(c.err);
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(10);
  client.set_read_timeout(30);
  client.set_bearer_token_auth(token.c_str());
  auto r = client.Get("/api/models");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto j = nlohmann::json::parse(r->body)["models"];
  ASSERT_EQ(j.size(), 1u) << r->body;
  EXPECT_EQ(j[0]["stage"], "prod");
  EXPECT_EQ(j[0]["version"], "file");
  EXPECT_EQ(j[0]["source"], model);
  EXPECT_GT(j[0]["metrics"]["threshold"].get<double>(), 0.0);
  EXPECT_GT(j[0]["created_ms"].get<int64_t>(), 0);
  r = client.Post("/api/models/" + j[0]["name"].get<std::string>() + "/promote", R"({"version":"2"})",
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409) << r->body;
  EXPECT_NE(r->body.find("[model] registry"), std::string::npos) << r->body;
  kill(c.pid, SIGINT);
  EXPECT_EQ(wait_child(c, 60), 0) << slurp(c.err);
}

TEST(RunWiring, SimulatorRunServesTheDashboardWithHttp) {
  const auto dir = scratch_dir("run_wiring_sim-" + std::to_string(::getpid()));
  Child c = spawn({"run", "--symbols", "5", "--http", "127.0.0.1:0", "--no-stdout"}, dir, "run-sim");
  expect_healthz_then_clean_stop(c);
}

}  // namespace
}  // namespace ts::testing
