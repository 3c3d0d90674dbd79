#pragma once
// One wiring for every run (`run`, `replay`, `run --source kafka`): the pipeline, its sinks
// ([sinks]: stdout, JSONL, the SQLite or PostgreSQL audit store, the Kafka alerts topic), the
// notifier ([notify]), the model server ([model] / --model) and the dashboard ([http] / --http),
// built from the config and the flags the same way whatever the source:
//
//   source ──► Pipeline (shards) ──► AlertDispatcher ──► sinks (…, notify, dashboard)
//                  │  ▲
//                  ▼  │ probabilities
//               ModelServer                      Dashboard (HTTP) ◄── boards, metrics, models
//
// Usage: construct, build(), open the source (it may use pipeline().metrics()), run(), finish().
// Errors: build() prints the reason and returns false (exit 2); a bad config value throws
// ConfigError (main prints it, exit 2). Threading: the caller's thread (the source loop's).
#include <atomic>
#include <memory>

#include "app/commands.h"
#include "app/model_wiring.h"
#include "app/run_outputs.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "core/symbol_table.h"
#include "ingest/source.h"
#include "pipeline/pipeline.h"
#include "pipeline/run_summary.h"

namespace ts {

class JsonlSink;
namespace http {
class Dashboard;
}
namespace notify {
class NotifySink;
class SilenceStore;
}

// What differs between the commands: defaults, never wiring.
struct RunSetup {
  double default_speed = 0;  // pipeline speed unless [pipeline] speed or --speed says: run (sim) 1
  OrderTracking order_tracking = OrderTracking::kAuto;  // by the source format
  bool dashboard_default = false;                       // [http] enabled when the config does not say: run (sim) on
  KafkaRunOptions kafka;                                // --alerts-topic / --brokers for the alerts topic sink
};

class RunWiring {
 public:
  // `config`, `common` and `symbols` must outlive the wiring.
  RunWiring(const Config& config, const CommonOptions& common, SymbolTable& symbols);
  ~RunWiring();
  RunWiring(const RunWiring&) = delete;
  RunWiring& operator=(const RunWiring&) = delete;

  // Builds sinks → model server → notifier → dashboard, rejects config keys nobody read, then
  // starts the dashboard (a dashboard asked for with --http must start; the default one only
  // warns). False (after a message on stderr) when the run cannot start. Call once.
  bool build(const RunSetup& setup);

  Pipeline& pipeline() { return *pipeline_; }                  // after build()
  const PipelineOptions& options() const { return options_; }  // after build()

  // Runs `source` through the pipeline to its end (or `stop` / the duration), then stops the
  // model server and adds its figures to the summary.
  RunSummary run(Source& source, InputErrors& source_errors, const std::atomic<bool>& stop);

  // Prints the summary and where the alerts went to stderr and writes --summary-json (with an
  // "outputs" object: the JSONL file, lines written and already there, the audit store);
  // returns the exit code.
  int finish(const RunSummary& summary) const;

  const RunOutputs& outputs() const { return outputs_; }

 private:
  std::string describe_outputs(bool with_counts) const;
  Status write_summary_json(const RunSummary& summary) const;

  const Config& config_;
  const CommonOptions& common_;
  SymbolTable& symbols_;
  RunOutputs outputs_;
  PipelineOptions options_;
  std::shared_ptr<JsonlSink> jsonl_;
  bool to_stdout_ = false;
  bool alerts_topic_ = false;
  // Destroyed in reverse: the dashboard first (it reads the pipeline's boards and metrics), the
  // pipeline, then the silences (the notifier and the dashboard consult them).
  std::unique_ptr<notify::SilenceStore> silences_;
  std::unique_ptr<Pipeline> pipeline_;
  ModelServing model_;
  std::shared_ptr<notify::NotifySink> notify_;
  std::unique_ptr<http::Dashboard> dashboard_;
};

}  // namespace ts
