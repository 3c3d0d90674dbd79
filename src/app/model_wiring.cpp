#include "app/model_wiring.h"

#include "app/build_manifest.h"
#include "app/model_contract.h"
#include "http/file_model.h"

#include <filesystem>
#include <optional>

#include "core/log.h"
#include "engine/backend.h"
#include "engine/plan.h"
#include "http/registry_models.h"
#include "serve/eval_dataset.h"

namespace ts {

Result<OpenedModel> open_model_engine(const std::string& path, const std::string& backend, const std::string& precision,
                                      int max_batch, int rows) {
  OpenedModel out;
  std::optional<engine::ModelManifest> manifest;
  if (path.ends_with(".plan")) {
    auto e = engine::Engine::load_file(path);
    if (!e) return e.status().with_context("model " + path);
    if (e.value()->backend() != backend) {
      return Status(StatusCode::kInvalidArgument,
                    "model " + path + ": plan is for the " + e.value()->backend() + " backend, not " + backend);
    }
    auto m = engine::read_plan_manifest_file(path);
    if (!m) return m.status().with_context("model " + path);
    manifest = std::move(m).value();
    out.engine = e.value();
  } else {
    // An .onnx serves with the manifest beside it when there is one (as `build` would write it).
    std::filesystem::path beside(path);
    beside.replace_extension(".manifest.json");
    if (std::filesystem::exists(beside)) {
      auto m = make_build_manifest(path, BuildManifestOptions{}, nullptr);
      if (!m) return m.status().with_context("model " + path);
      manifest = std::move(m).value();
    }
    TS_RETURN_IF_ERROR(check_onnx_contract(path, rows, kFeatureCount, manifest ? beside.string() : std::string()));
    const std::string p = precision == "auto" ? (backend == "cuda" ? "fp16" : "fp32") : precision;
    const engine::Precision prec = p == "fp16"   ? engine::Precision::kFP16
                                   : p == "bf16" ? engine::Precision::kBF16
                                                 : engine::Precision::kFP32;
    // One profile: [1..max_batch, rows, F], tactics timed at the full batch (it will serve).
    auto e = build_window_engine(path, rows, kFeatureCount, max_batch, backend, prec, /*time_tactics=*/true);
    if (!e) return e.status();
    out.engine = e.value();
  }
  TS_RETURN_IF_ERROR(check_plan_contract(manifest ? &*manifest : nullptr, *out.engine, path, rows, kFeatureCount));
  if (manifest) out.probability_column = manifest->probability_column;
  return out;
}

Result<ModelServing> start_model_serving(const serve::ServeOptions& options, int shards, const std::string& failure_db,
                                         Metrics* metrics) {
  ModelServing ms;
  serve::ServeOptions opts = options;
  if (!std::filesystem::exists(opts.path)) {
    return Status(StatusCode::kNotFound, "model " + opts.path + ": no such file");
  }
  ms.name = !opts.name.empty() ? opts.name : std::filesystem::path(opts.path).stem().string();
  std::string backend = opts.backend;
  if (backend == "auto") {
    const engine::Backend* cuda = engine::find_backend("cuda");
    backend = cuda && cuda->available().is_ok() ? "cuda" : "cpu";
  }
  auto primary = open_model_engine(opts.path, backend, opts.precision, opts.batcher.max_batch, opts.window_rows);
  if (!primary && opts.backend == "auto" && backend == "cuda") {
    spdlog::warn("model {}: {}; serving from the CPU backend", ms.name, primary.status().to_string());
    backend = "cpu";
    primary = open_model_engine(opts.path, backend, opts.precision, opts.batcher.max_batch, opts.window_rows);
  }
  if (!primary) return primary.status();
  serve::resolve_for_backend(opts, backend);
  ms.options = opts;
  std::shared_ptr<engine::Engine> fallback;
  if (backend != "cpu" && opts.cpu_fallback && !opts.path.ends_with(".plan")) {
    auto f = open_model_engine(opts.path, "cpu", "fp32", opts.batcher.max_batch, opts.window_rows);
    if (!f) return f.status().with_context("CPU fallback");
    fallback = f.value().engine;
  } else if (backend == "cpu" && opts.cpu_fallback) {
    fallback = primary.value().engine;  // a retry on the same (CPU) engine, with its own contexts
  }
  ms.server = std::make_unique<serve::ModelServer>(opts, shards);
  if (metrics) ms.server->set_metrics(metrics);
  if (!failure_db.empty()) {
    auto fs = FailureStore::open(failure_db);
    if (!fs) return fs.status();
    ms.failures = std::move(fs).value();
    ms.server->set_failure_handler([store = ms.failures.get(), path = opts.path](const serve::FailureCase& fc) {
      FailureRecord r;
      r.model = fc.model;
      r.version = fc.version;
      r.model_path = path;
      r.backend = fc.backend;
      r.error = fc.error;
      r.batch = fc.batch;
      r.rows = fc.rows;
      r.features = fc.features;
      r.recovered = fc.recovered;
      r.input = fc.input;
      auto id = store->record(r);
      if (id) {
        spdlog::warn("model {} v{}: failure case {} recorded (ticksentry replay-failure {})", r.model, r.version, id.value(),
                     id.value());
      } else {
        spdlog::error("model {}: failure case not recorded: {}", r.model, id.status().to_string());
      }
    });
  }
  const serve::ModelHandle prod{ms.name, opts.version, primary.value().engine, primary.value().probability_column};
  if (Status st = ms.server->start(prod, fallback, kFeatureCount); !st.is_ok()) {
    return st.with_context("model " + opts.path);
  }
  spdlog::info("model {} v{} serving on {} ({} worker{}, batches up to {}, max delay {} us{})", ms.name, opts.version,
               backend, opts.workers, opts.workers == 1 ? "" : "s", ms.server->options().batcher.max_batch,
               opts.batcher.max_delay_us, opts.lossless == "on" ? ", lossless" : "");
  return ms;
}

std::string apply_operating_point(ModelAlertOptions& alerts, const serve::ModelVersion& v) {
  if (!v.threshold) return "";
  auto hysteresis_for = [](double h, double t) { return h < t ? h : t / 2; };
  std::string line = "model " + v.name + " v" + std::to_string(v.version) + ": threshold " +
                     std::to_string(*v.threshold) + " from the registry's operating point (configured " +
                     std::to_string(alerts.threshold) + ")";
  alerts.threshold = *v.threshold;
  alerts.hysteresis = hysteresis_for(alerts.hysteresis, alerts.threshold);
  for (DecisionGroup& g : alerts.groups) {
    auto it = v.group_thresholds.find(g.match.name);
    if (it == v.group_thresholds.end()) {
      // Not in the operating point: a group's own threshold stands; without one it follows the
      // model's (never the config's default while the model's is the registry's).
      if (g.threshold_set) continue;
      g.threshold = alerts.threshold;
      g.hysteresis = hysteresis_for(g.hysteresis, g.threshold);
      continue;
    }
    g.threshold = it->second;
    g.hysteresis = hysteresis_for(g.hysteresis, g.threshold);
    line += "; group " + g.match.name + " " + std::to_string(g.threshold);
  }
  return line;
}

std::string publish_decision_values(DecisionValues& values, const ModelAlertOptions& configured,
                                    const serve::ModelVersion& version) {
  ModelAlertOptions next = configured;
  std::string line = apply_operating_point(next, version);
  values.publish(uint32_t(version.version), next);
  return line;
}

// The symbol groups the registry's operating point was fitted for (its "groups_config": a config
// file of [[model.groups]] blocks, relative to the registry's folder), used when the config
// declares none, so that serving from the registry applies the per-group thresholds by default.
// Their hysteresis and cooldown are the configured ones; their thresholds follow the registry's.
static Result<std::vector<DecisionGroup>> registry_symbol_groups(const serve::ModelRegistry& registry,
                                                         const serve::ModelVersion& v,
                                                         const ModelAlertOptions& configured, int window_rows) {
  std::vector<DecisionGroup> out;
  const auto op = v.raw.find("operating_point");
  if (v.group_thresholds.empty() || op == v.raw.end() || !op->is_object()) return out;
  const auto file = op->find("groups_config");
  if (file == op->end() || !file->is_string()) return out;
  const std::string path = registry.resolve(file->get<std::string>());
  try {
    const Config groups_file = Config::load_file(path);
    out = ModelAlertOptions::from_config(groups_file.section("model"), window_rows).groups;
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, "model " + v.name + " v" + std::to_string(v.version) +
                                                    ": its operating point's groups_config " + path + ": " + e.what());
  }
  for (DecisionGroup& g : out) {
    g.threshold_set = false;
    g.hysteresis = configured.hysteresis;
    g.cooldown_s = configured.cooldown_s;
  }
  spdlog::info("model {} v{}: {} symbol groups from {} (the config declares none)", v.name, v.version, out.size(), path);
  return out;
}

