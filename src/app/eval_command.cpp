#include "app/eval_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <span>
#include <vector>

#include "serve/eval_dataset.h"
#include "serve/eval_interval.h"

namespace ts {

namespace {

namespace fs = std::filesystem;

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

int fail(const std::string& msg) {
  std::fprintf(stderr, "ticksentry eval: %s\n", msg.c_str());
  return 2;
}

}  // namespace

namespace {

// One detector's scores over every row of the data set (windows in export order).
struct Detector {
  const char* name;
  std::vector<float> all;
};

struct Columns {
  std::vector<float> score;
  std::vector<uint8_t> label;
  std::vector<int32_t> symbol;
  std::vector<int64_t> end_ts, event_ts;
  EvalWindows view() const { return EvalWindows{score, label, symbol, end_ts, event_ts}; }
};

Columns columns_of(const EvalDataset& d, const std::vector<size_t>& rows, const std::vector<float>& all_scores,
                   const std::function<bool(size_t)>& keep = nullptr) {
  Columns c;
  for (size_t i : rows) {
    if (keep && !keep(i)) continue;
    c.score.push_back(all_scores[i]);
    c.label.push_back(d.labels.as<uint8_t>()[i]);
    c.symbol.push_back(d.symbol.as<int32_t>()[i]);
    c.end_ts.push_back(d.end_ts.as<int64_t>()[i]);
    c.event_ts.push_back(d.event_ts.as<int64_t>()[i]);
  }
  return c;
}

nlohmann::json interval_json(const Interval& v) { return {{"value", num(v.value)}, {"lo", num(v.lo)}, {"hi", num(v.hi)}}; }

nlohmann::json operating_json(const OperatingIntervals& m) {
  return {{"threshold", num(m.threshold)},
          {"events", m.events},
          {"events_detected", m.events_detected},
          {"alerts", m.alerts},
          {"false_alerts", m.false_alerts},
          {"symbol_hours", m.symbol_hours},
          {"blocks", m.blocks},
          {"pr_auc", interval_json(m.pr_auc)},
          {"roc_auc", interval_json(m.roc_auc)},
          {"recall", interval_json(m.recall)},
          {"precision", interval_json(m.precision)},
          {"false_alerts_per_symbol_hour", interval_json(m.false_alerts_per_symbol_hour)},
          {"median_lead_s", interval_json(m.median_lead_s)},
          {"p10_lead_s", num(m.p10_lead_s)}};
}

std::string cell(double v, const char* fmt) {
  char b[32];
  if (!std::isfinite(v)) return "-";
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string with_interval(const Interval& v, const char* fmt) {
  if (!std::isfinite(v.value)) return "-";
  if (!std::isfinite(v.lo)) return cell(v.value, fmt);
  return cell(v.value, fmt) + " [" + cell(v.lo, fmt) + ", " + cell(v.hi, fmt) + "]";
}

}  // namespace

int command_eval(const EvalOptions& o) {
  auto only = parse_split(o.split);
  if (!only) return fail(only.status().message());
  if (o.model.empty()) return fail("--model is required");
  if (!fs::exists(o.model)) return fail("--model " + o.model + ": file not found");
  if (o.batch < 1 || o.batch > 65536) return fail("--batch must be in 1..65536");
  if (o.fit_on != "split" && o.fit_on != "validation")
    return fail("--fit-on must be split (the measured rows) or validation, not " + o.fit_on);
  if (o.reps < 0 || o.reps > 100000) return fail("--reps must be in 0..100000");
  if (!(o.block_s > 0)) return fail("--block-s must be > 0");
  if (o.threshold && !std::isfinite(*o.threshold)) return fail("--threshold must be a finite number");
  auto ds = load_eval_dataset(o.data, o.task);
  if (!ds) return fail(ds.status().message());
  const EvalDataset& d = ds.value();
  const double horizon_s = d.horizon_s;
  const std::vector<size_t> rows = split_rows(d, only.value());
  if (rows.empty()) return fail("split " + o.split + " of " + o.data + " has no windows");
  const std::vector<size_t> fit_rows = o.fit_on == "validation" ? split_rows(d, Split::kValidation) : rows;
  if (fit_rows.empty()) return fail("the validation split of " + o.data + " has no windows to fit a threshold on");

  // The model scores every row it needs (the measured rows, and validation when it fits there).
  std::vector<size_t> need = rows;
  if (o.fit_on == "validation") {
    need.insert(need.end(), fit_rows.begin(), fit_rows.end());
    std::sort(need.begin(), need.end());
    need.erase(std::unique(need.begin(), need.end()), need.end());
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto eng = load_window_model(o.model, d.t, d.f, o.batch);
  if (!eng) return fail(eng.status().message());
  auto model_scores = score_windows(*eng.value(), d, need, o.batch, o.model);
  if (!model_scores) return fail(model_scores.status().message());
  const double model_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::span<const float> windows(d.windows.as<float>(), size_t(d.n * d.t * d.f));
  std::vector<Detector> dets = {{"model", std::vector<float>(size_t(d.n), 0.0f)},
                                {"rules", {d.rule.as<float>(), d.rule.as<float>() + d.n}},
                                {"zscore", {d.zscore.as<float>(), d.zscore.as<float>() + d.n}},
                                {"ret60", baseline_ret60(windows, d.t, d.f)},
                                {"volume_z", baseline_volume_z(windows, d.t, d.f)}};
  for (size_t k = 0; k < need.size(); ++k) dets[0].all[need[k]] = model_scores.value()[k];

  // Symbol-hours of a row set: each window stands for `stride` seconds of its symbol's data.
  const double symbol_hours = double(rows.size()) * d.stride_s / 3600.0;
  const double fit_hours = double(fit_rows.size()) * d.stride_s / 3600.0;
  const double max_false = o.max_false_per_symbol_hour * symbol_hours;
  const int64_t cooldown_ns = int64_t(std::llround(horizon_s * 1e9));
  const int64_t block_ns = int64_t(std::llround(o.block_s * 1e9));
  int64_t positives = 0;
  for (size_t i : rows) positives += d.labels.as<uint8_t>()[i];
  const auto names = d.manifest.value("symbols", nlohmann::json::array());

  nlohmann::json j;
  j["data"] = o.data;
  j["model"] = o.model;
  j["split"] = o.split;
  j["task"] = o.task;
  j["windows"] = rows.size();
  j["positives"] = positives;
  j["symbol_hours"] = symbol_hours;
  j["budget"] = {{"false_alerts_per_symbol_hour", o.max_false_per_symbol_hour}, {"max_false_alerts", max_false},
                 {"cooldown_s", horizon_s}};
  j["threshold_fitted_on"] = o.fit_on == "validation" ? "validation" : o.split;
  j["intervals"] = {{"block_s", o.block_s}, {"reps", o.reps}, {"quantiles", {0.025, 0.975}}};
  j["model_seconds"] = model_s;
  std::printf("eval %s on %s, split %s: %zu windows, %lld positive (%.2f%%), %.2f symbol-hours\n", o.model.c_str(),
              o.data.c_str(), o.split.c_str(), rows.size(), (long long)positives, 100.0 * double(positives) / double(rows.size()),
              symbol_hours);
  std::printf("alert budget: <= %.1f false alerts per symbol-hour, thresholds fitted on %s%s, cooldown %.0f s; "
              "95 %% block-bootstrap intervals (%.0f s blocks, %d replicates)\n\n",
              o.max_false_per_symbol_hour, o.fit_on == "validation" ? "validation" : ("the " + o.split + " rows").c_str(),
              o.threshold ? " (model: --threshold)" : "", horizon_s, o.block_s, o.reps);
  std::printf("%-8s %8s %-22s %10s %6s %-18s %9s %-24s %9s %8s\n", "detector", "ROC-AUC", "PR-AUC [95 %]", "threshold",
              "alerts", "false/sym-h [95 %]", "precision", "events (recall [95 %])", "med lead", "p10 lead");
  for (const Detector& det : dets) {
    const Columns m = columns_of(d, rows, det.all);
    double thr;
    if (o.threshold && std::string(det.name) == "model") {
      thr = *o.threshold;
    } else {
      const Columns f = columns_of(d, fit_rows, det.all);
      thr = at_budget(f.view(), o.max_false_per_symbol_hour * fit_hours, cooldown_ns).threshold;
    }
    const OperatingIntervals r = operating_intervals(m.view(), thr, cooldown_ns, d.stride_s, block_ns, o.reps);
    std::printf("%-8s %8s %-22s %10s %6lld %-18s %9s %-24s %9s %8s\n", det.name, cell(r.roc_auc.value, "%.4f").c_str(),
                with_interval(r.pr_auc, "%.3f").c_str(), cell(r.threshold, "%.4g").c_str(), (long long)r.alerts,
                with_interval(r.false_alerts_per_symbol_hour, "%.2f").c_str(), cell(r.precision.value, "%.3f").c_str(),
                (std::to_string(r.events_detected) + "/" + std::to_string(r.events) + " (" +
                 with_interval(r.recall, "%.2f") + ")")
                    .c_str(),
                cell(r.median_lead_s.value, "%.1f").c_str(), cell(r.p10_lead_s, "%.1f").c_str());
    nlohmann::json out = operating_json(r);
    // The fields of earlier versions, kept for scripts that read them.
    out["events_detected"] = r.events_detected;
    out["recall"] = num(r.recall.value);
    out["precision"] = num(r.precision.value);
    out["false_alerts_per_symbol_hour"] = num(r.false_alerts_per_symbol_hour.value);
    out["median_lead_s"] = num(r.median_lead_s.value);
    out["roc_auc"] = num(r.roc_auc.value);
    out["pr_auc"] = num(r.pr_auc.value);
    out["intervals"] = {{"pr_auc", interval_json(r.pr_auc)},
                        {"roc_auc", interval_json(r.roc_auc)},
                        {"recall", interval_json(r.recall)},
                        {"precision", interval_json(r.precision)},
                        {"false_alerts_per_symbol_hour", interval_json(r.false_alerts_per_symbol_hour)},
                        {"median_lead_s", interval_json(r.median_lead_s)}};
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : pr_curve(m.score, m.label)) curve.push_back({p.threshold, p.precision, p.recall});
    out["pr_curve"] = {{"columns", {"threshold", "precision", "recall"}}, {"points", curve}};
    // Per symbol, at the same threshold.
    for (size_t s = 0; s < names.size(); ++s) {
      const Columns ms = columns_of(d, rows, det.all, [&](size_t i) { return d.symbol.as<int32_t>()[i] == int32_t(s); });
      if (ms.score.empty()) continue;
      out["symbols"][names[s].get<std::string>()] =
          operating_json(operating_intervals(ms.view(), thr, cooldown_ns, d.stride_s, block_ns, o.reps));
    }
    j["detectors"][det.name] = out;
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
    if (!f) return fail("cannot write " + o.json);
  }
  return 0;
}

EvalCommand::EvalCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("eval",
                            "score a model on an exported data set, next to the rules, z-score, ret60 and volume_z baselines");
  cmd_->add_option("--model", opts_.model, "M.onnx (built with the CPU engine) or M.plan")->required();
  cmd_->add_option("--data", opts_.data, "a `ticksentry features --export` directory")->required();
  cmd_->add_option("--split", opts_.split, "test (default), validation, train or all (70/15/15 by time)");
  cmd_->add_option("--task", opts_.task, "any (default: labels.npy), detect or forecast (docs/labels.md)");
  cmd_->add_option("--json", opts_.json, "write the metrics and PR curves as JSON");
  cmd_->add_option("--batch", opts_.batch, "windows per engine call (default 256)");
  cmd_->add_option("--false-per-hour", opts_.max_false_per_symbol_hour, "alert budget, false alerts per symbol-hour (default 1)");
  cmd_->add_option("--fit-on", opts_.fit_on,
                   "where each detector's budget threshold is fitted: split (the measured rows, default) or validation "
                   "(the protocol: fitted on validation, applied unchanged to --split)");
  cmd_->add_option("--threshold", threshold_arg_, "the model's threshold, e.g. the registry's operating point (not fitted)");
  cmd_->add_option("--reps", opts_.reps, "block-bootstrap replicates per interval (default 100; 0: no intervals)");
  cmd_->add_option("--block-s", opts_.block_s, "bootstrap block length in seconds (default 300)");
}

std::optional<int> EvalCommand::run() const {
  if (!cmd_->parsed()) return std::nullopt;
  EvalOptions o = opts_;
  if (cmd_->count("--threshold") > 0) o.threshold = threshold_arg_;
  return command_eval(o);
}

}  // namespace ts
