#pragma once
// A loopback websocket + HTTP server built with Boost.Beast that replays a real venue capture
// (../shared/data/crypto) over real WebSocket framing, for the websocket source's tests.
#include <utility>  // before Boost 1.74 asio/awaitable.hpp (uses std::exchange without it)

#include <fcntl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ts::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace ssl = net::ssl;
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

struct CaptureServerOptions {
  // The first connection gets frames [0, drop_after) and then a plain TCP shutdown (no close
  // frame: a dropped link); 0 = no drop.
  size_t drop_after = 0;
  // The first connection gets frames [0, close_after) and then a close frame (a server that
  // goes away properly); later connections are accepted as usual. 0 = none.
  size_t close_after = 0;
  // After the last frame: a close frame, and no further connection is accepted.
  bool close_at_end = false;
  // TLS (wss://, https://) with this certificate chain and key (PEM); "" = plain TCP.
  std::string cert_file, key_file;
};

// Replays `frames` to each websocket client in turn (each connection resumes where the last one
// stopped), and serves `rest` over HTTP(S) on a second port.
class CaptureServer {
 public:
  CaptureServer(const Capture& c, size_t drop_after, bool close_at_end = false)
      : CaptureServer(c, CaptureServerOptions{.drop_after = drop_after, .close_at_end = close_at_end}) {}
  CaptureServer(const Capture& c, CaptureServerOptions o) : c_(c), o_(std::move(o)) {
    if (!o_.cert_file.empty()) {
      tls_ = std::make_unique<ssl::context>(ssl::context::tls_server);
      tls_->use_certificate_chain_file(o_.cert_file);
      tls_->use_private_key_file(o_.key_file, ssl::context::pem);
    }
    ws_acc_.open(tcp::v4());
    ws_acc_.bind({net::ip::make_address("127.0.0.1"), 0});
    ws_acc_.listen();
    http_acc_.open(tcp::v4());
    http_acc_.bind({net::ip::make_address("127.0.0.1"), 0});
    http_acc_.listen();
    // Not inherited by a ticksentry child the test forks (run_bin): Asio does not set
    // close-on-exec, and a child holding the listening socket keeps it listening after the
    // server closed it, so the client's reconnects sat in its backlog until the 5 s handshake
    // timeout instead of being refused.
    ::fcntl(ws_acc_.native_handle(), F_SETFD, FD_CLOEXEC);
    ::fcntl(http_acc_.native_handle(), F_SETFD, FD_CLOEXEC);
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
  std::vector<std::chrono::steady_clock::time_point> accepted_at() const {
    std::lock_guard<std::mutex> lock(mu_);
    return accepted_at_;
  }
  // When the server sent its close frame (close_after), once it has.
  std::chrono::steady_clock::time_point close_sent_at() const {
    std::lock_guard<std::mutex> lock(mu_);
    return close_sent_at_;
  }
  std::atomic<int> rest_requests{0};
  std::atomic<int> tls_handshake_failures{0};

 private:
  enum class After { kNext, kStop };

  void serve_ws() {
    serve_ws_loop();
    if (o_.close_at_end) {
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
      ::fcntl(sock.native_handle(), F_SETFD, FD_CLOEXEC);
      size_t n_accepted;
      {
        std::lock_guard<std::mutex> lock(mu_);
        accepted_at_.push_back(std::chrono::steady_clock::now());
        n_accepted = accepted_at_.size();
      }
      try {
        After after;
        if (tls_) {
          websocket::stream<ssl::stream<tcp::socket>> ws(std::move(sock), *tls_);
          try {
            ws.next_layer().handshake(ssl::stream_base::server);
          } catch (const std::exception&) {
            ++tls_handshake_failures;
            continue;
          }
          after = serve_one(ws, next, n_accepted);
        } else {
          websocket::stream<tcp::socket> ws(std::move(sock));
          after = serve_one(ws, next, n_accepted);
        }
        if (after == After::kStop) break;
      } catch (const std::exception&) {
        if (last_connection_) break;  // a close handshake that ended in an error ends it too
      }
    }
  }
  template <class Ws>
  After serve_one(Ws& ws, size_t& next, size_t n_accepted) {
    ws.accept();
    ws.text(true);
    const bool drop = n_accepted == 1 && o_.drop_after > 0;
    const bool close = n_accepted == 1 && o_.close_after > 0;
    const size_t limit = drop ? o_.drop_after : close ? o_.close_after : c_.frames.size();
    for (; next < limit; ++next) ws.write(net::buffer(c_.frames[next]));
    if (drop) {
      beast::get_lowest_layer(ws).shutdown(tcp::socket::shutdown_send);
      beast::get_lowest_layer(ws).close();
      return After::kNext;
    }
    if (close || o_.close_at_end) {
      last_connection_ = o_.close_at_end;
      {
        std::lock_guard<std::mutex> lock(mu_);
        close_sent_at_ = std::chrono::steady_clock::now();
      }
      ws.close(websocket::close_code::normal);
      return close ? After::kNext : After::kStop;
    }
    beast::flat_buffer b;
    for (;;) ws.read(b);  // keep the link until the client goes (pings are answered)
  }
  template <class Stream>
  void answer_http(Stream& s) {
    beast::flat_buffer b;
    http::request<http::string_body> req;
    http::read(s, b, req);
    ++rest_requests;
    http::response<http::string_body> resp;
    const auto it = c_.rest.find(std::string(req.target()));
    resp.result(it == c_.rest.end() ? http::status::not_found : http::status::ok);
    resp.body() = it == c_.rest.end() ? "{}" : it->second;
    resp.set(http::field::content_type, "application/json");
    resp.prepare_payload();
    http::write(s, resp);
  }
  void serve_http() {
    while (!stopping_) {
      tcp::socket sock(ioc_);
      beast::error_code ec;
      http_acc_.accept(sock, ec);
      if (stopping_ || ec) break;
      ::fcntl(sock.native_handle(), F_SETFD, FD_CLOEXEC);
      try {
        if (tls_) {
          ssl::stream<tcp::socket> s(std::move(sock), *tls_);
          s.handshake(ssl::stream_base::server);
          answer_http(s);
          s.next_layer().shutdown(tcp::socket::shutdown_both, ec);
        } else {
          answer_http(sock);
          sock.shutdown(tcp::socket::shutdown_both, ec);
        }
      } catch (const std::exception&) {
      }
    }
  }

  const Capture& c_;
  CaptureServerOptions o_;
  std::unique_ptr<ssl::context> tls_;
  net::io_context ioc_;
  tcp::acceptor ws_acc_{ioc_}, http_acc_{ioc_};
  uint16_t ws_port_ = 0, http_port_ = 0;
  std::thread ws_thread_, http_thread_;
  std::atomic<bool> stopping_{false};
  bool last_connection_ = false;  // server thread only
  mutable std::mutex mu_;
  std::vector<std::chrono::steady_clock::time_point> accepted_at_;
  std::chrono::steady_clock::time_point close_sent_at_{};
};

}  // namespace ts::testing
