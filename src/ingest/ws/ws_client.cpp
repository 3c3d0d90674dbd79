#include "ingest/ws/ws_client.h"

#include <utility>  // before Boost 1.74's asio/awaitable.hpp, which uses std::exchange without it

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "ingest/ws/tls_client.h"
#include "ingest/ws/ws_stream_limits.h"

namespace ts {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using net::awaitable;
using net::use_awaitable;

bool parse_url(std::string_view url, ParsedUrl& out) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return false;
  out.scheme = std::string(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  const size_t colon = authority.rfind(':');
  const bool tls = out.scheme == "wss" || out.scheme == "https";
  if (colon == std::string_view::npos) {
    out.host = std::string(authority);
    out.port = tls ? "443" : "80";
  } else {
    out.host = std::string(authority.substr(0, colon));
    out.port = std::string(authority.substr(colon + 1));
  }
  return !out.host.empty() && !out.port.empty() && out.port.find_first_not_of("0123456789") == std::string::npos;
}

namespace {

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A TLS handshake failure, told apart from other errors so that a certificate that does not
// verify can end the client (retrying cannot fix it).
struct TlsError : std::runtime_error {
  TlsError(const std::string& what, bool is_certificate) : std::runtime_error(what), certificate(is_certificate) {}
  bool certificate;
};

using PlainWs = websocket::stream<beast::tcp_stream>;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using TlsWs = websocket::stream<TlsStream>;

}  // namespace

struct WsClient::Impl {
  WsClientOptions o;
  Callback on_message;
  ParsedUrl ws;
  std::vector<ParsedUrl> rest;
  std::shared_ptr<ssl::context> tls;  // wss or https anywhere: one context for all connections
  net::io_context ioc;
  std::thread thread;
  mutable std::mutex error_mu;
  std::string last_error;
  std::mt19937 rng{std::random_device{}()};
  bool delivered = false;  // the current connection handed on a stream message

  static bool is_tls(const ParsedUrl& u) { return u.scheme == "wss" || u.scheme == "https"; }

  void set_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(error_mu);
    last_error = e;
  }

  void deliver(WsClientStats& stats, WsMessage::Kind kind, std::string_view text, uint64_t connection,
               std::string_view url = {}) {
    WsMessage m{kind, text, wall_ns(), connection, url};
    (kind == WsMessage::Kind::kSnapshot ? stats.snapshots : stats.messages).fetch_add(1);
    stats.bytes.fetch_add(text.size());
    on_message(m);
  }

  // TCP connect under connect_timeout; errors name the endpoint.
  awaitable<void> connect(beast::tcp_stream& s, const ParsedUrl& at) {
    tcp::resolver resolver(co_await net::this_coro::executor);
    s.expires_after(o.connect_timeout);
    beast::error_code ec;
    const auto endpoints = co_await resolver.async_resolve(at.host, at.port, net::redirect_error(use_awaitable, ec));
    if (ec) throw std::runtime_error("resolve " + at.host + ": " + ec.message());
    co_await s.async_connect(endpoints, net::redirect_error(use_awaitable, ec));
    if (ec) throw std::runtime_error("connect " + at.host + ":" + at.port + ": " + ec.message());
  }

  // TLS handshake (SNI, certificate and host checked) on a connected stream.
  awaitable<void> handshake_tls(TlsStream& s, const ParsedUrl& at, WsClientStats& stats) {
    if (Status st = prepare_tls_client(s.native_handle(), at.host); !st.is_ok()) throw std::runtime_error(st.message());
    beast::get_lowest_layer(s).expires_after(o.connect_timeout);
    beast::error_code ec;
    co_await s.async_handshake(ssl::stream_base::client, net::redirect_error(use_awaitable, ec));
    if (ec) {
      stats.tls_failures.fetch_add(1);
      const TlsFailure f = describe_tls_failure(s.native_handle(), ec);
      throw TlsError("TLS handshake with " + at.host + ":" + at.port + ": " + f.text +
                         (f.certificate ? (o.ca_file.empty() ? " (trusted: the system CA store; --ca-file names another)"
                                                             : " (trusted: --ca-file " + o.ca_file + ")")
                                        : ""),
                     f.certificate);
    }
  }

