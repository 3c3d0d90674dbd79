#include "app/eval_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>

#include "engine/engine.h"
#include "engine/npy.h"

namespace ts {

namespace {

namespace fs = std::filesystem;
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

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

int fail(const std::string& msg) {
  std::fprintf(stderr, "ticksentry eval: %s\n", msg.c_str());
  return 2;
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

BudgetResult alerts_at(const EvalWindows& w, double t, int64_t cooldown_ns) {
  BudgetResult r;
  r.threshold = t;
  int32_t max_sym = 0;
  for (int32_t s : w.symbol) max_sym = std::max(max_sym, s);
  std::vector<int64_t> last(size_t(max_sym) + 1, INT64_MIN);
  std::map<std::pair<int32_t, int64_t>, int64_t> first_hit;  // event → end of its first window >= t
  for (size_t i = 0; i < w.score.size(); ++i) {
    const bool hit = double(w.score[i]) >= t;
    if (w.label[i]) {
      auto [it, fresh] = first_hit.try_emplace({w.symbol[i], w.event_ts_ns[i]}, INT64_MIN);
      if (hit && it->second == INT64_MIN) it->second = w.end_ts_ns[i];
    }
    if (!hit) continue;
    int64_t& l = last[size_t(w.symbol[i])];
    if (l != INT64_MIN && w.end_ts_ns[i] - l < cooldown_ns) continue;
    l = w.end_ts_ns[i];
    ++r.alerts;
    r.false_alerts += w.label[i] == 0;
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

namespace {

// The data set of a `features --export` directory, checked for consistency.
struct Dataset {
  nlohmann::json manifest;
  engine::HostTensor windows, labels, symbol, end_ts, event_ts, rule, zscore;
  int64_t n = 0, t = 0, f = 0;
};

Result<Dataset> load_dataset(const std::string& dir) {
  Dataset d;
  const fs::path p(dir);
  if (!fs::is_directory(p)) return Status(StatusCode::kNotFound, "--data " + dir + ": not a directory");
  {
    std::ifstream f(p / "manifest.json");
    if (!f) return Status(StatusCode::kNotFound, "--data " + dir + ": no manifest.json (not a `ticksentry features --export` directory)");
    try {
      d.manifest = nlohmann::json::parse(f);
      if (d.manifest.at("format_version").get<int>() != 1) return Status(StatusCode::kUnsupported, "manifest.json: format_version is not 1");
      (void)d.manifest.at("time_range_ns").at(1).get<int64_t>();
      (void)d.manifest.at("label").at("horizon_s").get<double>();
      (void)d.manifest.at("stride").get<int64_t>();
    } catch (const std::exception& e) {
      return Status(StatusCode::kParseError, (p / "manifest.json").string() + ": " + e.what());
    }
  }
  struct Want {
    const char* file;
    engine::HostTensor* out;
    engine::DType dtype;
    size_t rank;
  };
  const Want wants[] = {{"windows.npy", &d.windows, engine::DType::kF32, 3}, {"labels.npy", &d.labels, engine::DType::kU8, 1},
                        {"symbol.npy", &d.symbol, engine::DType::kI32, 1},   {"end_ts_ns.npy", &d.end_ts, engine::DType::kI64, 1},
                        {"event_ts_ns.npy", &d.event_ts, engine::DType::kI64, 1}, {"rule_score.npy", &d.rule, engine::DType::kF32, 1},
                        {"zscore.npy", &d.zscore, engine::DType::kF32, 1}};
  for (const Want& w : wants) {
    auto t = engine::npy_read((p / w.file).string());
    if (!t) return t.status();
    if (t.value().dtype != w.dtype || t.value().dims.size() != w.rank) {
      return Status(StatusCode::kInvalidArgument, (p / w.file).string() + ": expected " + engine::dtype_name(w.dtype) + " of rank " +
                                                      std::to_string(w.rank) + ", got " + engine::dtype_name(t.value().dtype) +
                                                      " of rank " + std::to_string(t.value().dims.size()));
    }
    *w.out = std::move(t).value();
  }
  d.n = d.windows.dims[0];
  d.t = d.windows.dims[1];
  d.f = d.windows.dims[2];
  for (const Want& w : wants) {
    if (w.out->dims[0] != d.n) {
      return Status(StatusCode::kInvalidArgument, std::string(w.file) + " has " + std::to_string(w.out->dims[0]) +
                                                      " rows, windows.npy " + std::to_string(d.n) + ": not one data set");
    }
  }
  const int64_t symbols = int64_t(d.manifest.value("symbols", nlohmann::json::array()).size());
  for (int64_t i = 0; i < d.n; ++i) {
    const int32_t s = d.symbol.as<int32_t>()[i];
    if (s < 0 || s >= symbols) return Status(StatusCode::kInvalidArgument, "symbol.npy: index " + std::to_string(s) + " not in manifest symbols");
    if (i > 0 && d.end_ts.as<int64_t>()[i] < d.end_ts.as<int64_t>()[i - 1])
      return Status(StatusCode::kInvalidArgument, "end_ts_ns.npy: rows are not in time order (row " + std::to_string(i) + ")");
  }
  return d;
}

// Scores `rows` of the data set with the model; one probability per row.
Result<std::vector<float>> score_model(const EvalOptions& o, const Dataset& d, const std::vector<size_t>& rows) {
  std::shared_ptr<engine::Engine> eng;
  const bool onnx = fs::path(o.model).extension() == ".onnx";
  if (onnx) {
    engine::BuildOptions bo;
    bo.time_tactics = false;  // eval needs the scores, not the fastest tactic
    engine::OptimizationProfile prof;
    prof.inputs["x"] = engine::ShapeRange{{1, d.t, d.f}, {o.batch, d.t, d.f}, {o.batch, d.t, d.f}};
    bo.profiles.push_back(prof);
    auto plan = engine::build_file(o.model, bo);
    if (!plan) return plan.status().with_context("building " + o.model);
    auto e = engine::Engine::load(plan.value());
    if (!e) return e.status().with_context("loading the plan built from " + o.model);
    eng = e.value();
  } else {
    auto e = engine::Engine::load_file(o.model);
    if (!e) return e.status().with_context("loading " + o.model);
    eng = e.value();
  }
  if (eng->inputs().size() != 1 || eng->inputs()[0].shape.size() != 3) {
    return Status(StatusCode::kInvalidArgument, o.model + ": expected one input x [batch, T, F]");
  }
  const auto& in_shape = eng->inputs()[0].shape;
  if (in_shape[2].is_known() && in_shape[2].value != d.f) {
    return Status(StatusCode::kInvalidArgument, o.model + ": model takes " + std::to_string(in_shape[2].value) +
                                                    " features, the data set has " + std::to_string(d.f));
  }
  if (in_shape[1].is_known() && in_shape[1].value != d.t) {
    return Status(StatusCode::kInvalidArgument, o.model + ": model takes windows of " + std::to_string(in_shape[1].value) +
                                                    " rows, the data set has " + std::to_string(d.t));
  }
  size_t out_index = 0;
  for (size_t i = 0; i < eng->outputs().size(); ++i) {
    if (eng->outputs()[i].name == "prob") out_index = i;
  }
  int64_t batch = o.batch;
  for (const auto& p : eng->profiles()) {
    auto it = p.inputs.find(eng->inputs()[0].name);
    if (it != p.inputs.end() && it->second.max.size() == 3) batch = std::min(batch, it->second.max[0]);
  }
  batch = std::max<int64_t>(batch, 1);
  auto ctx = eng->create_context();
  if (!ctx) return ctx.status();
  const size_t row_floats = size_t(d.t * d.f);
  std::vector<float> out;
  out.reserve(rows.size());
  for (size_t begin = 0; begin < rows.size(); begin += size_t(batch)) {
    const int64_t b = std::min<int64_t>(batch, int64_t(rows.size() - begin));
    auto x = engine::HostTensor::zeros(engine::DType::kF32, {b, d.t, d.f});
    for (int64_t k = 0; k < b; ++k) {
      std::copy_n(d.windows.as<float>() + rows[begin + size_t(k)] * row_floats, row_floats, x.as<float>() + size_t(k) * row_floats);
    }
    std::vector<engine::HostTensor> outs;
    for (const auto& ob : eng->outputs()) {
      std::vector<int64_t> dims;
      for (size_t k = 0; k < ob.shape.size(); ++k) dims.push_back(ob.shape[k].is_known() ? ob.shape[k].value : (k == 0 ? b : d.t));
      outs.push_back(engine::HostTensor::zeros(ob.dtype, dims));
    }
    std::vector<engine::TensorView> in_views{x.view()}, out_views;
    for (auto& t : outs) out_views.push_back(t.view());
    if (Status st = ctx.value()->execute(in_views, out_views); !st.is_ok()) return st.with_context("running " + o.model);
    const auto& v = out_views[out_index];
    int64_t numel = 1;
    for (int64_t dim : v.dims) numel *= dim;
    if (v.dtype != engine::DType::kF32 || numel != b) {
      return Status(StatusCode::kInvalidArgument, o.model + ": output " + eng->outputs()[out_index].name +
                                                      " must be float32 [batch, 1] (a probability per window)");
    }
    const float* p = static_cast<const float*>(v.data);
    for (int64_t k = 0; k < b; ++k) {
      if (!std::isfinite(p[k])) return Status(StatusCode::kInvalidArgument, o.model + ": output is not finite (NaN or inf)");
      out.push_back(p[k]);
    }
  }
  return out;
}

}  // namespace

int command_eval(const EvalOptions& o) {
  std::optional<Split> only;
  if (o.split == "train") only = Split::kTrain;
  else if (o.split == "validation") only = Split::kValidation;
  else if (o.split == "test") only = Split::kTest;
  else if (o.split != "all") return fail("--split must be test, validation, train or all (got \"" + o.split + "\")");
  if (o.model.empty()) return fail("--model is required");
  if (!fs::exists(o.model)) return fail("--model " + o.model + ": file not found");
  if (o.batch < 1 || o.batch > 65536) return fail("--batch must be in 1..65536");
  auto ds = load_dataset(o.data);
  if (!ds) return fail(ds.status().message());
  const Dataset& d = ds.value();
  const int64_t first = d.manifest["time_range_ns"][0].get<int64_t>(), last = d.manifest["time_range_ns"][1].get<int64_t>();
  const double horizon_s = d.manifest["label"]["horizon_s"].get<double>();
  const double stride_s = double(d.manifest["stride"].get<int64_t>()) * double(d.manifest.value("row_interval_ns", int64_t(1'000'000'000))) * 1e-9;

  std::vector<size_t> rows;
  for (int64_t i = 0; i < d.n; ++i) {
    if (!only || split_of(d.end_ts.as<int64_t>()[i], first, last) == *only) rows.push_back(size_t(i));
  }
  if (rows.empty()) return fail("split " + o.split + " of " + o.data + " has no windows");

  const auto t0 = std::chrono::steady_clock::now();
  auto model_scores = score_model(o, d, rows);
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
  const double symbol_hours = double(rows.size()) * stride_s / 3600.0;
  const double max_false = o.max_false_per_symbol_hour * symbol_hours;
  const int64_t cooldown_ns = int64_t(std::llround(horizon_s * 1e9));

  nlohmann::json j;
  j["data"] = o.data;
  j["model"] = o.model;
  j["split"] = o.split;
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
  cmd_->add_option("--json", opts_.json, "write the metrics and PR curves as JSON");
  cmd_->add_option("--batch", opts_.batch, "windows per engine call (default 256)");
  cmd_->add_option("--false-per-hour", opts_.max_false_per_symbol_hour, "alert budget, false alerts per symbol-hour (default 1)");
}

std::optional<int> EvalCommand::run() const {
  if (!cmd_->parsed()) return std::nullopt;
  return command_eval(opts_);
}

}  // namespace ts
