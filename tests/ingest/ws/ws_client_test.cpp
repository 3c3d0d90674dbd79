// The websocket transport against a loopback server built with the same library (Boost.Beast):
// the server replays a real Binance capture (../shared/data/crypto/BINANCE.ws.1.0) over real
// WebSocket framing and serves the captured REST depth snapshots over HTTP. The client must hand
// on every captured message intact and in order, survive a dropped connection (reconnect after
// the backoff, REST snapshots again before the stream resumes) and give up after max_attempts.
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "ingest/ws/capture_server.h"
#include "ingest/ws/ws_client.h"
#include "test_data.h"

namespace ts {
namespace {

using namespace std::chrono_literals;
using ts::testing::Capture;
using ts::testing::CaptureServer;
using ts::testing::read_capture;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Received {
  std::mutex mu;
  std::vector<std::pair<WsMessage::Kind, std::string>> messages;
  std::vector<uint64_t> connection;
  std::vector<std::chrono::steady_clock::time_point> at;
  size_t stream_count() {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& m : messages) n += m.first == WsMessage::Kind::kStream;
    return n;
  }
};

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST(WsClient, ReplaysTheBinanceCaptureIntactInOrderAcrossADroppedConnection) {
  const auto dir = ts::testing::data_dir() / "crypto";
  TS_REQUIRE_DATA(dir / "BINANCE.ws.1.0");
  TS_REQUIRE_DATA(dir / "BINANCE.http.0.0");
  const Capture cap = read_capture(dir / "BINANCE.ws.1.0", dir / "BINANCE.http.0.0");
  ASSERT_EQ(cap.frames.size(), 265u);  // 267 lines: the connect line, 265 frames, an empty line
  ASSERT_EQ(cap.rest_targets.size(), 4u);  // one depth snapshot per symbol
  const size_t drop_after = 100;
  CaptureServer server(cap, drop_after);

  WsClientOptions o;
  o.url = "ws://127.0.0.1:" + std::to_string(server.ws_port()) +
          "/stream?streams=nknusdt@depth@100ms/blzeth@depth@100ms/lrcbtc@depth@100ms/runeeur@depth@100ms";
  for (const auto& t : cap.rest_targets) {
    o.rest_snapshot_urls.push_back("http://127.0.0.1:" + std::to_string(server.http_port()) + t);
  }
  o.initial_backoff = 200ms;
  Received got;
  auto client = WsClient::open(o, [&](const WsMessage& m) {
    std::lock_guard<std::mutex> lock(got.mu);
    got.messages.emplace_back(m.kind, std::string(m.text));
    got.connection.push_back(m.connection);
    got.at.push_back(std::chrono::steady_clock::now());
  });
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  client.value()->start();
  ASSERT_TRUE(wait_for([&] { return got.stream_count() >= cap.frames.size(); }, 20s))
      << got.stream_count() << " of " << cap.frames.size() << "; last error " << client.value()->last_error();
  client.value()->stop();

  std::lock_guard<std::mutex> lock(got.mu);
  // Two connections, each starting with the four REST snapshots, then its share of the stream.
  const size_t n_rest = cap.rest_targets.size();
  ASSERT_EQ(got.messages.size(), cap.frames.size() + 2 * n_rest);
  size_t frame = 0;
  for (size_t i = 0; i < got.messages.size(); ++i) {
    const bool first_conn = i < n_rest + drop_after;
    const size_t in_conn = first_conn ? i : i - (n_rest + drop_after);
    EXPECT_EQ(got.connection[i], first_conn ? 1u : 2u) << i;
    if (in_conn < n_rest) {
      ASSERT_EQ(got.messages[i].first, WsMessage::Kind::kSnapshot) << i;
      EXPECT_EQ(got.messages[i].second, cap.rest.at(cap.rest_targets[in_conn])) << i;
    } else {
      ASSERT_EQ(got.messages[i].first, WsMessage::Kind::kStream) << i;
      EXPECT_EQ(got.messages[i].second, cap.frames[frame]) << "frame " << frame;
      ++frame;
    }
  }
  EXPECT_EQ(frame, cap.frames.size());
  const auto& stats = client.value()->stats();
  EXPECT_EQ(stats.connections.load(), 2u);
  EXPECT_GE(stats.disconnects.load(), 1u);
  EXPECT_EQ(stats.snapshots.load(), 2 * n_rest);
  EXPECT_EQ(server.rest_requests.load(), static_cast<int>(2 * n_rest));
  // The reconnection waited for the backoff (200 ms ± 20 % jitter).
  const auto accepted = server.accepted_at();
  ASSERT_EQ(accepted.size(), 2u);
  const auto last_of_first = got.at[n_rest + drop_after - 1];
  EXPECT_GE(accepted[1] - last_of_first, 150ms);
}

TEST(WsClient, GivesUpAfterMaxAttemptsWithGrowingBackoff) {
  // A port nobody listens on: bind one, then close it.
  net::io_context ioc;
  tcp::acceptor acc(ioc, {net::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = acc.local_endpoint().port();
  acc.close();
  WsClientOptions o;
  o.url = "ws://127.0.0.1:" + std::to_string(port) + "/ws";
  o.initial_backoff = 50ms;
  o.max_attempts = 4;
  auto client = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_TRUE(client.is_ok());
  const auto t0 = std::chrono::steady_clock::now();
  client.value()->start();
  ASSERT_TRUE(wait_for([&] { return client.value()->finished(); }, 10s));
  const auto took = std::chrono::steady_clock::now() - t0;
  // Waits of 50, 100, 200 ms (±20 %) between the four attempts.
  EXPECT_GE(took, 280ms);
  EXPECT_EQ(client.value()->stats().failed_attempts.load(), 4u);
  EXPECT_EQ(client.value()->stats().connections.load(), 0u);
  EXPECT_NE(client.value()->last_error().find("refused"), std::string::npos) << client.value()->last_error();
}

TEST(WsClient, RefusesUrlsItCannotServe) {
  WsClientOptions o;
  o.url = "ftp://stream.binance.com:9443/stream";
  auto other = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("ftp://"), std::string::npos);
  o.url = "stream.binance.com/ws";
  EXPECT_FALSE(WsClient::open(o, [](const WsMessage&) {}).is_ok());
  o.url = "wss://stream.binance.com:9443/stream";
  EXPECT_TRUE(WsClient::open(o, [](const WsMessage&) {}).is_ok());  // TLS: against the system CA store
  o.rest_snapshot_urls = {"ftp://api.binance.com/api/v3/depth?symbol=BTCUSDT"};
  auto rest = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_FALSE(rest.is_ok());
  EXPECT_NE(rest.status().message().find("REST snapshot URL"), std::string::npos);
  o.rest_snapshot_urls = {"https://api.binance.com/api/v3/depth?symbol=BTCUSDT"};
  o.ca_file = "/nonexistent/ca.pem";
  auto ca = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_FALSE(ca.is_ok());
  EXPECT_NE(ca.status().message().find("--ca-file /nonexistent/ca.pem"), std::string::npos) << ca.status().message();
}

// A server that goes away properly (a close frame) is noticed at once: the client answers the
// close, and its next attempt comes after the backoff, not after a timeout.
TEST(WsClient, NoticesAServerCloseAndReconnectsWithin200ms) {
  const auto dir = ts::testing::data_dir() / "crypto";
  TS_REQUIRE_DATA(dir / "BINANCE.ws.1.0");
  TS_REQUIRE_DATA(dir / "BINANCE.http.0.0");
  const Capture cap = read_capture(dir / "BINANCE.ws.1.0", dir / "BINANCE.http.0.0");
  CaptureServer server(cap, ts::testing::CaptureServerOptions{.close_after = 50});
  WsClientOptions o;
  o.url = "ws://127.0.0.1:" + std::to_string(server.ws_port()) + "/stream";
  o.initial_backoff = 50ms;  // 40..60 ms with jitter
  Received got;
  auto client = WsClient::open(o, [&](const WsMessage& m) {
    std::lock_guard<std::mutex> lock(got.mu);
    got.messages.emplace_back(m.kind, std::string(m.text));
  });
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  client.value()->start();
  ASSERT_TRUE(wait_for([&] { return server.accepted_at().size() >= 2; }, 10s))
      << "no reconnection; last error " << client.value()->last_error();
  ASSERT_TRUE(wait_for([&] { return got.stream_count() >= cap.frames.size(); }, 10s)) << got.stream_count();
  client.value()->stop();
  const auto took = server.accepted_at()[1] - server.close_sent_at();
  EXPECT_LT(took, 200ms) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                         << " ms from the server's close frame to the next connection";
  EXPECT_GE(took, 30ms);  // the backoff was waited
  EXPECT_EQ(client.value()->stats().disconnects.load(), 1u);
  EXPECT_NE(client.value()->last_error().find("closed"), std::string::npos) << client.value()->last_error();
}

// The server sends its last frame and a close frame, then stops listening: the client notices
// the close at once, and its reconnects are refused until max_attempts end it, in about the
// backoff (100 + 200 ms ± 20 %), not a timeout.
TEST(WsClient, EndsSoonAfterTheServerClosedAndWentAway) {
  const auto dir = ts::testing::data_dir() / "crypto";
  TS_REQUIRE_DATA(dir / "BINANCE.ws.1.0");
  TS_REQUIRE_DATA(dir / "BINANCE.http.0.0");
  const Capture cap = read_capture(dir / "BINANCE.ws.1.0", dir / "BINANCE.http.0.0");
  CaptureServer server(cap, 0, /*close_at_end=*/true);
  WsClientOptions o;
  o.url = "ws://127.0.0.1:" + std::to_string(server.ws_port()) + "/stream";
  for (const auto& t : cap.rest_targets) {
    o.rest_snapshot_urls.push_back("http://127.0.0.1:" + std::to_string(server.http_port()) + t);
  }
  o.max_attempts = 2;
  std::atomic<size_t> frames{0};
  auto client = WsClient::open(o, [&](const WsMessage& m) { frames += m.kind == WsMessage::Kind::kStream; });
  ASSERT_TRUE(client.is_ok());
  client.value()->start();
  ASSERT_TRUE(wait_for([&] { return client.value()->finished(); }, 20s)) << client.value()->last_error();
  const auto ended = std::chrono::steady_clock::now();
  EXPECT_EQ(frames.load(), cap.frames.size());
  const auto took = ended - server.close_sent_at();
  EXPECT_LT(took, 1000ms) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                          << " ms from the server's close frame to the client's end; last error "
                          << client.value()->last_error();
  EXPECT_EQ(client.value()->stats().connections.load(), 1u);
  EXPECT_EQ(client.value()->stats().failed_attempts.load(), 2u);
}

}  // namespace
}  // namespace ts
