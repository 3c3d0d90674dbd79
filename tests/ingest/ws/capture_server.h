#pragma once
// A loopback websocket + HTTP server built with Boost.Beast that replays a real venue capture
// (../shared/data/crypto) over real WebSocket framing, for the websocket source's tests.
#include <utility>  // before Boost 1.74 asio/awaitable.hpp (uses std::exchange without it)

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace ts::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

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
  // close_at_end: after the last frame, a close frame, and no further connection is accepted.
  CaptureServer(const Capture& c, size_t drop_after, bool close_at_end = false)
      : c_(c), drop_after_(drop_after), close_at_end_(close_at_end) {
    ws_acc_.open(tcp::v4());
    ws_acc_.bind({net::ip::make_address("127.0.0.1"), 0});
    ws_acc_.listen();
    http_acc_.open(tcp::v4());
    http_acc_.bind({net::ip::make_address("127.0.0.1"), 0});
    http_acc_.listen();
    ws_port_ = ws_acc_.local_endpoint().port();
    http_port_ = http_acc_.local_endpoint().port();
    ws_thread_ = std::thread([this] { serve_ws(); });
    http_thread_ = std::thread([this] { serve_http(); });
  }
  ~CaptureServer() {
    stopping_ = true;
    for (uint16_t port : {ws_port_, http_port_}) {  // wake the blocking accept()s
      tcp::socket s(ioc_);
      beast::error_code ec;
      s.connect({net::ip::make_address("127.0.0.1"), port}, ec);
    }
    ws_thread_.join();
    http_thread_.join();
  }
  uint16_t ws_port() const { return ws_port_; }
  uint16_t http_port() const { return http_port_; }
  std::vector<std::chrono::steady_clock::time_point> accepted_at;  // per websocket connection
  std::atomic<int> rest_requests{0};

 private:
  void serve_ws() {
    serve_ws_loop();
    if (close_at_end_) {
      beast::error_code ec;
      ws_acc_.close(ec);  // nobody listens any more: the client's reconnects are refused
    }
  }
  void serve_ws_loop() {
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
        if (close_at_end_) {
          ws.close(websocket::close_code::normal);
          break;
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
  bool close_at_end_;
  net::io_context ioc_;
  tcp::acceptor ws_acc_{ioc_}, http_acc_{ioc_};
  uint16_t ws_port_ = 0, http_port_ = 0;
  std::thread ws_thread_, http_thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace ts::testing
