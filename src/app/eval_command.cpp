#include "app/eval_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "serve/eval_dataset.h"

namespace ts {

namespace {

namespace fs = std::filesystem;

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

int fail(const std::string& msg) {
  std::fprintf(stderr, "ticksentry eval: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int command_eval(const EvalOptions& o) {
  auto only = parse_split(o.split);
  if (!only) return fail(only.status().message());
  if (o.model.empty()) return fail("--model is required");
  if (!fs::exists(o.model)) return fail("--model " + o.model + ": file not found");
  if (o.batch < 1 || o.batch > 65536) return fail("--batch must be in 1..65536");
  auto ds = load_eval_dataset(o.data, o.task);
  if (!ds) return fail(ds.status().message());
  const EvalDataset& d = ds.value();
  const double horizon_s = d.horizon_s;
  const std::vector<size_t> rows = split_rows(d, only.value());
  if (rows.empty()) return fail("split " + o.split + " of " + o.data + " has no windows");

  const auto t0 = std::chrono::steady_clock::now();
  auto eng = load_window_model(o.model, d.t, d.f, o.batch);
  if (!eng) return fail(eng.status().message());
  auto model_scores = score_windows(*eng.value(), d, rows, o.batch, o.model);
  if (!model_scores) return fail(model_scores.status().message());
  const double model_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<uint8_t> label;
  std::vector<int32_t> symbol;
  std::vector<int64_t> end_ts, event_ts;
  std::vector<float> rule, zscore;
  for (size_t i : rows) {
    label.push_back(d.labels.as<uint8_t>()[i]);
    symbol.push_back(d.symbol.as<int32_t>()[i]);
    end_ts.push_back(d.end_ts.as<int64_t>()[i]);
    event_ts.push_back(d.event_ts.as<int64_t>()[i]);
    rule.push_back(d.rule.as<float>()[i]);
    zscore.push_back(d.zscore.as<float>()[i]);
  }
  int64_t positives = 0;
  for (uint8_t l : label) positives += l;
  // Symbol-hours of the split: each window stands for `stride` rows of its symbol's data.
  const double symbol_hours = double(rows.size()) * d.stride_s / 3600.0;
  const double max_false = o.max_false_per_symbol_hour * symbol_hours;
  const int64_t cooldown_ns = int64_t(std::llround(horizon_s * 1e9));

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
  j["model_seconds"] = model_s;
  std::printf("eval %s on %s, split %s: %zu windows, %lld positive (%.2f%%), %.2f symbol-hours\n", o.model.c_str(),
              o.data.c_str(), o.split.c_str(), rows.size(), (long long)positives, 100.0 * double(positives) / double(rows.size()),
              symbol_hours);
  std::printf("alert budget: <= %.1f false alerts per symbol-hour (%.1f in all), cooldown %.0f s\n\n",
              o.max_false_per_symbol_hour, max_false, horizon_s);
  std::printf("%-8s %8s %8s %10s %7s %6s %9s %14s %12s\n", "detector", "ROC-AUC", "PR-AUC", "threshold", "alerts", "false",
              "precision", "recall(events)", "median lead s");
  auto cell = [](double v, const char* fmt) {
    char b[32];
    if (!std::isfinite(v)) return std::string("-");
    std::snprintf(b, sizeof b, fmt, v);
    return std::string(b);
  };
  const std::pair<const char*, const std::vector<float>*> detectors[] = {
      {"model", &model_scores.value()}, {"rules", &rule}, {"zscore", &zscore}};
  for (const auto& [name, scores] : detectors) {
    const EvalWindows w{*scores, label, symbol, end_ts, event_ts};
    const double auc = roc_auc(*scores, label), ap = average_precision(*scores, label);
    const BudgetResult b = at_budget(w, max_false, cooldown_ns);
    std::printf("%-8s %8s %8s %10s %7lld %6lld %9s %8lld/%-5lld %12s\n", name, cell(auc, "%.4f").c_str(), cell(ap, "%.4f").c_str(),
                cell(b.threshold, "%.4g").c_str(), (long long)b.alerts, (long long)b.false_alerts, cell(b.precision, "%.3f").c_str(),
                (long long)b.events_detected, (long long)b.events, cell(b.median_lead_s, "%.1f").c_str());
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : pr_curve(*scores, label)) curve.push_back({p.threshold, p.precision, p.recall});
    j["detectors"][name] = {{"roc_auc", num(auc)},
                            {"pr_auc", num(ap)},
                            {"threshold", num(b.threshold)},
                            {"alerts", b.alerts},
                            {"false_alerts", b.false_alerts},
                            {"false_alerts_per_symbol_hour", symbol_hours > 0 ? double(b.false_alerts) / symbol_hours : 0.0},
                            {"precision", num(b.precision)},
                            {"recall", num(b.recall)},
                            {"events", b.events},
                            {"events_detected", b.events_detected},
                            {"median_lead_s", num(b.median_lead_s)},
                            {"pr_curve", {{"columns", {"threshold", "precision", "recall"}}, {"points", curve}}}};
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
    if (!f) return fail("cannot write " + o.json);
  }
  return 0;
}

EvalCommand::EvalCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("eval", "score a model on an exported data set, next to the rules and a z-score baseline");
  cmd_->add_option("--model", opts_.model, "M.onnx (built with the CPU engine) or M.plan")->required();
  cmd_->add_option("--data", opts_.data, "a `ticksentry features --export` directory")->required();
  cmd_->add_option("--split", opts_.split, "test (default), validation, train or all (70/15/15 by time)");
  cmd_->add_option("--task", opts_.task, "any (default: labels.npy), detect or forecast (docs/labels.md)");
  cmd_->add_option("--json", opts_.json, "write the metrics and PR curves as JSON");
  cmd_->add_option("--batch", opts_.batch, "windows per engine call (default 256)");
  cmd_->add_option("--false-per-hour", opts_.max_false_per_symbol_hour, "alert budget, false alerts per symbol-hour (default 1)");
}

std::optional<int> EvalCommand::run() const {
  if (!cmd_->parsed()) return std::nullopt;
  return command_eval(opts_);
}

}  // namespace ts
