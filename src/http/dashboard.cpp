#include "http/dashboard.h"

#include <cstdlib>
#include <filesystem>

#include "core/log.h"
#include "http/alert_history.h"
#include "http/alert_stream.h"
#include "http/event_hub.h"
#include "http/gpu_telemetry.h"
#include "http/http_auth.h"
#include "http/http_server.h"
#include "http/live_feed.h"
#include "http/memory_silences.h"
#include "http/store_silences.h"
#include "pipeline/market_board.h"
#include "pipeline/score_board.h"

namespace ts::http {

// The AlertStream is made with the dashboard, the silence source only at start(): this forwards.
class SilenceProxy : public SilenceAdmin {
 public:
  std::unique_ptr<SilenceAdmin> impl;
  Result<SilenceInfo> create(const SilenceSpec& s) override { return impl->create(s); }
  std::vector<SilenceInfo> list() override { return impl->list(); }
  Status expire(const std::string& id) override { return impl->expire(id); }
  std::optional<std::string> match(const Alert& a, const SymbolTable& symbols, int64_t now_ms) override {
    return impl ? impl->match(a, symbols, now_ms) : std::nullopt;
  }
};

namespace {
std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}
}  // namespace

DashboardOptions DashboardOptions::from_config(const ConfigSection& s, bool enabled_default) {
  DashboardOptions o;
  o.enabled = s.get("enabled", enabled_default);
  o.bind = s.get("bind", o.bind);
  o.port = s.get_in("port", o.port, 0, 65535);
  o.token = s.get("token", o.token);
  o.metrics_token = s.get("metrics_token", o.metrics_token);
  o.web_root = s.get("web_root", o.web_root);
  o.limits = http_limits_from_config(s);
  return o;
}

bool DashboardOptions::set_listen(const std::string& spec, std::string* error) {
  if (spec == "off" || spec.empty()) {
    enabled = false;
    return true;
  }
  const size_t colon = spec.rfind(':');
  const std::string host = colon == std::string::npos ? std::string() : spec.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? spec : spec.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || p < 0 || p > 65535) {
    *error = "--http expects HOST:PORT, :PORT, PORT or off, got '" + spec + "'";
    return false;
  }
  enabled = true;
  if (!host.empty()) bind = host;
  port = int(p);
  return true;
}

Dashboard::Dashboard(DashboardOptions options, const SymbolTable& symbols, Metrics& metrics)
    : options_(std::move(options)), symbols_(symbols), metrics_(metrics) {
  hub_ = std::make_unique<EventHub>();
  board_ = std::make_unique<MarketBoard>();
  silences_ = std::make_unique<SilenceProxy>();
  stream_ = std::make_shared<AlertStream>(*hub_, metrics_, silences_.get());
  scores_ = std::make_unique<ScoreBoard>();
  live_ = std::make_unique<LiveFeed>(symbols_, board_.get(), stream_.get(), *hub_, metrics_);
  live_->set_scores(scores_.get());
}

Dashboard::~Dashboard() { stop(); }

Status Dashboard::start() {
  if (options_.token.empty()) options_.token = env_or("TICKSENTRY_TOKEN", random_token());
  HttpOptions ho;
  ho.bind = options_.bind;
  ho.port = options_.port;
  ho.token = options_.token;
  ho.metrics_token = options_.metrics_token.empty() ? env_or("TICKSENTRY_METRICS_TOKEN", "") : options_.metrics_token;
  ho.limits = options_.limits;
  ho.web_root = options_.web_root.empty() ? env_or("TICKSENTRY_WEB_ROOT", "") : options_.web_root;
  if (ho.web_root.empty()) {
    ho.web_root = TICKSENTRY_WEB_DIST;
    if (!std::filesystem::exists(std::filesystem::path(ho.web_root) / "index.html")) {
      spdlog::warn(
          "http: the dashboard is not built ({} missing; run `npm ci && npm run build` in web/): "
          "serving the API and /metrics only",
          ho.web_root + "/index.html");
      ho.web_root.clear();
    }
  }
  if (!options_.audit_postgres_dsn.empty() || !options_.audit_db.empty()) {
    auto h = options_.audit_postgres_dsn.empty() ? AlertHistory::open(options_.audit_db)
                                                 : AlertHistory::open_postgres(options_.audit_postgres_dsn);
    if (!h.is_ok()) return h.status();
    history_ = std::move(h).value();
  }
  if (silence_store_) {
    silences_->impl = std::make_unique<StoreSilences>(*silence_store_);
  } else {
    silences_->impl = std::make_unique<MemorySilences>();
  }
  server_ = std::make_unique<HttpServer>(ho, *hub_, metrics_);
  server_->set_alert_stream(stream_.get());
  server_->set_live_feed(live_.get());
  server_->set_silences(silences_.get());
  server_->set_models(models_);
  server_->set_alert_history(history_.get());
  TS_RETURN_IF_ERROR(server_->start());
  std::string no_gpu;
  gpu_ = GpuTelemetry::open(metrics_, &no_gpu);
  if (gpu_) {
    live_->set_on_tick([g = gpu_.get()] { g->sample(); });
    spdlog::info("http: GPU telemetry for {} GPU(s) on /metrics", gpu_->gpu_count());
  } else {
    spdlog::debug("http: no GPU telemetry: {}", no_gpu);
  }
  live_->start();
  return Status::ok();
}

void Dashboard::stop() {
  if (live_) live_->stop();
  if (server_) server_->stop();
}

void Dashboard::set_ready(bool ready) {
  if (server_) server_->set_ready(ready);
}

MarketBoard* Dashboard::board() { return board_.get(); }
ScoreBoard* Dashboard::scores() { return scores_.get(); }
std::shared_ptr<AlertStream> Dashboard::alert_sink() { return stream_; }
int Dashboard::port() const { return server_ ? server_->port() : 0; }

std::string Dashboard::url() const { return server_ ? server_->url() + "/?token=" + options_.token : std::string(); }

}  // namespace ts::http
