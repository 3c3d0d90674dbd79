#pragma once
// `ticksentry eval --model M.onnx|M.plan --data DIR [--split test|validation|train|all]
// [--json OUT.json]`: scores a data set written by `ticksentry features --export` with a model
// (built with the CPU engine for .onnx, loaded for .plan) and compares it, on the same windows,
// with the rule detectors (rule_score.npy) and the rolling z-score baseline (zscore.npy).
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
};

// Runs eval; prints the table to stdout; returns the exit code.
int command_eval(const EvalOptions& opts);

class EvalCommand {
 public:
  explicit EvalCommand(CLI::App& app);
  std::optional<int> run() const;

 private:
  EvalOptions opts_;
  CLI::App* cmd_ = nullptr;
};

}  // namespace ts
