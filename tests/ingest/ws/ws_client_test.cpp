// The websocket transport against a loopback server built with the same library (Boost.Beast):
// the server replays a real Binance capture (../shared/data/crypto/BINANCE.ws.1.0) over real
// WebSocket framing and serves the captured REST depth snapshots over HTTP. The client must hand
// on every captured message intact and in order, survive a dropped connection (reconnect after
// the backoff, REST snapshots again before the stream resumes) and give up after max_attempts.
#include <utility>  // before Boost 1.74 asio/awaitable.hpp (uses std::exchange without it)

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "ingest/ws/ws_client.h"
#include "test_data.h"

namespace ts {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

struct Capture {
  std::vector<std::string> frames;            // received messages, in capture order
  std::map<std::string, std::string> rest;    // REST target ("/api/v3/depth?symbol=…") → body
  std::vector<std::string> rest_targets;      // in capture order
};

// "<epoch>: <json>" lines are received frames; "<url> -> <epoch>: <body>" lines are REST bodies.
Capture read_capture(const std::filesystem::path& ws_file, const std::filesystem::path& http_file) {
  Capture c;
  std::ifstream ws(ws_file);
  for (std::string line; std::getline(ws, line);) {
    if (line.empty() || line[0] < '0' || line[0] > '9') continue;  // the "<url> <-> <epoch>" connect line
    const size_t colon = line.find(": ");
    if (colon != std::string::npos) c.frames.push_back(line.substr(colon + 2));
  }
  std::ifstream rest(http_file);
  for (std::string line; std::getline(rest, line);) {
    const size_t arrow = line.find(" -> ");
    const size_t colon = line.find(": ", arrow);
    if (arrow == std::string::npos || colon == std::string::npos) continue;
    const std::string url = line.substr(0, arrow);
    const std::string target = url.substr(url.find('/', url.find("://") + 3));
    c.rest[target] = line.substr(colon + 2);
    c.rest_targets.push_back(target);
  }
  return c;
}

// Replays `frames` to each websocket client in turn: the first connection gets frames
// [0, drop_after) and then a plain TCP shutdown (no close frame: a dropped link); later ones get
// the rest. Serves `rest` over HTTP on a second port.
class CaptureServer {
 public:
  CaptureServer(const Capture& c, size_t drop_after) : c_(c), drop_after_(drop_after) {
    ws_acc_.open(tcp::v4());
    ws_acc_.bind({net::ip::make_address("127.0.0.1"), 0});
    ws_acc_.listen();
    http_acc_.open(tcp::v4());
    http_acc_.bind({net::ip::make_address("127.0.0.1"), 0});
    http_acc_.listen();
    ws_thread_ = std::thread([this] { serve_ws(); });
    http_thread_ = std::thread([this] { serve_http(); });
  }
  ~CaptureServer() {
    stopping_ = true;
    for (auto* acc : {&ws_acc_, &http_acc_}) {  // wake the blocking accept()s
      tcp::socket s(ioc_);
      beast::error_code ec;
      s.connect(acc->local_endpoint(), ec);
    }
    ws_thread_.join();
    http_thread_.join();
  }
  uint16_t ws_port() const { return ws_acc_.local_endpoint().port(); }
  uint16_t http_port() const { return http_acc_.local_endpoint().port(); }
  std::vector<std::chrono::steady_clock::time_point> accepted_at;  // per websocket connection
  std::atomic<int> rest_requests{0};

 private:
  void serve_ws() {
    size_t next = 0;
    while (!stopping_) {
      tcp::socket sock(ioc_);
      beast::error_code ec;
      ws_acc_.accept(sock, ec);
      if (stopping_ || ec) break;
      accepted_at.push_back(std::chrono::steady_clock::now());
      try {
        websocket::stream<tcp::socket> ws(std::move(sock));
        ws.accept();
        ws.text(true);
        const bool drop = accepted_at.size() == 1 && drop_after_ > 0;
        const size_t limit = drop ? drop_after_ : c_.frames.size();
        for (; next < limit; ++next) ws.write(net::buffer(c_.frames[next]));
        if (drop) {
          ws.next_layer().shutdown(tcp::socket::shutdown_send);
          ws.next_layer().close();
          continue;
        }
        beast::flat_buffer b;
        for (;;) ws.read(b);  // keep the link until the client goes (pings are answered)
      } catch (const std::exception&) {
      }
    }
  }
  void serve_http() {
    while (!stopping_) {
      tcp::socket sock(ioc_);
      beast::error_code ec;
      http_acc_.accept(sock, ec);
      if (stopping_ || ec) break;
      try {
        beast::flat_buffer b;
        http::request<http::string_body> req;
        http::read(sock, b, req);
        ++rest_requests;
        http::response<http::string_body> resp;
        const auto it = c_.rest.find(std::string(req.target()));
        resp.result(it == c_.rest.end() ? http::status::not_found : http::status::ok);
        resp.body() = it == c_.rest.end() ? "{}" : it->second;
        resp.set(http::field::content_type, "application/json");
        resp.prepare_payload();
        http::write(sock, resp);
        sock.shutdown(tcp::socket::shutdown_both, ec);
      } catch (const std::exception&) {
      }
    }
  }

  const Capture& c_;
  size_t drop_after_;
  net::io_context ioc_;
  tcp::acceptor ws_acc_{ioc_}, http_acc_{ioc_};
  std::thread ws_thread_, http_thread_;
  std::atomic<bool> stopping_{false};
};

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
  ASSERT_EQ(server.accepted_at.size(), 2u);
  const auto last_of_first = got.at[n_rest + drop_after - 1];
  EXPECT_GE(server.accepted_at[1] - last_of_first, 150ms);
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
  o.url = "wss://stream.binance.com:9443/stream";
  auto tls = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_FALSE(tls.is_ok());
  EXPECT_NE(tls.status().message().find("wss://"), std::string::npos);
  o.url = "stream.binance.com/ws";
  EXPECT_FALSE(WsClient::open(o, [](const WsMessage&) {}).is_ok());
  o.url = "ws://127.0.0.1:9/ws";
  o.rest_snapshot_urls = {"https://api.binance.com/api/v3/depth?symbol=BTCUSDT"};
  auto rest = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_FALSE(rest.is_ok());
  EXPECT_NE(rest.status().message().find("REST snapshot URL"), std::string::npos);
}

}  // namespace
}  // namespace ts
