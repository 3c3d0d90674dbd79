#pragma once
// The check a model version passes before it serves (issue 6, "Model registry and hot swap"):
//   1. its engine is loaded from the version's plan for the backend, or built from its ONNX
//      for windows [1..batch, T, F] of the data set when it has none (tactics timed: this
//      engine serves); a corrupt or incompatible plan is refused with the engine's error;
//   2. warm-up: `warmup_runs` runs on a batch of real windows;
//   3. outputs: on the held windows (a split of a `ticksentry features --export` directory,
//      "validation" by default) its scores must be within `tolerance_abs` of the reference, the
//      same ONNX built by the CPU backend in FP32. Tolerance: 1e-4 absolute for FP32 plans,
//      1e-2 for FP16, BF16 and INT8 plans and FP32 plans that allow TF32 (the plan's precision as
//      `inspect` shows it). An engine built here by the CPU backend in FP32 without timed
//      tactics is the reference build itself (no second build);
//   4. accuracy: PR-AUC on the same windows, each with a block-bootstrap 95 % interval
//      (5-minute blocks, serve/eval_interval.h), against (a) prod: PR-AUC >= prod's PR-AUC ×
//      (1 − 0.005), prod scored from its ONNX by the CPU FP32 engine (no prod yet: passes), and
//      (b) the best baseline on those windows (the export's rule score and z-score, |ret_60s| /
//      (σ√60), volume_z): refused when the candidate's PR-AUC is below the baseline's. A
//      refusal states both comparisons' numbers, with the intervals (with few events they are
//      wide: read them before trusting a pass).
//   The gate reads the validation split (or a dedicated gate data set), never "test": the test
//   split is read once per release to report (docs/labels.md); asking for it is an error.
// Refusals are error Status values with code kUnsupported (the admin API's "refused", HTTP
// 409); a missing or unreadable data set is kNotFound / kInvalidArgument / kParseError. The
// message carries the numbers, e.g.
// "refused: PR-AUC 0.0530 on 688 validation windows is 68.21 % below prod alert-default v2's
// 0.1667 (floor 0.1659, allowed drop 0.5 %)".
//
// Runs on the caller's thread, off the hot path (seconds: a build and a pass over the windows).
// No shared state: concurrent calls are safe.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/engine.h"

namespace ts::serve {

struct GateOptions {
  std::string data_dir;                  // required: a `features --export` directory
  std::string split = "validation";      // train | validation | test | all
  std::string backend = "cpu";           // engine backend to check and serve
  engine::Precision precision = engine::Precision::kFP32;  // when building from the ONNX
  int64_t batch = 256;                   // windows per run; a built engine's max (and opt) batch
  bool time_tactics = true;              // a built engine times its kernels (it will serve)
  int warmup_runs = 3;
  double max_relative_drop = 0.005;      // PR-AUC may fall at most this fraction below prod's
  bool check_accuracy = true;            // false: outputs only (rollback, shadow, staging)
  bool check_baseline = true;            // with check_accuracy: also against the best baseline
  int bootstrap_reps = 400;              // block-bootstrap replicates of the intervals
};

// A model to check: files resolved to usable paths.
struct GateModel {
  std::string label;      // "alert-default v3", for messages
  std::string onnx_path;  // always present: the reference is built from it
  std::string plan_path;  // "" = build from the ONNX for the backend
};

struct GateReport {
  std::string candidate;                // GateModel::label
  std::string engine_source;            // "plan P" | "built from P (cpu, fp32)"
  std::string data_dir, split;
  int64_t windows = 0, positives = 0;
  double warmup_ms = 0;                 // wall time of the warm-up runs
  double max_abs_diff = 0;              // candidate vs reference, over every window
  double tolerance_abs = 0;
  double pr_auc = std::numeric_limits<double>::quiet_NaN();
  double pr_auc_lo = std::numeric_limits<double>::quiet_NaN();  // block-bootstrap 95 % interval
  double pr_auc_hi = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> prod_pr_auc_lo, prod_pr_auc_hi;
  std::string baseline;                 // the best baseline's name ("" when not checked)
  std::optional<double> baseline_pr_auc;
  std::string prod;                     // prod's label; "" when there is none or no accuracy check
  std::optional<double> prod_pr_auc;
  std::optional<double> floor;          // prod_pr_auc × (1 − max_relative_drop)
  std::string summary;                  // one line with the numbers

  nlohmann::ordered_json to_json() const;
};

struct GateResult {
  GateReport report;
  std::shared_ptr<engine::Engine> engine;  // the checked, warmed-up engine (to be served)
};

// Runs the checks above. `prod` is compared with only when options.check_accuracy.
Result<GateResult> run_promotion_gate(const GateModel& candidate, const std::optional<GateModel>& prod,
                                      const GateOptions& options);

// The absolute output tolerance for an engine, from the precision its description states.
double gate_tolerance_abs(const engine::Engine& eng);

}  // namespace ts::serve
