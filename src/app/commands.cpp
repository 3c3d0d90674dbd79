#include "app/commands.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "app/model_wiring.h"
#include "audit/audit_store.h"
#include "audit/jsonl_sink.h"
#include "audit/postgres_store.h"
#include "audit/stdout_sink.h"
#include "core/config.h"
#include "core/log.h"
#include "http/alert_stream.h"
#include "http/dashboard.h"
#include "ingest/csv_writer.h"
#include "ingest/kafka_source.h"
#include "ingest/open_source.h"
#include "ingest/sim/simulator.h"
#include "notify/notify_sink.h"
#include "pipeline/pipeline.h"

namespace ts {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

Config load_config(const std::string& path) {
  if (path.empty()) return Config();
  return Config::load_file(path);
}

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
bool add_sinks(Pipeline& p, const Config& config, const CommonOptions& c, const KafkaRunOptions& kafka = {}) {
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

int finish(const RunSummary& summary, const CommonOptions& c) {
  summary.print(stderr);
  if (!c.summary_json.empty()) {
    if (Status st = summary.write_json(c.summary_json); !st.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
      return kExitUsage;
    }
  }
  return kExitOk;
}

// Notifications ([notify], docs/notifications.md): alerts routed, grouped and delivered by the
// notifier's own threads; absent without a [notify] section. Returns false (with a message) when
// the outbox cannot be opened; a bad [notify] throws ConfigError (exit 2 with its message).
// `out` (may be null) receives the sink, so the dashboard can share its silences.
// Deliveries are recorded in the audit store the alerts go to (table notify_deliveries): the
// SQLite file, or the PostgreSQL database with [sinks] audit_backend = "postgres".
bool add_notify_sink(Pipeline& p, const Config& config, const CommonOptions& c, const SymbolTable& symbols,
                     std::shared_ptr<notify::NotifySink>* out = nullptr) {
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
  if (out) *out = sink.value();
  return true;
}

SimOptions sim_options(const Config& config, std::optional<int> symbols, std::optional<uint64_t> seed,
                       std::optional<double> sim_seconds) {
  SimOptions o = SimOptions::from_config(config.section("sim"));
  if (symbols) o.symbols = *symbols;
  if (seed) o.seed = *seed;
  if (sim_seconds) o.duration_s = *sim_seconds;
  return o;
}

// `run --source kafka`: consume market data from a topic (docs/kafka.md). Offsets are committed
// only after the pipeline has drained and every sink (the audit store among them) has flushed.
int run_kafka(const CommonOptions& c, const KafkaRunOptions& k, const std::atomic<bool>& stop) {
  Config config = load_config(c.config_path);
  SymbolTable symbols;
  (void)SimOptions::from_config(config.section("sim"));
  const KafkaSourceOptions ko = kafka_source_options(config, c.config_path, k);
  PipelineOptions po = pipeline_options(config, c, /*default_speed=*/0.0);
  Pipeline pipeline(symbols, config, po);
  if (!add_sinks(pipeline, config, c, k)) return kExitUsage;
  if (!add_notify_sink(pipeline, config, c, symbols)) return kExitUsage;
  auto model = attach_model(pipeline, config, c, po);
  if (!model.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", model.status().to_string().c_str());
    return kExitUsage;
  }
  if (!check_unread(config)) return kExitUsage;
  InputErrors source_errors;
  auto source = KafkaSource::open(ko, symbols, source_errors, &pipeline.metrics());
  if (!source.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", source.status().to_string().c_str());
    return kExitUsage;
  }
  spdlog::info("run: {} at {}", source.value()->describe(), ko.brokers);
  RunSummary summary = pipeline.run(*source.value(), source_errors, stop);
  finish_model_serving(model.value(), summary);
  if (Status st = source.value()->commit(); !st.is_ok()) spdlog::error("{}", st.to_string());
  source.value()->flush_metrics();
  const KafkaSourceStats ks = source.value()->stats();
  spdlog::info("kafka: {} messages, {} events, {} bad ({} to the dead-letter topic), lag {}", ks.messages, ks.decoded,
               ks.decode_errors, ks.dlq, ks.lag_messages);
  return finish(summary, c);
}

}  // namespace

int command_run(const CommonOptions& c, const RunOptions& r, const std::atomic<bool>& stop) {
  if (r.source == "kafka") return run_kafka(c, r.kafka, stop);
  if (r.source != "sim") {
    std::fprintf(stderr, "ticksentry: --source must be sim or kafka, not '%s'\n", r.source.c_str());
    return kExitUsage;
  }
  Config config = load_config(c.config_path);
  SymbolTable symbols;
  SimOptions so = sim_options(config, r.symbols, r.seed, r.sim_seconds);
  if (so.symbols < 1 || so.symbols > 5000) {
    std::fprintf(stderr, "ticksentry: --symbols must be in 1..5000\n");
    return kExitUsage;
  }
  Simulator sim(so, symbols);
  // `run` is a live demo by default: the simulator is paced at real time.
  PipelineOptions po = pipeline_options(config, c, /*default_speed=*/1.0);
  po.order_tracking = OrderTracking::kOff;  // the simulator gives price and side on every update
  Pipeline pipeline(symbols, config, po);
  if (!add_sinks(pipeline, config, c)) return kExitUsage;
  auto model = attach_model(pipeline, config, c, po);
  if (!model.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", model.status().to_string().c_str());
    return kExitUsage;
  }
  std::shared_ptr<notify::NotifySink> notify_sink;
  if (!add_notify_sink(pipeline, config, c, symbols, &notify_sink)) return kExitUsage;
  auto dashboard = make_dashboard(config, c, symbols, pipeline, /*enabled_default=*/true);
  // Silences made in the dashboard mute notifications too: one SilenceStore.
  if (dashboard && notify_sink) dashboard->set_silence_store(&notify_sink->notifier().silences());
  if (dashboard && model.value().admin) dashboard->set_models(model.value().admin.get());
  if (!check_unread(config)) return kExitUsage;
  if (!start_dashboard(dashboard.get(), c)) return kExitUsage;
  spdlog::info("run: simulator with {} symbols, seed {}, speed {}{}", so.symbols, so.seed, po.speed,
               po.duration_s > 0 ? fmt::format(", {} s", po.duration_s) : ", until Ctrl-C");
  InputErrors source_errors;
  RunSummary summary = pipeline.run(sim, source_errors, stop);
  finish_model_serving(model.value(), summary);
  const std::string labels = !r.labels_path.empty() ? r.labels_path : so.labels_path;
  if (!labels.empty()) {
    if (Status st = sim.write_labels(labels); !st.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
    }
  }
  return finish(summary, c);
}

int command_replay(const CommonOptions& c, const ReplayOptions& r, const std::atomic<bool>& stop) {
  Config config = load_config(c.config_path);
  SymbolTable symbols;
  InputErrors source_errors;
  auto source = open_source(r.format, r.paths, symbols, source_errors);
  if (!source.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", source.status().to_string().c_str());
    return kExitUsage;
  }
  // One config file serves every command: read [sim] too so its keys are not "unknown" here.
  (void)SimOptions::from_config(config.section("sim"));
  PipelineOptions po = pipeline_options(config, c, /*default_speed=*/0.0);
  // LOBSTER messages carry price and side; SSE deletes and trades name orders by number only.
  po.order_tracking = r.format == "lobster" ? OrderTracking::kOff : OrderTracking::kAuto;
  Pipeline pipeline(symbols, config, po);
  if (!add_sinks(pipeline, config, c)) return kExitUsage;
  auto model = attach_model(pipeline, config, c, po);
  if (!model.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", model.status().to_string().c_str());
    return kExitUsage;
  }
  std::shared_ptr<notify::NotifySink> notify_sink;
  if (!add_notify_sink(pipeline, config, c, symbols, &notify_sink)) return kExitUsage;
  auto dashboard = make_dashboard(config, c, symbols, pipeline, /*enabled_default=*/false);
  // Silences made in the dashboard mute notifications too: one SilenceStore.
  if (dashboard && notify_sink) dashboard->set_silence_store(&notify_sink->notifier().silences());
  if (dashboard && model.value().admin) dashboard->set_models(model.value().admin.get());
  if (!check_unread(config)) return kExitUsage;
  if (!start_dashboard(dashboard.get(), c)) return kExitUsage;
  spdlog::info("replay: {}", source.value()->describe());
  RunSummary summary = pipeline.run(*source.value(), source_errors, stop);
  finish_model_serving(model.value(), summary);
  return finish(summary, c);
}

int command_record(const RecordOptions& r, const std::atomic<bool>& stop) {
  SymbolTable symbols;
  InputErrors errors;
  std::unique_ptr<Source> source;
  if (r.format == "sim") {
    Config config;
    SimOptions so = sim_options(config, r.symbols, r.seed, r.sim_seconds.value_or(60.0));
    source = std::make_unique<Simulator>(so, symbols);
  } else {
    auto opened = open_source(r.format, r.paths, symbols, errors);
    if (!opened.is_ok()) {
      std::fprintf(stderr, "ticksentry: %s\n", opened.status().to_string().c_str());
      return kExitUsage;
    }
    source = std::move(opened).value();
  }
  auto writer = CsvWriter::open(r.out);
  if (!writer.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", writer.status().to_string().c_str());
    return kExitUsage;
  }
  std::vector<Event> batch(1024);
  uint64_t written = 0;
  while (!stop.load()) {
    const size_t n = source->next_batch(batch);
    if (n == 0 && source->done()) break;
    for (size_t i = 0; i < n; ++i) {
      if (Status st = writer.value().write(batch[i], symbols); !st.is_ok()) {
        std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
        return 1;
      }
    }
    written += n;
  }
  if (Status st = writer.value().close(); !st.is_ok()) {
    std::fprintf(stderr, "ticksentry: %s\n", st.to_string().c_str());
    return 1;
  }
  std::fprintf(stderr, "recorded %llu events from %s to %s (%llu bad records skipped)\n",
               (unsigned long long)written, source->describe().c_str(), r.out.c_str(),
               (unsigned long long)errors.total());
  return kExitOk;
}

}  // namespace ts
