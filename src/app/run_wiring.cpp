#include "app/run_wiring.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "audit/audit_store.h"
#include "audit/jsonl_sink.h"
#include "audit/postgres_store.h"
#include "audit/stdout_sink.h"
#include "core/log.h"
#include "http/alert_stream.h"
#include "http/dashboard.h"
#include "notify/notify_sink.h"

namespace ts {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

// Rejects keys nobody read (typos) once every module has read its section.
bool check_unread(const Config& config) {
  auto unread = config.unread_keys();
  for (auto& k : unread) std::fprintf(stderr, "ticksentry: unknown config key '%s'\n", k.c_str());
  return unread.empty();
}

PipelineOptions pipeline_options(const Config& config, const CommonOptions& c, double default_speed) {
  PipelineOptions o = PipelineOptions::from_config(config.section("pipeline"));
  // The config's pipeline.speed wins over the command's default; a flag wins over both.
  if (config.section("pipeline").get("speed", -1.0) < 0) o.speed = default_speed;
  if (c.speed) o.speed = *c.speed;
  if (c.rate) o.rate = *c.rate;
  if (c.shards) o.shards = std::max(1, *c.shards);
  if (c.duration_s) o.duration_s = *c.duration_s;
  return o;
}

// Builds the sinks from [sinks] and the flags (and the alerts topic from [kafka] or `kafka`).
// Returns false (with a message) on failure.
bool add_sinks(Pipeline& p, const Config& config, const CommonOptions& c, const KafkaRunOptions& kafka) {
  auto s = config.section("sinks");
  const bool to_stdout = s.get("stdout", true) && !c.no_stdout;
  const std::string jsonl = c.jsonl_path.value_or(s.get("jsonl", "ticksentry-alerts.jsonl"));
  const std::string db = c.audit_db.value_or(s.get("audit_db", "ticksentry-audit.db"));
  if (to_stdout) p.add_sink("stdout", std::make_shared<StdoutSink>(stdout));
  if (!jsonl.empty()) {
    // Fail at start-up, not on the first alert, when the file cannot be written.
    std::FILE* probe = std::fopen(jsonl.c_str(), "a");
    if (!probe) {
      std::fprintf(stderr, "ticksentry: cannot write alerts to %s: %s\n", jsonl.c_str(), std::strerror(errno));
      return false;
    }
    std::fclose(probe);
    p.add_sink("jsonl", std::make_shared<JsonlSink>(jsonl));
  }
  // The audit backend: the embedded SQLite store, or PostgreSQL shared by several instances.
  const std::string backend = s.get("audit_backend", "sqlite");
  const std::string dsn = s.get("postgres_dsn", "");
  if (backend == "postgres") {
    auto pg = PostgresStore::open(dsn);
    if (!pg.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", pg.status().to_string().c_str());
      return false;
    }
    p.add_sink("postgres", std::shared_ptr<PostgresStore>(std::move(pg).value()));
  } else if (backend != "sqlite") {
    std::fprintf(stderr, "ticksentry: sinks.audit_backend must be sqlite or postgres, not '%s'\n", backend.c_str());
    return false;
  } else if (!db.empty()) {
    auto store = AuditStore::open(db);
    if (!store.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", store.status().to_string().c_str());
      return false;
    }
    p.add_sink("sqlite", std::shared_ptr<AuditStore>(std::move(store).value()));
  }
  auto alerts_topic = make_kafka_alert_sink(config, c.config_path, kafka);
  if (!alerts_topic.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", alerts_topic.status().to_string().c_str());
    return false;
  }
  if (alerts_topic.value()) p.add_sink("kafka", alerts_topic.value());
  return true;
}

// The dashboard ([http], --http, --http-token): read before check_unread, started after it.
// Returns null when disabled; throws ConfigError on a bad --http.
std::unique_ptr<http::Dashboard> make_dashboard(const Config& config, const CommonOptions& c, SymbolTable& symbols,
                                                Pipeline& p, bool enabled_default) {
  auto o = http::DashboardOptions::from_config(config.section("http"), enabled_default);
  std::string error;
  if (c.http_listen && !o.set_listen(*c.http_listen, &error)) throw ConfigError(error);
  if (c.http_token) o.token = *c.http_token;
  if (!o.enabled) return nullptr;
  o.audit_db = c.audit_db.value_or(config.section("sinks").get("audit_db", "ticksentry-audit.db"));
  if (config.section("sinks").get("audit_backend", "sqlite") == "postgres") {
    o.audit_postgres_dsn = config.section("sinks").get("postgres_dsn", "");  // /api/alerts reads the shared store
  }
  auto d = std::make_unique<http::Dashboard>(o, symbols, p.metrics());
  p.set_market_board(d->board());
  p.set_score_board(d->scores());  // the model's probabilities and serving latency, when a model serves
  p.add_sink("dashboard", d->alert_sink());
  return d;
}

// A dashboard asked for with --http must start; the default one (run) only warns when it
// cannot (e.g. port 8080 taken by another ticksentry), and the run goes on without it.
bool start_dashboard(http::Dashboard* d, const CommonOptions& c) {
  if (!d) return true;
  if (Status st = d->start(); !st.is_ok()) {
    if (!c.http_listen) {
      spdlog::warn("dashboard not started: {} (--http PORT picks another port, --http off silences this)",
                   st.message());
      return true;
    }
    std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
    return false;
  }
  spdlog::info("dashboard: {}", d->url());
  d->set_ready(true);
  return true;
}

// Model alerts ([model] / --model). Failed batches go to the audit database.
Result<ModelServing> attach_model(Pipeline& p, const Config& config, const CommonOptions& c, const PipelineOptions& po) {
  const std::string db = c.audit_db.value_or(config.section("sinks").get("audit_db", "ticksentry-audit.db"));
  const bool unpaced = po.speed <= 0 && po.rate <= 0;
  return attach_model_serving(p, config, c.model_path, po.shards, db, unpaced);
}

// Notifications ([notify], docs/notifications.md): alerts routed, grouped and delivered by the
// notifier's own threads; absent without a [notify] section. Returns false (with a message) when
// the outbox cannot be opened; a bad [notify] throws ConfigError (exit 2 with its message).
// `out` receives the sink (null without [notify]), so the dashboard can share its silences.
// Deliveries are recorded in the audit store the alerts go to (table notify_deliveries): the
// SQLite file, or the PostgreSQL database with [sinks] audit_backend = "postgres".
bool add_notify_sink(Pipeline& p, const Config& config, const CommonOptions& c, const SymbolTable& symbols,
                     std::shared_ptr<notify::NotifySink>* out) {
  auto s = config.section("sinks");
  const bool postgres = s.get("audit_backend", "sqlite") == "postgres";
  const std::string audit_db = postgres ? "" : c.audit_db.value_or(s.get("audit_db", "ticksentry-audit.db"));
  const std::string dsn = postgres ? s.get("postgres_dsn", "") : "";
  auto sink = notify::make_notify_sink(config, symbols, &p.metrics(), audit_db, dsn);
  if (!sink.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", sink.status().to_string().c_str());
    return false;
  }
  if (sink.value()) p.add_sink("notify", sink.value());
  *out = sink.value();
  return true;
}

}  // namespace

