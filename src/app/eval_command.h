#pragma once
// `ticksentry eval --model M.onnx|M.plan --data DIR [--split test|validation|train|all]
// [--task any|detect|forecast] [--fit-on split|validation] [--threshold T] [--reps N]
// [--json OUT.json]`: scores a data set written by `ticksentry features --export` with a model
// (built with the CPU engine for .onnx, loaded for .plan) and compares it, on the same windows,
// with the rule detectors (rule_score.npy), the rolling z-score (zscore.npy) and the ret60 and
// volume_z baselines. Per detector and per symbol, the metrics of models/REPORT.md: PR-AUC,
// ROC-AUC and, at the budget threshold (fitted on the measured rows, or on validation as the
// protocol does, or the model's as given), events caught / total, precision, false alerts per
// symbol-hour, median and 10th-percentile lead, each with a block-bootstrap 95 % interval
// (serve/eval_interval.h, the definitions of models/intervals.py).
// Metrics and the split rule are defined in docs/labels.md and implemented in serve/eval_metrics.h
// (shared with the promotion gate); the data set is read by serve/eval_dataset.h.
//
// Exit codes: 0 success, 2 bad arguments, unreadable or inconsistent data, a model that does
// not fit the data set (one clear line on stderr), 1 unexpected internal failure.
#include <optional>
#include <string>

#include "serve/eval_metrics.h"

namespace CLI {
class App;
}

namespace ts {

struct EvalOptions {
  std::string model;         // .onnx (built here, CPU, FP32) or .plan
  std::string data;          // a `features --export` directory
  std::string split = "test";
  std::string task = "any";  // any (labels.npy), detect or forecast (docs/labels.md)
  std::string json;          // "" = no JSON file
  int batch = 256;           // windows per engine call
  double max_false_per_symbol_hour = 1.0;
  std::string fit_on = "split";         // where budget thresholds are fitted: split | validation
  std::optional<double> threshold;      // the model's threshold as given (the registry's), not fitted
  int reps = 100;                       // block-bootstrap replicates (0: no intervals)
  double block_s = 300;                 // bootstrap block, seconds
};

// Runs eval; prints the table to stdout; returns the exit code.
int command_eval(const EvalOptions& opts);

class EvalCommand {
 public:
  explicit EvalCommand(CLI::App& app);
  std::optional<int> run() const;

 private:
  EvalOptions opts_;
  double threshold_arg_ = 0;  // --threshold, when given
  CLI::App* cmd_ = nullptr;
};

}  // namespace ts
