#include "app/run_wiring.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "app/run_outputs.h"
#include "app/silence_config.h"
#include "audit/audit_store.h"
#include "audit/jsonl_sink.h"
#include "audit/postgres_store.h"
#include "audit/stdout_sink.h"
#include "core/config_suggest.h"
#include "core/log.h"
#include "http/alert_stream.h"
#include "http/dashboard.h"
#include "notify/notify_config.h"
#include "notify/notifier.h"
#include "notify/notify_sink.h"

namespace ts {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

// Rejects keys nobody read (typos) once every module has read its section.
bool check_unread(const Config& config) {
  auto unread = config.unread_keys();
  for (auto& k : unread) {
    std::fprintf(stderr, "ticksentry: unknown config key '%s'%s\n", k.c_str(), did_you_mean(k).c_str());
  }
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

// Builds the sinks from [sinks], the flags and `out` (and the alerts topic from [kafka] or
// `kafka`). Returns false (with a message) on failure. `jsonl` receives the JSONL sink.
bool add_sinks(Pipeline& p, const Config& config, const CommonOptions& c, const RunOutputs& out,
               const KafkaRunOptions& kafka, std::shared_ptr<JsonlSink>* jsonl, bool* alerts_topic_added) {
  auto s = config.section("sinks");
  const bool to_stdout = s.get("stdout", true) && !c.no_stdout;
  if (to_stdout) p.add_sink("stdout", std::make_shared<StdoutSink>(stdout));
  if (!out.jsonl.empty()) {
    // Fail at start-up, not on the first alert, when the file cannot be written or holds a
    // previous run's alerts without --append.
    auto sink = JsonlSink::open(out.jsonl, out.append);
    if (!sink.is_ok()) {
      std::fprintf(stderr, "ticksentry: cannot write alerts to %s: %s\n", out.jsonl.c_str(),
                   sink.status().message().c_str());
      return false;
    }
    *jsonl = std::move(sink).value();
    p.add_sink("jsonl", *jsonl);
  }
  // The audit backend: the embedded SQLite store, or PostgreSQL shared by several instances
  // (shared by design: several runs and instances add to it, each alert id once).
  if (out.postgres) {
    auto pg = PostgresStore::open(out.postgres_dsn);
    if (!pg.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", pg.status().to_string().c_str());
      return false;
    }
    p.add_sink("postgres", std::shared_ptr<PostgresStore>(std::move(pg).value()));
  } else if (!out.audit_db.empty()) {
    auto store = AuditStore::open(out.audit_db);
    if (!store.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", store.status().to_string().c_str());
      return false;
    }
    auto held = store.value()->count();
    if (held.is_ok() && held.value() > 0 && !out.append) {
      std::fprintf(stderr,
                   "ticksentry: audit store %s already holds %lld alerts of a previous run: --append adds this "
                   "run's alerts to it (alerts already there are not stored twice), --out-dir DIR writes this "
                   "run's files to another folder; or remove it\n",
                   out.audit_db.c_str(), (long long)held.value());
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
  *alerts_topic_added = alerts_topic.value() != nullptr;
  return true;
}

// The dashboard's options ([http], --http, --http-token): read before check_unread. Nothing
// when disabled; throws ConfigError on a bad --http.
std::optional<http::DashboardOptions> dashboard_options(const Config& config, const CommonOptions& c,
                                                        const RunOutputs& out, bool enabled_default) {
  auto o = http::DashboardOptions::from_config(config.section("http"), enabled_default);
  std::string error;
  if (c.http_listen && !o.set_listen(*c.http_listen, &error)) throw ConfigError(error);
  if (c.http_token) o.token = *c.http_token;
  if (!o.enabled) return std::nullopt;
  o.audit_db = out.audit_db;
  if (out.postgres) {
    o.audit_postgres_dsn = out.postgres_dsn;  // /api/alerts reads the shared store
  }
  return o;
}

std::unique_ptr<http::Dashboard> make_dashboard(const http::DashboardOptions& o, SymbolTable& symbols, Pipeline& p) {
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
      spdlog::warn("dashboard not started: {} (--http PORT picks another port, --http off silences this)", st.message());
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
Result<ModelServing> attach_model(Pipeline& p, const Config& config, const CommonOptions& c, const RunOutputs& out,
                                  const PipelineOptions& po) {
  const bool unpaced = po.speed <= 0 && po.rate <= 0;
  return attach_model_serving(p, config, c.model_path, po.shards, out.audit_db, unpaced);
}

// Notifications ([notify], docs/notifications.md): alerts routed, grouped and delivered by the
// notifier's own threads; absent without a [notify] section. Returns false (with a message) when
// the outbox cannot be opened; a bad [notify] throws ConfigError (exit 2 with its message).
// `out` receives the sink (null without [notify]), so the dashboard can share its silences.
// Deliveries are recorded in the audit store the alerts go to (table notify_deliveries): the
// SQLite file, or the PostgreSQL database with [sinks] audit_backend = "postgres".
bool add_notify_sink(Pipeline& p, const Config& config, const CommonOptions& c, const RunOutputs& outputs,
                     const SymbolTable& symbols, notify::SilenceStore* silences,
                     std::shared_ptr<notify::NotifySink>* out) {
  if (c.no_notify) {
    // Replaying history must never page anyone: the section is read and checked (a bad one is
    // still exit 2), but no notifier, outbox or receiver is made.
    if (notify::has_notify_section(config)) {
      (void)notify::read_notify_config(config);
      spdlog::info("notifications off (--no-notify): [notify] checked, no receiver will be contacted");
    }
    *out = nullptr;
    return true;
  }
  auto sink = notify::make_notify_sink(config, symbols, &p.metrics(), outputs.audit_db, outputs.postgres_dsn, silences);
  if (!sink.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", sink.status().to_string().c_str());
    return false;
  }
  if (sink.value()) p.add_sink("notify", sink.value());
  *out = sink.value();
  return true;
}

// The whole configuration is read and checked before anything slow starts (a model build takes
// seconds; a notifier starts threads): a bad value or an unknown key in any section is exit 2
// first. The sections read later ([model], [notify], [http]) are read here once more for that.
bool check_config_before_start(const Config& config, bool dashboard_default) {
  const serve::ServeOptions serve = serve::ServeOptions::from_config(config.section("model"));
  (void)ModelAlertOptions::from_config(config.section("model"), serve.window_rows);
  if (notify::has_notify_section(config)) (void)notify::read_notify_config(config);
  (void)http::DashboardOptions::from_config(config.section("http"), dashboard_default);
  (void)read_silences_config(config);
  return check_unread(config);
}

}  // namespace

RunWiring::RunWiring(const Config& config, const CommonOptions& common, SymbolTable& symbols)
    : config_(config), common_(common), symbols_(symbols), outputs_(run_outputs(config, common)) {}

RunWiring::~RunWiring() = default;

bool RunWiring::build(const RunSetup& setup) {
  options_ = pipeline_options(config_, common_, setup.default_speed);
  options_.order_tracking = setup.order_tracking;
  pipeline_ = std::make_unique<Pipeline>(symbols_, config_, options_);
  if (!add_sinks(*pipeline_, config_, common_, outputs_, setup.kafka, &jsonl_, &alerts_topic_)) return false;
  to_stdout_ = config_.section("sinks").get("stdout", true) && !common_.no_stdout;
  if (!check_config_before_start(config_, setup.dashboard_default)) return false;
  auto model = attach_model(*pipeline_, config_, common_, outputs_, options_);
  if (!model.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", model.status().to_string().c_str());
    return false;
  }
  model_ = std::move(model).value();
  auto dash = dashboard_options(config_, common_, outputs_, setup.dashboard_default);
  const bool notifying = !common_.no_notify && notify::has_notify_section(config_);
  if (dash || notifying) {
    // One silence store for the notifier and the dashboard, in its own file ([silences] db).
    std::vector<std::string> legacy;
    if (notifying) legacy.push_back(notify::read_notify_config(config_).outbox_db);
    if (!outputs_.audit_db.empty()) legacy.push_back(outputs_.audit_db);
    auto store = open_silence_store(read_silences_config(config_), legacy);
    if (!store.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", store.status().to_string().c_str());
      return false;
    }
    silences_ = std::move(store).value();
    if (silences_->imported() > 0) {
      spdlog::info("silences: {} imported into {} from the outbox/audit database", silences_->imported(),
                   silences_->path());
    }
  }
  if (!add_notify_sink(*pipeline_, config_, common_, outputs_, symbols_, silences_.get(), &notify_)) return false;
  if (dash) {
    dashboard_ = make_dashboard(*dash, symbols_, *pipeline_);
    dashboard_->set_silence_store(silences_.get());
  }
  if (dashboard_ && model_.admin) dashboard_->set_models(model_.admin.get());
  if (!start_dashboard(dashboard_.get(), common_)) return false;
  spdlog::info("alerts to: {}", describe_outputs(false));
  return true;
}

std::string RunWiring::describe_outputs(bool with_counts) const {
  std::vector<std::string> parts;
  if (to_stdout_) parts.push_back("stdout");
  if (jsonl_) {
    std::string p = jsonl_->path();
    if (with_counts) {
      p += fmt::format(" ({} written", jsonl_->written());
      if (jsonl_->skipped_present() > 0) p += fmt::format(", {} already there", jsonl_->skipped_present());
      p += ")";
    } else if (jsonl_->previous_alerts() > 0) {
      p += fmt::format(" (appending to {} alerts of a previous run)", jsonl_->previous_alerts());
    }
    if (jsonl_->repaired_bytes() > 0) p += fmt::format(", its torn last line cut ({} bytes)", jsonl_->repaired_bytes());
    parts.push_back(p);
  }
  if (outputs_.postgres) {
    parts.push_back("the PostgreSQL audit store");
  } else if (!outputs_.audit_db.empty()) {
    parts.push_back("audit store " + outputs_.audit_db);
  }
  if (alerts_topic_) parts.push_back("the Kafka alerts topic");
  if (notify_) parts.push_back("notifications ([notify])");
  if (dashboard_) parts.push_back("the dashboard");
  return parts.empty() ? std::string("nowhere (no sink configured)") : fmt::format("{}", fmt::join(parts, ", "));
}

Status RunWiring::write_summary_json(const RunSummary& summary) const {
  TS_RETURN_IF_ERROR(summary.write_json(outputs_.summary_json));
  // Where the alerts went, added to the summary's object.
  std::ifstream in(outputs_.summary_json);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::ok();
  nlohmann::json o = {{"stdout", to_stdout_}, {"audit_db", outputs_.audit_db}, {"postgres", outputs_.postgres},
                      {"kafka_alerts_topic", alerts_topic_}, {"notify", notify_ != nullptr}, {"out_dir", outputs_.out_dir}};
  o["jsonl"] = jsonl_ ? jsonl_->path() : "";
  if (jsonl_) {
    o["jsonl_written"] = jsonl_->written();
    o["jsonl_already_there"] = jsonl_->skipped_present();
    o["jsonl_repaired_bytes"] = jsonl_->repaired_bytes();
  }
  j["outputs"] = std::move(o);
  if (notify_) {
    auto counts = notify_->notifier().outbox().counts();
    if (counts.is_ok()) {
      j["notify"] = {{"pending", counts.value().pending},
                     {"delivered", counts.value().delivered},
                     {"dead", counts.value().dead},
                     {"pending_at_start", notify_->notifier().pending_at_start()}};
    }
  }
  std::ofstream out(outputs_.summary_json, std::ios::trunc);
  out << j.dump(2) << '\n';
  if (!out) return Status(StatusCode::kIoError, "writing " + outputs_.summary_json);
  return Status::ok();
}

RunSummary RunWiring::run(Source& source, InputErrors& source_errors, const std::atomic<bool>& stop) {
  RunSummary summary = pipeline_->run(source, source_errors, stop);
  finish_model_serving(model_, summary);
  return summary;
}

int RunWiring::finish(const RunSummary& summary) const {
  summary.print(stderr);
  std::fprintf(stderr, "alerts went to: %s\n", describe_outputs(true).c_str());
  if (notify_) {
    // Said at the end, in plain words: what the notifier could not deliver before it stopped.
    auto counts = notify_->notifier().outbox().counts();
    if (const int64_t resumed = notify_->notifier().pending_at_start(); resumed > 0) {
      std::fprintf(stderr, "notifications: %lld were pending from an earlier run when this one started (resumed)\n",
                   (long long)resumed);
    }
    if (counts.is_ok() && counts.value().pending > 0) {
      std::fprintf(stderr,
                   "notifications: %lld still pending in the outbox (not delivered before the run ended); the next "
                   "run with the same [notify] outbox_db delivers them\n",
                   (long long)counts.value().pending);
    } else if (counts.is_ok()) {
      std::fprintf(stderr, "notifications: none pending\n");
    }
  }
  if (!outputs_.summary_json.empty()) {
    if (Status st = write_summary_json(summary); !st.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

}  // namespace ts
