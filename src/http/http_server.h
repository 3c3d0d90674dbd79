#pragma once
// HttpServer: ticksentry's one HTTP server; nothing here runs on a shard thread. Connections go
// through a ConnectionGate (connection_gate.h: one epoll thread reads every request whole, with
// connection limits, timeouts and body limits; a fixed pool of workers answers), and cpp-httplib
// (Debian's libcpp-httplib) parses each complete request, routes it and writes the response.
// It serves
//   /healthz                 200 while the process is up (the only path without a token)
//   /readyz                  200 once the pipeline runs, 503 before/after (set_ready)
//   /metrics                 Prometheus text format of the process's registry, ticksentry_build_info
//                            and process_* (process_metrics.h); the admin token or metrics_token
//   /api/stream              Server-Sent Events: "hello", "alert", "ticks", "scores", "stats"
//   /api/...                 the admin API (admin_routes.cpp, alert_history.h, live_feed.h)
//   /...                     the dashboard's static files (web/dist), index.html at /
// Every path but /healthz needs the token (http_auth.h). A browser without it gets a small
// page asking for it (401); /api/ and /metrics get a 401 JSON error. Bad input gets a 4xx JSON
// error ({"error", "message"}), a handler that throws a 500 JSON error; both are counted in
// ticksentry_http_errors_total{kind}; the server keeps running.
//
// Lifetime: construct, attach the services (each may be absent: its endpoints then answer
// 503 "not configured"), start(), ..., stop(). Attached services must outlive the server.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "core/metrics.h"
#include "core/status.h"
#include "http/admin_api.h"
#include "http/event_hub.h"
#include "http/http_limits.h"


namespace ts::http {

class AlertHistory;
class AlertStream;
class ConnectionGate;
class LiveFeed;
class RequestRouter;
}  // namespace ts::http

namespace httplib {
class Server;
}

namespace ts::http {

struct HttpOptions {
  std::string bind = "127.0.0.1";  // config [http] bind; "0.0.0.0" exposes it to the network
  int port = 8080;                 // 0 = any free port (tests); see port()
  std::string token;               // required; commands generate one when none is configured
  // A scrape-only token: it opens /metrics and nothing else, so Prometheus needs no admin
  // token ([http] metrics_token or $TICKSENTRY_METRICS_TOKEN; "" = /metrics needs `token`).
  std::string metrics_token;
  std::string web_root;            // the built dashboard (web/dist); "" = API only
  HttpLimits limits;               // connections, timeouts, sizes, threads ([http], http_limits.h)
};

class HttpServer {
 public:
  HttpServer(HttpOptions options, EventHub& hub, Metrics& metrics);
  ~HttpServer();  // stop()

  void set_alert_history(AlertHistory* h) { history_ = h; }
  void set_alert_stream(AlertStream* s) { stream_ = s; }
  void set_live_feed(LiveFeed* f) { live_ = f; }
  void set_models(ModelAdmin* m) { models_ = m; }
  void set_silences(SilenceAdmin* s) { silences_ = s; }

  // Binds (exclusively: a port another process listens on is an error naming it) and starts
  // serving on threads of its own. Errors (address in use, bad bind address, missing web_root)
  // come back as a Status; nothing is left running then. Raises the process's open-file limit
  // (RLIMIT_NOFILE) towards limits.max_connections when it is lower.
  Status start();
  // Stops accepting, ends every SSE stream, joins the threads. Idempotent.
  void stop();
  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:8080"

  void set_ready(bool ready) { ready_.store(ready, std::memory_order_relaxed); }
  int active_streams() const { return streams_.load(std::memory_order_relaxed); }
  int open_connections() const;

 private:
  void add_routes();
  void add_admin_routes();   // admin_routes.cpp: models, silences
  void add_stream_route();
  void count_error(const char* kind);

  HttpOptions options_;
  EventHub& hub_;
  Metrics& metrics_;
  std::unique_ptr<httplib::Server> server_;  // routes (admin_routes.cpp adds to it)
  RequestRouter* router_ = nullptr;          // the same object, as the gate's workers use it
  std::unique_ptr<ConnectionGate> gate_;
  int port_ = 0;
  std::atomic<bool> ready_{false};
  std::atomic<int> streams_{0};
  AlertHistory* history_ = nullptr;
  AlertStream* stream_ = nullptr;
  LiveFeed* live_ = nullptr;
  ModelAdmin* models_ = nullptr;
  SilenceAdmin* silences_ = nullptr;
  prometheus::Counter* requests_[3] = {};  // 2xx/3xx, 4xx, 5xx
  std::map<std::string, prometheus::Counter*> errors_;  // by kind; fixed after construction
};

}  // namespace ts::http