  template <class Stream>
  awaitable<std::string> get_rest(Stream& s, const ParsedUrl& at, const std::string& url) {
    http::request<http::empty_body> req{http::verb::get, at.target, 11};
    req.set(http::field::host, at.host);
    req.set(http::field::user_agent, "ticksentry");
    co_await http::async_write(s, req, use_awaitable);
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kRestBodyMaxBytes);
    co_await http::async_read(s, buf, parser, use_awaitable);
    auto& resp = parser.get();
    if (resp.result() != http::status::ok) {
      throw std::runtime_error("REST snapshot " + url + ": HTTP " + std::to_string(resp.result_int()));
    }
    co_return std::move(resp.body());
  }

  awaitable<std::string> fetch_rest(const ParsedUrl& at, const std::string& url, WsClientStats& stats) {
    auto ex = co_await net::this_coro::executor;
    beast::error_code ignored;
    if (is_tls(at)) {
      TlsStream s(ex, *tls);
      co_await connect(beast::get_lowest_layer(s), at);
      co_await handshake_tls(s, at, stats);
      beast::get_lowest_layer(s).expires_after(o.connect_timeout);
      std::string body = co_await get_rest(s, at, url);
      // The whole body is read: no TLS close_notify exchange, the socket just closes.
      beast::get_lowest_layer(s).socket().close(ignored);
      co_return body;
    }
    beast::tcp_stream s(ex);
    co_await connect(s, at);
    s.expires_after(o.connect_timeout);
    std::string body = co_await get_rest(s, at, url);
    s.socket().shutdown(tcp::socket::shutdown_both, ignored);
    co_return body;
  }

  // One connection on an opened (TCP / TLS) stream: handshake, subscribe, REST snapshots, then
  // frames until the connection ends; returns only by exception (closed, error, timeout).
  template <class Ws>
  awaitable<void> stream(Ws& s, WsClientStats& stats) {
    beast::get_lowest_layer(s).expires_never();  // the websocket's own timeouts from here on
    websocket::stream_base::timeout timeouts;
    timeouts.handshake_timeout = o.connect_timeout;
    timeouts.idle_timeout = o.idle_timeout;
    timeouts.keep_alive_pings = true;
    s.set_option(timeouts);
    apply_ws_read_limits(s);
    co_await s.async_handshake(ws.host + ":" + ws.port, ws.target, use_awaitable);
    const uint64_t connection = stats.connections.fetch_add(1) + 1;
    for (const auto& sub : o.subscribe) co_await s.async_write(net::buffer(sub), use_awaitable);
    // The snapshot after the stream is open: diffs arriving meanwhile wait in the socket and are
    // read after it, so the decoder can line them up against lastUpdateId.
    for (size_t i = 0; i < rest.size(); ++i) {
      const std::string body = co_await fetch_rest(rest[i], o.rest_snapshot_urls[i], stats);
      deliver(stats, WsMessage::Kind::kSnapshot, body, connection, o.rest_snapshot_urls[i]);
    }
    beast::flat_buffer buf;
    for (;;) {
      buf.clear();
      co_await s.async_read(buf, use_awaitable);
      const auto data = buf.cdata();
      delivered = true;
      deliver(stats, WsMessage::Kind::kStream, std::string_view(static_cast<const char*>(data.data()), data.size()),
              connection);
    }
  }

  awaitable<void> session(WsClientStats& stats) {
    auto ex = co_await net::this_coro::executor;
    if (is_tls(ws)) {
      TlsWs s(ex, *tls);
      co_await connect(beast::get_lowest_layer(s), ws);
      co_await handshake_tls(s.next_layer(), ws, stats);
      co_await stream(s, stats);
    } else {
      PlainWs s(ex);
      co_await connect(beast::get_lowest_layer(s), ws);
      co_await stream(s, stats);
    }
  }

  std::chrono::milliseconds backoff(int failures) {
    double ms = double(o.initial_backoff.count());
    for (int i = 1; i < failures && ms < double(o.max_backoff.count()); ++i) ms *= 2;
    ms = std::min(ms, double(o.max_backoff.count()));
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    return std::chrono::milliseconds(static_cast<int64_t>(ms * jitter(rng)));
  }

  awaitable<void> run(WsClientStats& stats, std::atomic<bool>& finished, std::atomic<bool>& fatal) {
    auto ex = co_await net::this_coro::executor;
    int failures = 0;
    for (;;) {
      delivered = false;
      const uint64_t before = stats.connections.load();
      try {
        co_await session(stats);
      } catch (const TlsError& e) {
        set_error(e.what());
        if (e.certificate) {
          fatal.store(true);
          stats.failed_attempts.fetch_add(1);
          break;
        }
      } catch (const std::exception& e) {
        set_error(e.what());
      }
      if (stats.connections.load() != before) stats.disconnects.fetch_add(1);
      if (delivered) {
        failures = 0;
      } else {
        ++failures;
        stats.failed_attempts.fetch_add(1);
        if (o.max_attempts > 0 && failures >= o.max_attempts) break;
      }
      net::steady_timer timer(ex, backoff(std::max(failures, 1)));
      co_await timer.async_wait(use_awaitable);
    }
    finished.store(true);
  }
};

