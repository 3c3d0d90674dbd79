#pragma once
// Dashboard: everything the browser needs, wired together for `ticksentry run` / `replay`:
// the HTTP server, the SSE hub, the per-symbol MarketBoard, the AlertStream sink, the
// one-second LiveFeed, the alert history (audit store reader) and the silences.
//
// Config section [http] (every key has a default; flags override it):
//   enabled  = true for `run`, false for `replay` (the command passes its default)
//   bind     = "127.0.0.1"      only this machine; "0.0.0.0" to expose it
//   port     = 8080
//   token    = ""               "" = $TICKSENTRY_TOKEN, else a random one printed at start-up
//   web_root = ""               "" = $TICKSENTRY_WEB_ROOT, else the source tree's web/dist
//   max_connections, timeouts, body and head sizes, threads: http_limits.h (docs/config.md)
// Usage (src/app/commands.cpp): construct after the Pipeline (its Metrics), start(), hand
// board() to Pipeline::set_market_board, scores() to Pipeline::set_score_board and alert_sink() to Pipeline::add_sink, run
// the pipeline with set_ready(true), then stop() (or let the destructor do it).
#include <memory>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/metrics.h"
#include "core/symbol_table.h"
#include "http/admin_api.h"
#include "http/http_limits.h"

namespace ts::notify {
class SilenceStore;
}

namespace ts {
class MarketBoard;
class ScoreBoard;
}  // namespace ts

namespace ts::http {

class AlertHistory;
class AlertStream;
class EventHub;
class GpuTelemetry;
class HttpServer;
class LiveFeed;
class SilenceProxy;

struct DashboardOptions {
  bool enabled = false;
  std::string bind = "127.0.0.1";
  int port = 8080;
  std::string token;
  std::string metrics_token;  // [http] metrics_token / $TICKSENTRY_METRICS_TOKEN: opens /metrics only
  std::string web_root;
  HttpLimits limits;
  std::string audit_db;  // the run's audit store ("" = no alert history)
  // [sinks] audit_backend = "postgres": /api/alerts reads this database instead of audit_db
  std::string audit_postgres_dsn;
  // Reads [http] (numeric keys with their ranges: out of range is a ConfigError naming the
  // key); `enabled_default` is the command's default. Flags are applied by the caller.
  static DashboardOptions from_config(const ConfigSection& s, bool enabled_default);
  // "127.0.0.1:8080", ":8080", "8080" or "off"; false with `error` set when malformed.
  bool set_listen(const std::string& spec, std::string* error);
};

class Dashboard {
 public:
  Dashboard(DashboardOptions options, const SymbolTable& symbols, Metrics& metrics);
  ~Dashboard();

  // Starts the server and the live feed; errors (port in use, missing web_root that was asked
  // for) come back with the reason. A default web_root that is not built is only a warning:
  // the API and /metrics still run.
  Status start();
  void stop();
  void set_ready(bool ready);

  MarketBoard* board();
  // The serving model's probabilities and end-to-end latency: hand it to
  // Pipeline::set_score_board (symbol page's probability chart, serving panels).
  ScoreBoard* scores();
  std::shared_ptr<AlertStream> alert_sink();
  std::string url() const;  // with the login token: what to open in a browser
  const std::string& token() const { return options_.token; }
  int port() const;
  // Lets the model registry plug in (src/serve); before start().
  void set_models(ModelAdmin* models) { models_ = models; }
  // The run's silence store (src/notify; app/silence_config.h), the one the notifier consults,
  // so that silences made in the dashboard mute notifications; before start(). Without it the
  // dashboard keeps silences in memory (never in the audit database: its writes would wait
  // behind the audit sink's transactions).
  void set_silence_store(notify::SilenceStore* store) { silence_store_ = store; }

 private:
  DashboardOptions options_;
  const SymbolTable& symbols_;
  Metrics& metrics_;
  ModelAdmin* models_ = nullptr;
  notify::SilenceStore* silence_store_ = nullptr;
  std::unique_ptr<EventHub> hub_;
  std::unique_ptr<MarketBoard> board_;
  std::unique_ptr<ScoreBoard> scores_;
  std::unique_ptr<SilenceProxy> silences_;
  std::shared_ptr<AlertStream> stream_;
  std::unique_ptr<AlertHistory> history_;
  std::unique_ptr<GpuTelemetry> gpu_;
  std::unique_ptr<LiveFeed> live_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace ts::http
