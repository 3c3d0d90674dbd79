#pragma once
// Model serving for `run` and `replay`: opens the model named by [model] (or --model), picks the
// backend (auto: cuda when a GPU is present and the model builds/loads there, else cpu), starts a
// ModelServer, and reports it in the run summary.
#include <memory>
#include <string>

#include "audit/failure_store.h"
#include "core/status.h"
#include "detect/decision_values.h"
#include "detect/model_alert.h"
#include "http/admin_api.h"
#include "pipeline/pipeline.h"
#include "pipeline/run_summary.h"
#include "serve/model_registry.h"
#include "serve/model_server.h"
#include "serve/serve_options.h"

namespace ts {

struct ModelServing {
  serve::ServeOptions options;
  ModelAlertOptions alerts;                // the trigger and decision ([model]; attach_model_serving)
  std::unique_ptr<FailureStore> failures;  // failed batches (declared first: outlives the server)
  std::unique_ptr<serve::ModelServer> server;
  std::string name;
  std::unique_ptr<serve::ModelRegistry> registry;  // serving from the registry (else null)
  std::unique_ptr<http::ModelAdmin> admin;         // the dashboard's model admin over it
  // Serving from the registry: each version's decision values, published by the swap handler
  // before a promotion or rollback swaps the engine (the shards follow; detect/decision_values.h).
  std::shared_ptr<DecisionValues> decision_values;
};

// A model opened for serving: its engine and the column of its output that is the probability
// (the model manifest's probability_column; -1 = not declared, one value per row).
struct OpenedModel {
  std::shared_ptr<engine::Engine> engine;
  int64_t probability_column = -1;
};

// Loads a .plan (refused unless it is for `backend`) or builds an .onnx for `backend` and
// `precision` ("auto": fp16 on cuda, fp32 on cpu) with one profile [1..max_batch, rows, F]
// (serve/eval_dataset.h build_window_engine). The model manifest — the plan's, or for an .onnx
// <model>.manifest.json beside it when present (app/build_manifest.h) — is checked against the
// pipeline's contract (app/model_contract.h) and gives the probability column. Errors name the
// file and the backend.
Result<OpenedModel> open_model_engine(const std::string& path, const std::string& backend, const std::string& precision,
                                      int max_batch, int rows);

// Starts serving per `opts` for `shards` shard threads. A CPU fallback engine is opened from the
// same file when the primary backend is not the CPU and opts.cpu_fallback is set (an .onnx
// only; a .plan is backend-specific).
// Failed batches are recorded in `failure_db` (the audit database; "" = not recorded).
// Per-batch metrics go to `metrics` when given.
Result<ModelServing> start_model_serving(const serve::ServeOptions& opts, int shards, const std::string& failure_db,
                                         Metrics* metrics = nullptr);

// The operating point recorded with a registry version (its validation-fitted threshold for the
// alert budget, docs/labels.md) replaces [model] threshold, and each [[model.groups]] whose name
// the operating point lists gets that group's threshold: serving decides with exactly the
// threshold that was evaluated. Hysteresis is lowered to at most half the threshold where it
// would reach it. A version without an operating point leaves `alerts` as configured. Returns a
// line for the log ("" when nothing changed).
std::string apply_operating_point(ModelAlertOptions& alerts, const serve::ModelVersion& version);

// The decision values of `version` entering prod: `configured` ([model]) with the version's
// operating point applied, published to `values` under its version number; the shards adopt them
// with the version's first result, so a hot swap changes the threshold with the model. Returns
// apply_operating_point's log line.
std::string publish_decision_values(DecisionValues& values, const ModelAlertOptions& configured,
                                    const serve::ModelVersion& version);

// For `run` and `replay`: reads [model] (always, so its keys count as read); `model_path` (the
// --model flag) overrides [model] path. With a model, starts serving for pipeline_shards and
// attaches it to `pipeline`; without one returns an empty ModelServing (server null).
// `unpaced`: the pipeline runs as fast as possible (replay), which makes lossless=auto lossless.
Result<ModelServing> attach_model_serving(Pipeline& pipeline, const Config& config, const std::string& model_path,
                                          int pipeline_shards, const std::string& failure_db, bool unpaced);
// After Pipeline::run: stops the server and fills summary.model. No-op without a server.
void finish_model_serving(ModelServing& serving, RunSummary& summary);

// The run summary's `model` object from a stopped server.
ModelRunSummary model_run_summary(const serve::ModelServer& server, const std::string& name);

}  // namespace ts
