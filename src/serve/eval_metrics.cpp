#include "serve/eval_metrics.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace ts {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Indices sorted by score, highest first (stable: ties keep their order).
std::vector<size_t> by_score_desc(std::span<const float> score) {
  std::vector<size_t> idx(score.size());
  std::iota(idx.begin(), idx.end(), size_t(0));
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  return idx;
}

// Calls f(threshold, tp, fp) at the end of each group of equal scores, highest score first.
template <typename F>
void for_each_threshold(std::span<const float> score, std::span<const uint8_t> label, F&& f) {
  const auto idx = by_score_desc(score);
  int64_t tp = 0, fp = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    (label[idx[i]] ? tp : fp) += 1;
    if (i + 1 == idx.size() || score[idx[i + 1]] != score[idx[i]]) f(double(score[idx[i]]), tp, fp);
  }
}

// False alerts only (the budget search calls this once per candidate threshold).
int64_t false_alerts_at(const EvalWindows& w, double t, int64_t cooldown_ns, std::vector<int64_t>& last) {
  std::fill(last.begin(), last.end(), INT64_MIN);
  int64_t fa = 0;
  for (size_t i = 0; i < w.score.size(); ++i) {
    if (!(double(w.score[i]) >= t)) continue;
    int64_t& l = last[size_t(w.symbol[i])];
    if (l != INT64_MIN && w.end_ts_ns[i] - l < cooldown_ns) continue;
    l = w.end_ts_ns[i];
    fa += w.label[i] == 0;
  }
  return fa;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double roc_auc(std::span<const float> score, std::span<const uint8_t> label) {
  const size_t n = score.size();
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t(0));
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  double pos = 0, rank_sum = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && score[idx[j]] == score[idx[i]]) ++j;
    const double avg_rank = 0.5 * double(i + 1 + j);  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k) {
      if (label[idx[k]]) {
        pos += 1;
        rank_sum += avg_rank;
      }
    }
    i = j;
  }
  const double neg = double(n) - pos;
  if (pos == 0 || neg == 0) return kNaN;
  return (rank_sum - pos * (pos + 1) / 2) / (pos * neg);
}

double average_precision(std::span<const float> score, std::span<const uint8_t> label) {
  int64_t positives = 0;
  for (uint8_t l : label) positives += l != 0;
  if (positives == 0) return kNaN;
  double ap = 0, prev_recall = 0;
  for_each_threshold(score, label, [&](double, int64_t tp, int64_t fp) {
    const double recall = double(tp) / double(positives);
    ap += (recall - prev_recall) * double(tp) / double(tp + fp);
    prev_recall = recall;
  });
  return ap;
}

std::vector<PrPoint> pr_curve(std::span<const float> score, std::span<const uint8_t> label, size_t max_points) {
  int64_t positives = 0;
  for (uint8_t l : label) positives += l != 0;
  std::vector<PrPoint> all;
  for_each_threshold(score, label, [&](double t, int64_t tp, int64_t fp) {
    all.push_back(PrPoint{t, double(tp) / double(tp + fp), positives ? double(tp) / double(positives) : 0.0});
  });
  if (all.size() <= max_points || max_points < 2) return all;
  std::vector<PrPoint> out;
  for (size_t k = 0; k < max_points; ++k) out.push_back(all[k * (all.size() - 1) / (max_points - 1)]);
  return out;
}

std::vector<uint8_t> alert_flags(const EvalWindows& w, double t, int64_t cooldown_ns) {
  int32_t max_sym = 0;
  for (int32_t s : w.symbol) max_sym = std::max(max_sym, s);
  std::vector<int64_t> last(size_t(max_sym) + 1, INT64_MIN);
  std::vector<uint8_t> out(w.score.size(), 0);
  for (size_t i = 0; i < w.score.size(); ++i) {
    if (!(double(w.score[i]) >= t)) continue;
    int64_t& l = last[size_t(w.symbol[i])];
    if (l != INT64_MIN && w.end_ts_ns[i] - l < cooldown_ns) continue;
    l = w.end_ts_ns[i];
    out[i] = 1;
  }
  return out;
}

BudgetResult alerts_at(const EvalWindows& w, double t, int64_t cooldown_ns) {
  BudgetResult r;
  r.threshold = t;
  const std::vector<uint8_t> alert = alert_flags(w, t, cooldown_ns);
  std::map<std::pair<int32_t, int64_t>, int64_t> first_hit;  // event → end of its first window >= t
  for (size_t i = 0; i < w.score.size(); ++i) {
    if (w.label[i]) {
      auto [it, fresh] = first_hit.try_emplace({w.symbol[i], w.event_ts_ns[i]}, INT64_MIN);
      if (double(w.score[i]) >= t && it->second == INT64_MIN) it->second = w.end_ts_ns[i];
    }
    r.alerts += alert[i];
    r.false_alerts += alert[i] && w.label[i] == 0;
  }
  std::vector<double> leads;
  for (const auto& [ev, end] : first_hit) {
    ++r.events;
    if (end == INT64_MIN) continue;
    ++r.events_detected;
    leads.push_back(double(ev.second - end) / 1e9);
  }
  r.precision = r.alerts ? double(r.alerts - r.false_alerts) / double(r.alerts) : kNaN;
  r.recall = r.events ? double(r.events_detected) / double(r.events) : kNaN;
  r.median_lead_s = median(std::move(leads));
  return r;
}

BudgetResult at_budget(const EvalWindows& w, double max_false_alerts, int64_t cooldown_ns) {
  std::vector<float> distinct(w.score.begin(), w.score.end());
  std::sort(distinct.begin(), distinct.end(), std::greater<float>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<double> cand;
  constexpr size_t kMaxCandidates = 1000;
  if (distinct.size() <= kMaxCandidates) {
    cand.assign(distinct.begin(), distinct.end());
  } else {
    for (size_t k = 0; k < kMaxCandidates; ++k) cand.push_back(distinct[k * (distinct.size() - 1) / (kMaxCandidates - 1)]);
  }
  int32_t max_sym = 0;
  for (int32_t s : w.symbol) max_sym = std::max(max_sym, s);
  std::vector<int64_t> last(size_t(max_sym) + 1);
  double best = kInf;
  for (double t : cand) {  // highest first; false alerts need not be monotone: check every one
    if (double(false_alerts_at(w, t, cooldown_ns, last)) <= max_false_alerts) best = std::min(best, t);
  }
  return alerts_at(w, best, cooldown_ns);
}

Split split_of(int64_t end_ts_ns, int64_t first_ns, int64_t last_ns) {
  const double span = double(last_ns - first_ns);
  const double x = double(end_ts_ns - first_ns);
  if (x < 0.70 * span) return Split::kTrain;
  if (x < 0.85 * span) return Split::kValidation;
  return Split::kTest;
}

}  // namespace ts