Result<ModelServing> attach_model_serving(Pipeline& pipeline, const Config& config, const std::string& model_path,
                                          int pipeline_shards, const std::string& failure_db, bool unpaced) {
  serve::ServeOptions opts = serve::ServeOptions::from_config(config.section("model"));
  ModelAlertOptions alerts = ModelAlertOptions::from_config(config.section("model"), opts.window_rows);
  ModelAlertOptions configured = alerts;
  auto decision_values = std::make_shared<DecisionValues>();
  if (!model_path.empty()) opts.path = model_path;
  std::unique_ptr<serve::ModelRegistry> registry;
  std::optional<serve::ModelVersion> shadow;
  if (opts.path.empty() && !opts.registry.empty()) {
    auto r = serve::ModelRegistry::open(opts.registry);
    if (!r) return r.status();
    registry = std::move(r).value();
    auto prod = registry->prod(opts.name);
    if (!prod) {
      return Status(StatusCode::kNotFound, "model registry " + opts.registry + ": " + opts.name + " has no prod version");
    }
    opts.path = registry->resolve(prod->onnx);
    opts.version = uint32_t(prod->version);
    if (alerts.groups.empty()) {
      auto groups = registry_symbol_groups(*registry, *prod, alerts, opts.window_rows);
      if (!groups) return groups.status();
      alerts.groups = configured.groups = std::move(groups).value();
    }
    if (std::string line = apply_operating_point(alerts, *prod); !line.empty()) spdlog::info("{}", line);
    publish_decision_values(*decision_values, configured, *prod);
    shadow = registry->shadow(opts.name);
  }
  if (opts.path.empty()) return ModelServing{};
  if (opts.lossless == "on" || (opts.lossless == "auto" && unpaced)) {
    opts.batcher.latest_wins = false;
    opts.deadline_us = int64_t(1) << 50;  // none
    opts.lossless = "on";
  } else {
    opts.lossless = "off";
  }
  auto ms = start_model_serving(opts, pipeline_shards, failure_db, &pipeline.metrics());
  if (!ms) return ms.status();
  ModelServing& m = ms.value();
  m.alerts = alerts;
  if (registry) m.decision_values = decision_values;
  pipeline.set_model(m.server.get(), alerts, m.name, m.decision_values);
  if (registry) {
    serve::ModelServer* server = m.server.get();
    if (shadow) {
      auto eng = open_model_engine(registry->resolve(shadow->onnx), server->backend(), opts.precision,
                                   opts.batcher.max_batch, opts.window_rows);
      if (!eng) return eng.status().with_context("shadow " + opts.name + " v" + std::to_string(shadow->version));
      TS_RETURN_IF_ERROR(
          server->set_shadow({opts.name, uint32_t(shadow->version), eng.value().engine, eng.value().probability_column}));
    }
    // Promotions (admin API) swap the live engine: prod → swap, shadow → set_shadow.
    // Prod: the version's decision values first (its operating point), then the engine.
    registry->set_swap_handler([server, configured, values = decision_values](
                                   const serve::ModelVersion& v, std::shared_ptr<engine::Engine> e) -> Status {
      if (v.stage == serve::Stage::kShadow) return server->set_shadow({v.name, uint32_t(v.version), std::move(e)});
      if (std::string line = publish_decision_values(*values, configured, v); !line.empty()) {
        spdlog::info("hot swap: {}", line);
      }
      auto rep = server->swap({v.name, uint32_t(v.version), std::move(e)});
      return rep.is_ok() ? Status::ok() : rep.status();
    });
    serve::PromotionOptions gate;
    gate.gate.data_dir = opts.gate_data;
    gate.gate.split = opts.gate_split;
    gate.gate.backend = server->backend() == "cuda" ? "cuda" : "cpu";
    gate.gate.batch = server->options().batcher.max_batch;
    if (gate.gate.backend == "cuda") {
      gate.gate.precision = opts.precision == "fp32"   ? engine::Precision::kFP32
                            : opts.precision == "bf16" ? engine::Precision::kBF16
                                                       : engine::Precision::kFP16;
    }
    m.admin = std::make_unique<http::RegistryModels>(*registry, gate);
    m.registry = std::move(registry);
  } else {
    // A file (--model / [model] path): /api/models shows what serves; promotions are refused.
    http::FileModelInfo fi;
    fi.name = m.name;
    fi.path = opts.path;
    fi.version = "file";
    fi.backend = m.server->backend();
    fi.metrics = {{"threshold", alerts.threshold},
                  {"window_rows", double(opts.window_rows)},
                  {"max_batch", double(m.server->options().batcher.max_batch)}};
    m.admin = std::make_unique<http::FileModel>(std::move(fi));
  }
  return ms;
}

