#pragma once
// WsClient: a venue's websocket market-data stream, kept alive (docs/formats.md, "Websocket
// source"). One thread of its own runs Boost.Beast (header-only, over Boost.Asio) on an
// io_context:
//   connect → websocket handshake → send the subscribe messages → fetch the REST snapshot
//   (if a URL is given) → read text frames until the connection ends,
// then again after a backoff (initial, doubled per failed attempt up to the maximum, with
// ±20 % jitter; reset once a connection delivered a message). Each frame is handed to the
// message callback unchanged, with its receive time; after every (re)connection the REST bodies
// (one per snapshot URL, in order) come first as kSnapshot messages, so a decoder resynchronises
// its books before the stream's next diff (Binance: drop diffs with u <= lastUpdateId, ...).
//
// URLs: ws://host[:port]/path and http://host[:port]/path (plain TCP); wss:// and https:// over
// TLS (Beast's ssl_stream over OpenSSL, ws/tls_client.h): the server's certificate is always
// verified, against `ca_file` when given, else the system CA store, with SNI and the host name
// (or IP address) checked. A certificate that does not verify ends the client at once (fatal():
// retrying cannot fix a wrong CA or a wrong host); other TLS failures are retried like any
// failed connect. Both are counted in tls_failures.
// A connection ends when the server closes it (close frame, answered at once, or TCP FIN), on an
// error, or when no frame and no pong arrived for idle_timeout; the next attempt starts after
// the backoff.
// Why Boost.Beast: Debian's libboost-dev (1.74, kept with Debian), header-only, the same asio
// the HTTP client needs for the REST snapshot, timeouts and pings built in; websocketpp (0.8.2,
// last release 2020) needs asio too and has no HTTP client.
//
// Threading: the callback runs on the client's thread; stop() (any thread) ends it, waiting
// for the thread. Counters are atomics, readable from any thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ts {

struct WsMessage {
  enum class Kind : uint8_t { kStream, kSnapshot };
  Kind kind = Kind::kStream;
  std::string_view text;     // valid during the callback only
  int64_t recv_ns = 0;       // wall clock (ns since the Unix epoch) at receipt
  uint64_t connection = 0;   // 1 for the first connection, +1 per reconnection
  std::string_view url;      // kSnapshot: the REST URL it came from (names the symbol)
};

struct WsClientOptions {
  std::string url;                         // ws://host:port/path
  std::vector<std::string> rest_snapshot_urls;  // http://host:port/path each (one per symbol)
  std::vector<std::string> subscribe;      // text frames sent after each handshake
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10'000};
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds idle_timeout{15'000};  // no frame and no pong for this long: reconnect
  std::string ca_file;                     // wss/https: PEM file of trusted CAs; "" = system store
  int max_attempts = 0;                    // consecutive failed attempts before giving up; 0 = never
};

struct WsClientStats {
  std::atomic<uint64_t> connections{0};    // successful handshakes
  std::atomic<uint64_t> disconnects{0};    // connections that ended (error, close, timeout)
  std::atomic<uint64_t> failed_attempts{0};
  std::atomic<uint64_t> messages{0};
  std::atomic<uint64_t> snapshots{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> tls_failures{0};   // TLS handshakes that failed (certificate or protocol)
};

class WsClient {
 public:
  using Callback = std::function<void(const WsMessage&)>;
  // Checks the URLs (kInvalidArgument naming the bad one) and reads ca_file (kInvalidArgument
  // naming it); start() begins connecting.
  static Result<std::unique_ptr<WsClient>> open(WsClientOptions options, Callback on_message);
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  void start();
  void stop();
  // True once the client gave up (max_attempts failed in a row), hit a fatal error or was stopped.
  bool finished() const { return finished_.load(); }
  // True when the client ended on an error retrying cannot fix (a certificate that does not
  // verify); last_error() says which.
  bool fatal() const { return fatal_.load(); }
  const WsClientStats& stats() const { return stats_; }
  // The last connection error, for logs ("connect 127.0.0.1:9: Connection refused").
  std::string last_error() const;

 private:
  struct Impl;
  WsClient(WsClientOptions options, Callback on_message);
  std::unique_ptr<Impl> impl_;
  WsClientStats stats_;
  std::atomic<bool> finished_{false};
  std::atomic<bool> fatal_{false};
};

// scheme://host[:port]/path → parts (port 443 for wss/https, else 80); false without a host.
struct ParsedUrl {
  std::string scheme, host, port, target;
};
bool parse_url(std::string_view url, ParsedUrl& out);

}  // namespace ts
