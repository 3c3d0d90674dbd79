#include "http/http_server.h"

#include <httplib.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "core/log.h"

#include "http/alert_history.h"
#include "http/alert_stream.h"
#include "http/conn_stream.h"
#include "http/connection_gate.h"
#include "http/http_auth.h"
#include "http/process_metrics.h"
#include "http/http_json.h"
#include "http/listen_socket.h"
#include "http/live_feed.h"

namespace ts::http {

// cpp-httplib's request processing for connections the ConnectionGate reads: process_request is
// the library's per-request entry (parse, route, write the response) without its accept loop or
// its thread-per-connection reads. svr_sock_ is what the library's streaming responses watch:
// while it is INVALID_SOCKET a content provider stops, so it holds the listener while serving.
class RequestRouter : public httplib::Server {
 public:
  bool serve(httplib::Stream& s, bool close_connection, bool& connection_closed) {
    return process_request(s, close_connection, connection_closed, nullptr);
  }
  void set_serving(bool on, int listen_fd) { svr_sock_ = on ? listen_fd : INVALID_SOCKET; }
};

namespace {
constexpr const char* kErrorKinds[] = {"unauthorized",      "csrf",          "bad_request",          "not_found",
                                       "conflict",          "internal",      "unavailable",          "stream_limit",
                                       "too_many_connections", "too_many_from_client", "timeout", "header_too_large",
                                       "body_too_large"};
constexpr uint64_t kKeepAliveMaxRequests = 10000;  // then the connection closes (a fresh one rebalances)

// What a browser without the token sees: a form that sends it as ?token=, which sets the cookie.
constexpr const char* kLoginPage = R"(<!doctype html><html><head><meta charset="utf-8"><title>ticksentry</title>
<style>body{font-family:sans-serif;background:#10141c;color:#dde;display:flex;justify-content:center;margin-top:15vh}
input,button{font-size:16px;padding:6px}</style></head><body><form method="get" action="/">
<h2>ticksentry</h2><p>Token / 令牌 (printed by <code>ticksentry run</code> at start-up):</p>
<input name="token" type="password" autofocus> <button>Open / 打开</button></form></body></html>)";

bool is_api_path(const std::string& p) { return p.rfind("/api/", 0) == 0 || p == "/metrics" || p == "/readyz"; }
}  // namespace

HttpServer::HttpServer(HttpOptions options, EventHub& hub, Metrics& metrics)
    : options_(std::move(options)), hub_(hub), metrics_(metrics), server_(std::make_unique<RequestRouter>()) {
  router_ = static_cast<RequestRouter*>(server_.get());
  const char* classes[] = {"2xx", "4xx", "5xx"};
  for (int i = 0; i < 3; ++i) {
    requests_[i] = &metrics_.counter("http_requests_total", "HTTP requests answered, by status class",
                                     {{"code", classes[i]}});
  }
  for (const char* kind : kErrorKinds) {
    errors_[kind] = &metrics_.counter("http_errors_total", "HTTP requests refused or failed, by kind", {{"kind", kind}});
  }
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::count_error(const char* kind) {
  auto it = errors_.find(kind);
  if (it != errors_.end()) it->second->Increment();
}

std::string HttpServer::url() const {
  return "http://" + (options_.bind == "0.0.0.0" ? std::string("127.0.0.1") : options_.bind) + ":" +
         std::to_string(port_);
}

namespace {
// Every connection is a descriptor: make room for max_connections (and the rest of the process).
int raise_open_file_limit(int wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return wanted;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rlim_t(wanted)) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? rlim_t(wanted) : std::min(rl.rlim_max, rlim_t(wanted));
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur == RLIM_INFINITY ? wanted : int(std::min<rlim_t>(rl.rlim_cur, rlim_t(wanted)));
}
}  // namespace

Status HttpServer::start() {
  if (options_.token.empty()) return {StatusCode::kInvalidArgument, "http: a token is required"};
  if (!options_.web_root.empty() && !std::filesystem::is_regular_file(std::filesystem::path(options_.web_root) / "index.html")) {
    return {StatusCode::kNotFound, "http: no dashboard at " + options_.web_root +
                                       " (index.html missing: build it with `npm ci && npm run build` in web/)"};
  }
  HttpLimits& limits = options_.limits;
  constexpr int kSpareFiles = 256;  // the audit store, the outbox, sources, logs
  const int files = raise_open_file_limit(limits.max_connections + kSpareFiles);
  if (files < limits.max_connections + kSpareFiles) {
    const int fit = std::max(16, files - kSpareFiles);
    spdlog::warn("http: the open-file limit is {}: at most {} connections instead of max_connections = {}", files,
                 fit, limits.max_connections);
    limits.max_connections = fit;
  }
  auto fd = listen_tcp(options_.bind, options_.port, limits.listen_backlog);
  if (!fd.is_ok()) return fd.status();
  const int listen_fd = fd.value();
  port_ = socket_port(listen_fd);
  server_->set_payload_max_length(size_t(limits.max_body_bytes));
  // Only for the "Keep-Alive: timeout=, max=" header the library writes: the gate enforces both.
  server_->set_keep_alive_timeout(std::max(1, limits.idle_timeout_ms / 1000));
  server_->set_keep_alive_max_count(kKeepAliveMaxRequests);
  add_routes();
  router_->set_serving(true, listen_fd);
  auto answer = [this](Connection& c) {
    ConnStream stream(c.fd, c.request, c.peer_ip, c.peer_port, options_.limits.write_timeout_ms);
    const bool last = c.requests + 1 >= kKeepAliveMaxRequests;
    bool closed = false;
    const bool ok = router_->serve(stream, last, closed);
    return ok && !closed && !last && !stream.write_failed();
  };
  auto refused = [this](GateRefusal why) {
    count_error(gate_refusal_name(why));
    requests_[why == GateRefusal::kTooManyConnections ? 2 : 1]->Increment();
  };
  // An SSE stream holds a worker for its lifetime: the streams get threads of their own.
  gate_ = std::make_unique<ConnectionGate>(limits, limits.workers + limits.max_streams, answer, refused);
  if (Status st = gate_->start(listen_fd); !st.is_ok()) {
    gate_.reset();
    return st;
  }
  return Status::ok();
}

void HttpServer::stop() {
  hub_.close();
  if (router_) router_->set_serving(false, -1);  // ends content providers (live streams)
  if (gate_) gate_->stop();
}

int HttpServer::open_connections() const { return gate_ ? gate_->open_connections() : 0; }

void HttpServer::add_routes() {
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/healthz") return httplib::Server::HandlerResponse::Unhandled;
    if (req.path == "/metrics" && !options_.metrics_token.empty() &&
        check_token(req, options_.metrics_token) == AuthResult::kOk) {
      return httplib::Server::HandlerResponse::Unhandled;  // the scrape-only token opens /metrics alone
    }
    const AuthResult auth = check_token(req, options_.token);
    if (auth == AuthResult::kOk) {
      // The login link (/?token=...): remember the token in a cookie and drop it from the URL.
      if (!is_api_path(req.path) && req.has_param("token")) {
        res.set_header("Set-Cookie", token_cookie(options_.token));
        res.set_redirect(login_redirect_target(req.path));
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    }
    count_error(auth == AuthResult::kCsrf ? "csrf" : "unauthorized");
    if (auth == AuthResult::kCsrf) {
      reply_error(res, 403, "csrf", "requests that change state need the header X-Requested-With: ticksentry");
    } else if (is_api_path(req.path)) {
      reply_error(res, 401, auth_result_name(auth), "this endpoint needs the token (Authorization: Bearer <token>)");
    } else {
      res.status = 401;
      res.set_content(kLoginPage, "text/html; charset=utf-8");
    }
    return httplib::Server::HandlerResponse::Handled;
  });
  s.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    requests_[res.status >= 500 ? 2 : res.status >= 400 ? 1 : 0]->Increment();
  });
  s.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    count_error("internal");
    reply_error(res, 500, "internal", what);
  });
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler already explained the error
    if (res.status == 404) {
      count_error("not_found");
      reply_error(res, 404, "not_found", "no such path: " + req.path);
    } else if (res.status >= 400 && res.status < 500) {
      count_error("bad_request");
      reply_error(res, res.status, "bad_request", "malformed or unsupported request");
    }
  });

  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { reply_json(res, "{\"status\":\"ok\"}"); });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (ready_.load(std::memory_order_relaxed)) return reply_json(res, "{\"ready\":true}");
    reply_json(res, "{\"ready\":false,\"reason\":\"the pipeline is not running\"}", 503);
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.serialize() + build_info_text() + process_metrics_text(), "text/plain; version=0.0.4");
  });
  s.Get("/api/info", [this](const httplib::Request&, httplib::Response& res) {
    reply_json(res, nlohmann::json{{"name", "ticksentry"},
                                   {"services", {{"alerts", stream_ != nullptr}, {"audit", history_ != nullptr},
                                                 {"market", live_ != nullptr}, {"models", models_ != nullptr},
                                                 {"silences", silences_ != nullptr}}}}.dump());
  });
  auto unavailable = [this](httplib::Response& res, const char* what) {
    count_error("unavailable");
    reply_error(res, 503, "not_configured", std::string(what) + " is not configured in this process");
  };
  s.Get("/api/alerts/recent", [this, unavailable](const httplib::Request&, httplib::Response& res) {
    if (!stream_) return unavailable(res, "the alert stream");
    reply_json(res, stream_->recent_json());
  });
  // One alert with its book and model window (alert_history.h); after /api/alerts/recent.
  s.Get(R"(/api/alerts/([^/]+))", [this, unavailable](const httplib::Request& req, httplib::Response& res) {
    if (!history_) return unavailable(res, "the audit store");
    if (!history_->handle_alert(req.matches[1], res)) count_error(res.status == 404 ? "not_found" : "bad_request");
  });
  s.Get("/api/alerts", [this, unavailable](const httplib::Request& req, httplib::Response& res) {
    if (!history_) return unavailable(res, "the audit store");
    if (!history_->handle(req, res)) count_error("bad_request");
  });
  s.Get("/api/stats", [this, unavailable](const httplib::Request&, httplib::Response& res) {
    if (!live_) return unavailable(res, "the live feed");
    reply_json(res, live_->stats_json());
  });
  s.Get("/api/symbols", [this, unavailable](const httplib::Request&, httplib::Response& res) {
    if (!live_) return unavailable(res, "the live feed");
    reply_json(res, live_->symbols_json());
  });
  // A symbol's price history in exchange time: ?from_ns=&to_ns= (both optional, inclusive).
  s.Get(R"(/api/symbols/([^/]+)/history)", [this, unavailable](const httplib::Request& req, httplib::Response& res) {
    if (!live_) return unavailable(res, "the live feed");
    int64_t range[2] = {INT64_MIN, INT64_MAX};
    const char* names[2] = {"from_ns", "to_ns"};
    for (int i = 0; i < 2; ++i) {
      if (!req.has_param(names[i])) continue;
      const std::string v = req.get_param_value(names[i]);
      char* end = nullptr;
      errno = 0;
      range[i] = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno == ERANGE) {
        count_error("bad_request");
        return reply_error(res, 400, "bad_parameter", std::string(names[i]) + " must be an integer (exchange-time ns), got '" + v + "'");
      }
    }
    std::string body = live_->history_json(req.matches[1], range[0], range[1]);
    if (body.empty()) {
      count_error("not_found");
      return reply_error(res, 404, "unknown_symbol", "no market data for symbol '" + std::string(req.matches[1]) + "'");
    }
    reply_json(res, body);
  });
  s.Get(R"(/api/symbols/([^/]+))", [this, unavailable](const httplib::Request& req, httplib::Response& res) {
    if (!live_) return unavailable(res, "the live feed");
    std::string body = live_->symbol_json(req.matches[1]);
    if (body.empty()) {
      count_error("not_found");
      return reply_error(res, 404, "unknown_symbol", "no market data for symbol '" + std::string(req.matches[1]) + "'");
    }
    reply_json(res, body);
  });
  add_stream_route();
  add_admin_routes();
  // Anything else under /api/ is a JSON 404 (not the dashboard's index.html).
  s.Get(R"(/api/.*)", [this](const httplib::Request& req, httplib::Response& res) {
    count_error("not_found");
    reply_error(res, 404, "not_found", "no such endpoint: " + req.path);
  });
  if (!options_.web_root.empty()) s.set_mount_point("/", options_.web_root);
}