void finish_model_serving(ModelServing& serving, RunSummary& summary) {
  if (!serving.server) return;
  serving.server->stop();
  summary.has_model = true;
  summary.model = model_run_summary(*serving.server, serving.name);
}

ModelRunSummary model_run_summary(const serve::ModelServer& server, const std::string& name) {
  ModelRunSummary m;
  m.name = name;
  m.version = server.model_version();
  m.backend = server.backend();
  m.batches = server.batches();
  m.failed_batches = server.failed_batches();
  m.backend_switches = server.backend_switches();
  m.swaps = server.swaps();
  for (int i = 0; i < server.shards(); ++i) {
    const auto& c = server.port(i).counts();
    m.requests += c.requests;
    m.results_ok += c.results_ok;
    m.fallback_ok += c.fallback_ok;
    for (int r = 0; r < serve::kDropReasonCount; ++r) {
      if (c.drops[r]) m.drops[serve::drop_reason_name(serve::DropReason(r))] += c.drops[r];
    }
    m.queue_wait.merge(c.queue_wait);
    m.compute.merge(c.compute);
    m.inference.merge(c.end_to_end);
    m.receive_to_score.merge(c.receive_to_score);
  }
  const auto sizes = server.batch_sizes();
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k]) m.batch_sizes[uint32_t(k)] = sizes[k];
  }
  return m;
}

}  // namespace ts
