#pragma once
// Detector metrics on a labelled window set (definitions in docs/labels.md): ROC-AUC, PR-AUC
// (average precision), the PR curve, alerts with a per-symbol cooldown, the alert-budget
// threshold, recall over events, median lead time, and the 70/15/15 time split.
// Used by `ticksentry eval` and by the promotion gate (serve/promotion_gate.h), so that a model
// is judged by one definition everywhere. Pure functions: no state, safe from any thread.
#include <cstdint>
#include <span>
#include <vector>

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
// Per window, 1 where alerts_at raises an alert at `threshold` (the same cooldown rule).
std::vector<uint8_t> alert_flags(const EvalWindows& w, double threshold, int64_t cooldown_ns);

// The lowest threshold (among the distinct scores, thinned to at most 1,000 quantiles) whose
// false alerts are at most max_false_alerts, and the metrics there.
BudgetResult at_budget(const EvalWindows& w, double max_false_alerts, int64_t cooldown_ns);

// The split of window i: train = end_ts < first + 0.70 * span, validation < first + 0.85 * span,
// test the rest, span = last - first of the manifest's time_range_ns.
enum class Split : uint8_t { kTrain = 0, kValidation, kTest };
Split split_of(int64_t end_ts_ns, int64_t first_ns, int64_t last_ns);

}  // namespace ts