RunWiring::RunWiring(const Config& config, const CommonOptions& common, SymbolTable& symbols)
    : config_(config), common_(common), symbols_(symbols) {}

RunWiring::~RunWiring() = default;

bool RunWiring::build(const RunSetup& setup) {
  options_ = pipeline_options(config_, common_, setup.default_speed);
  options_.order_tracking = setup.order_tracking;
  pipeline_ = std::make_unique<Pipeline>(symbols_, config_, options_);
  if (!add_sinks(*pipeline_, config_, common_, setup.kafka)) return false;
  auto model = attach_model(*pipeline_, config_, common_, options_);
  if (!model.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", model.status().to_string().c_str());
    return false;
  }
  model_ = std::move(model).value();
  if (!add_notify_sink(*pipeline_, config_, common_, symbols_, &notify_)) return false;
  dashboard_ = make_dashboard(config_, common_, symbols_, *pipeline_, setup.dashboard_default);
  // Silences made in the dashboard mute notifications too: one SilenceStore.
  if (dashboard_ && notify_) dashboard_->set_silence_store(&notify_->notifier().silences());
  if (dashboard_ && model_.admin) dashboard_->set_models(model_.admin.get());
  if (!check_unread(config_)) return false;
  return start_dashboard(dashboard_.get(), common_);
}

RunSummary RunWiring::run(Source& source, InputErrors& source_errors, const std::atomic<bool>& stop) {
  RunSummary summary = pipeline_->run(source, source_errors, stop);
  finish_model_serving(model_, summary);
  return summary;
}

int RunWiring::finish(const RunSummary& summary) const {
  summary.print(stderr);
  if (!common_.summary_json.empty()) {
    if (Status st = summary.write_json(common_.summary_json); !st.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

}  // namespace ts