void HttpServer::add_stream_route() {
  server_->Get("/api/stream", [this](const httplib::Request&, httplib::Response& res) {
    if (streams_.fetch_add(1) >= options_.limits.max_streams) {
      streams_.fetch_sub(1);
      count_error("stream_limit");
      return reply_error(res, 503, "too_many_streams",
                         "at most " + std::to_string(options_.limits.max_streams) + " live streams at a time");
    }
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Accel-Buffering", "no");
    auto cursor = std::make_shared<uint64_t>(hub_.head());
    auto first = std::make_shared<bool>(true);
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, cursor, first](size_t, httplib::DataSink& sink) {
          if (*first) {
            *first = false;
            const std::string hello = "retry: 2000\nevent: hello\ndata: {\"seq\":" + std::to_string(*cursor) + "}\n\n";
            return sink.write(hello.data(), hello.size());
          }
          std::vector<SseMessage> msgs;
          hub_.wait_next(cursor.get(), &msgs, 1000);
          if (hub_.closed()) return false;
          std::string out;
          for (const auto& m : msgs) out += EventHub::format(m);
          if (out.empty()) out = ": keep-alive\n\n";  // also notices a closed connection
          return sink.write(out.data(), out.size());
        },
        [this](bool) { streams_.fetch_sub(1); });
  });
}

}  // namespace ts::http
