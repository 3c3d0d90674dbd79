#pragma once
// `ticksentry eval --model M.onnx|M.plan --data DIR [--split test|validation|train|all]
// [--json OUT.json]`: scores a data set written by `ticksentry features --export` with a model
// (built with the CPU engine for .onnx, loaded for .plan) and compares it, on the same windows,
// with the rule detectors (rule_score.npy) and the rolling z-score baseline (zscore.npy).
// Metrics and the split rule are defined in docs/labels.md; the functions below are them.
//
// Exit codes: 0 success, 2 bad arguments, unreadable or inconsistent data, a model that does
// not fit the data set (one clear line on stderr), 1 unexpected internal failure.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace CLI {
class App;
}

namespace ts {

// ROC-AUC (Mann-Whitney U, ties count one half); NaN without both classes.
double roc_auc(std::span<const float> score, std::span<const uint8_t> label);
// PR-AUC as average precision: sum over distinct thresholds, descending, of
// (recall_n - recall_{n-1}) * precision_n (scikit-learn's average_precision_score); NaN
// without positives.
double average_precision(std::span<const float> score, std::span<const uint8_t> label);

struct PrPoint {
  double threshold = 0, precision = 0, recall = 0;
};
// Precision and recall (window level) at each distinct score, highest first, thinned evenly to
// at most max_points (the last point, recall 1, is always kept).
std::vector<PrPoint> pr_curve(std::span<const float> score, std::span<const uint8_t> label, size_t max_points = 200);

// Windows of one split, in end-time order, with their scores (one detector).
struct EvalWindows {
  std::span<const float> score;
  std::span<const uint8_t> label;
  std::span<const int32_t> symbol;
  std::span<const int64_t> end_ts_ns;
  std::span<const int64_t> event_ts_ns;
};

struct BudgetResult {
  double threshold = 0;          // +inf when no threshold meets the budget
  int64_t alerts = 0;            // alerts raised (see alerts_at)
  int64_t false_alerts = 0;      // alerts whose window has label 0
  double precision = 0;          // (alerts - false_alerts) / alerts; NaN without alerts
  int64_t events = 0;            // distinct (symbol, event_ts) among the windows
  int64_t events_detected = 0;   // events with a window at or above the threshold
  double recall = 0;             // events_detected / events; NaN without events
  double median_lead_s = 0;      // median of (event start - end of its first window >= threshold); NaN if none
};

// Alerts at threshold `t`: per symbol in time order, a window with score >= t raises an alert
// unless that symbol's previous alert was less than cooldown_ns before (a rule-like cooldown;
// without it a constantly-high score would be one alert).
BudgetResult alerts_at(const EvalWindows& w, double threshold, int64_t cooldown_ns);

// The lowest threshold (among the distinct scores, thinned to at most 1,000 quantiles) whose
// false alerts are at most max_false_alerts, and the metrics there.
BudgetResult at_budget(const EvalWindows& w, double max_false_alerts, int64_t cooldown_ns);

// The split of window i: train = end_ts < first + 0.70 * span, validation < first + 0.85 * span,
// test the rest, span = last - first of the manifest's time_range_ns.
enum class Split : uint8_t { kTrain = 0, kValidation, kTest };
Split split_of(int64_t end_ts_ns, int64_t first_ns, int64_t last_ns);

struct EvalOptions {
  std::string model;         // .onnx (built here, CPU, FP32) or .plan
  std::string data;          // a `features --export` directory
  std::string split = "test";
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
