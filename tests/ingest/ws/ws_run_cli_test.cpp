// `ticksentry run --source ws --venue binance --url ...` end to end against the loopback server
// replaying the real Binance capture: the live run must decode the same events as replaying the
// capture files (`replay --format binance-json`), with no input error, and stop once the server
// is gone (--ws-max-attempts). Over TLS (wss://, https://) with the test CA given by --ca-file
// the same; with another CA the run ends at once, exit 2, the cause said and counted.
#include <nlohmann/json.hpp>

#include <chrono>

#include <gtest/gtest.h>

#include "ingest/ws/capture_server.h"
#include "ingest/ws/test_certs.h"
#include "kafka/kafka_test_util.h"
#include "pipeline/dashboard_child.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::run_bin;
using ts::testing::scratch_dir;
using namespace std::chrono_literals;

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

struct LiveRun {
  ts::testing::Outcome result;
  nlohmann::json summary;
};

// `run --source ws` against `server`, its summary read back.
LiveRun run_live(const ts::testing::Capture& cap, const ts::testing::CaptureServer& server, bool tls,
                 const std::filesystem::path& dir, const std::string& name, std::vector<std::string> extra = {},
                 const std::string& max_attempts = "2") {
  const std::string ws = tls ? "wss" : "ws", http = tls ? "https" : "http";
  std::vector<std::string> args = {"run", "--source", "ws", "--venue", "binance", "--url",
                                   ws + "://127.0.0.1:" + std::to_string(server.ws_port()) +
                                       "/stream?streams=nknusdt@depth@100ms/blzeth@depth@100ms",
                                   "--ws-max-attempts", max_attempts, "--no-notify", "--no-stdout", "--http", "off",
                                   "--out-dir", (dir / name).string(), "--summary-json",
                                   (dir / (name + ".json")).string()};
  for (const auto& t : cap.rest_targets) {
    args.push_back("--rest-url");
    args.push_back(http + "://127.0.0.1:" + std::to_string(server.http_port()) + t);
  }
  args.insert(args.end(), extra.begin(), extra.end());
  LiveRun r{run_bin(args, dir), {}};
  r.summary = read_json(dir / (name + ".json"));
  return r;
}

class WsRunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = ts::testing::data_dir() / "crypto";
    TS_REQUIRE_DATA(data_ / "BINANCE.ws.1.0");
    TS_REQUIRE_DATA(data_ / "BINANCE.http.0.0");
    cap_ = ts::testing::read_capture(data_ / "BINANCE.ws.1.0", data_ / "BINANCE.http.0.0");
    dir_ = scratch_dir(std::string("ws-run-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    const auto file = run_bin({"replay", "--format", "binance-json", (data_ / "BINANCE.ws.1.0").string(),
                               (data_ / "BINANCE.http.0.0").string(), "--no-notify", "--no-stdout", "--out-dir",
                               (dir_ / "file").string(), "--summary-json", (dir_ / "file.json").string()},
                              dir_);
    ASSERT_EQ(file.exit_code, 0) << file.err;
    want_ = read_json(dir_ / "file.json");
    ASSERT_TRUE(want_.is_object());
  }
  // The live run decoded what the file replay decoded.
  void expect_same_as_file(const nlohmann::json& got) const {
    ASSERT_TRUE(got.is_object());
    EXPECT_GT(got["events"].get<uint64_t>(), 100u);
    EXPECT_EQ(got["events"], want_["events"]);
    EXPECT_EQ(got["events_by_kind"], want_["events_by_kind"]);
    EXPECT_EQ(got["errors"], want_["errors"]) << got["errors"].dump();
    EXPECT_EQ(got["alerts"], want_["alerts"]);
    // The decoder's counters, in both summaries: the same book procedure met the same messages.
    for (const char* k : {"messages", "snapshots", "sequence_gap", "stale_books", "bbo_checks", "bbo_mismatches"}) {
      EXPECT_EQ(got["feed"]["binance"][k], want_["feed"]["binance"][k]) << k;
    }
  }
  std::filesystem::path data_, dir_;
  ts::testing::Capture cap_;
  nlohmann::json want_;
};

TEST_F(WsRunCli, BinanceOverWebsocketDecodesAsTheCaptureReplays) {
  ts::testing::CaptureServer server(cap_, 0, /*close_at_end=*/true);
  const LiveRun live = run_live(cap_, server, false, dir_, "ws");
  ASSERT_EQ(live.result.exit_code, 0) << live.result.err;
  EXPECT_NE(live.result.err.find("ws: 1 connections, 265 messages, 4 snapshots"), std::string::npos) << live.result.err;
  expect_same_as_file(live.summary);
  EXPECT_EQ(live.summary["feed"]["ws"]["connections"], 1);
  EXPECT_EQ(live.summary["feed"]["ws"]["tls_failures"], 0);
}