WsClient::WsClient(WsClientOptions options, Callback on_message) : impl_(std::make_unique<Impl>()) {
  impl_->o = std::move(options);
  impl_->on_message = std::move(on_message);
}

Result<std::unique_ptr<WsClient>> WsClient::open(WsClientOptions options, Callback on_message) {
  ParsedUrl ws;
  std::vector<ParsedUrl> rest;
  if (!parse_url(options.url, ws) || (ws.scheme != "ws" && ws.scheme != "wss")) {
    return Status(StatusCode::kInvalidArgument, "--url " + options.url + ": expected ws://host:port/path or wss://...");
  }
  bool any_tls = Impl::is_tls(ws);
  for (const auto& url : options.rest_snapshot_urls) {
    ParsedUrl r;
    if (!parse_url(url, r) || (r.scheme != "http" && r.scheme != "https")) {
      return Status(StatusCode::kInvalidArgument, "REST snapshot URL " + url + ": expected http(s)://host:port/path");
    }
    any_tls = any_tls || Impl::is_tls(r);
    rest.push_back(r);
  }
  if (options.initial_backoff.count() <= 0 || options.max_backoff < options.initial_backoff) {
    return Status(StatusCode::kInvalidArgument, "backoff: need 0 < initial <= max");
  }
  std::shared_ptr<ssl::context> tls;
  if (any_tls || !options.ca_file.empty()) {
    auto ctx = make_tls_client_context(options.ca_file);
    if (!ctx.is_ok()) return ctx.status();
    tls = std::move(ctx).value();
  }
  std::unique_ptr<WsClient> c(new WsClient(std::move(options), std::move(on_message)));
  c->impl_->ws = ws;
  c->impl_->rest = rest;
  c->impl_->tls = std::move(tls);
  return c;
}

WsClient::~WsClient() { stop(); }

void WsClient::start() {
  if (impl_->thread.joinable()) return;
  net::co_spawn(impl_->ioc, impl_->run(stats_, finished_, fatal_), net::detached);
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
}

void WsClient::stop() {
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  finished_.store(true);
}

std::string WsClient::last_error() const {
  std::lock_guard<std::mutex> lock(impl_->error_mu);
  return impl_->last_error;
}

}  // namespace ts