TEST_F(WsRunCli, BinanceOverWssWithTheGivenCaDecodesAsTheCaptureReplays) {
  const auto certs = ts::testing::make_test_certs(dir_);
  if (!certs.error.empty()) GTEST_SKIP() << certs.error;
  ts::testing::CaptureServer server(
      cap_, ts::testing::CaptureServerOptions{
                .close_at_end = true, .cert_file = certs.server_cert.string(), .key_file = certs.server_key.string()});
  const LiveRun live = run_live(cap_, server, true, dir_, "wss", {"--ca-file", certs.ca.string()});
  ASSERT_EQ(live.result.exit_code, 0) << live.result.err;
  expect_same_as_file(live.summary);
  EXPECT_EQ(live.summary["feed"]["ws"]["connections"], 1);
  EXPECT_EQ(live.summary["feed"]["ws"]["tls_failures"], 0);
  EXPECT_EQ(server.rest_requests.load(), 4);
}

TEST_F(WsRunCli, AWrongCaEndsTheRunWithTheCauseAndExit2) {
  const auto certs = ts::testing::make_test_certs(dir_);
  if (!certs.error.empty()) GTEST_SKIP() << certs.error;
  ts::testing::CaptureServer server(
      cap_, ts::testing::CaptureServerOptions{.cert_file = certs.server_cert.string(),
                                              .key_file = certs.server_key.string()});
  const auto t0 = std::chrono::steady_clock::now();
  // No --ws-max-attempts limit: a certificate that does not verify must not be retried forever.
  const LiveRun live = run_live(cap_, server, true, dir_, "wrong-ca", {"--ca-file", certs.wrong_ca.string()}, "0");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  EXPECT_EQ(live.result.exit_code, 2) << live.result.err;
  EXPECT_NE(live.result.err.find("certificate verify failed: unable to get local issuer certificate"),
            std::string::npos)
      << live.result.err;
  ASSERT_TRUE(live.summary.is_object()) << live.result.err;
  EXPECT_EQ(live.summary["events"], 0);
  EXPECT_EQ(live.summary["feed"]["ws"]["tls_failures"], 1);
  EXPECT_EQ(live.summary["feed"]["ws"]["connections"], 0);
  EXPECT_EQ(server.tls_handshake_failures.load(), 1);
}

// GET `target` from the run's dashboard (Beast's synchronous HTTP client); "" on failure.
std::string http_get(int port, const std::string& target, const std::string& token) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  try {
    boost::asio::io_context ioc;
    beast::tcp_stream s(ioc);
    s.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)));
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + token);
    http::write(s, req);
    beast::flat_buffer b;
    http::response<http::string_body> resp;
    http::read(s, b, resp);
    return resp.result() == http::status::ok ? resp.body() : "";
  } catch (const std::exception&) {
    return "";
  }
}

// The decoder's counters are on /metrics while the feed runs, not only in the log at its end.
TEST_F(WsRunCli, FeedCountersAreOnMetricsWhileTheFeedRuns) {
  ts::testing::CaptureServer server(cap_, 0);  // keeps the link open after the capture's last frame
  const std::string token = "ws-metrics-token";
  std::vector<std::string> args = {"run", "--source", "ws", "--venue", "binance", "--url",
                                   "ws://127.0.0.1:" + std::to_string(server.ws_port()) + "/stream",
                                   "--no-notify", "--no-stdout", "--http", "127.0.0.1:0", "--http-token", token,
                                   "--out-dir", (dir_ / "metrics").string(), "--summary-json",
                                   (dir_ / "metrics.json").string()};
  for (const auto& t : cap_.rest_targets) {
    args.push_back("--rest-url");
    args.push_back("http://127.0.0.1:" + std::to_string(server.http_port()) + t);
  }
  ts::testing::Child c = ts::testing::spawn(args, dir_, "run-ws-metrics");
  const int port = ts::testing::dashboard_port(c);
  ASSERT_GT(port, 0) << ts::testing::slurp(c.err);
  const std::vector<std::string> want = {
      "\nticksentry_feed_messages_total{feed=\"binance\"} 269\n",  // 265 frames + 4 REST snapshots
      "\nticksentry_feed_snapshots_total{feed=\"binance\"} 4\n",
      "\nticksentry_feed_sequence_gap_total{feed=\"binance\"} 0\n",
      "\nticksentry_feed_checksum_mismatch_total{feed=\"binance\"} 0\n",
      "\nticksentry_feed_connections_total{feed=\"ws\"} 1\n",
      "\nticksentry_feed_tls_failures_total{feed=\"ws\"} 0\n"};
  std::string metrics;
  auto all_there = [&] {
    for (const auto& w : want) {
      if (metrics.find(w) == std::string::npos) return false;
    }
    return true;
  };
  for (int i = 0; i < 150 && !all_there(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    metrics = http_get(port, "/metrics", token);
  }
  for (const auto& w : want) EXPECT_NE(metrics.find(w), std::string::npos) << w << " not in\n" << metrics.substr(0, 6000);
  kill(c.pid, SIGINT);
  ASSERT_EQ(ts::testing::wait_child(c, 60), 0) << ts::testing::slurp(c.err);
  const auto summary = read_json(dir_ / "metrics.json");
  EXPECT_EQ(summary["feed"]["binance"]["messages"], 269);
  EXPECT_EQ(summary["feed"]["binance"]["events"], want_["feed"]["binance"]["events"]);
}

}  // namespace
}  // namespace ts
