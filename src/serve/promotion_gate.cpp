#include "serve/promotion_gate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "serve/eval_dataset.h"
#include "serve/eval_interval.h"
#include "serve/eval_metrics.h"

namespace ts::serve {

namespace {

constexpr double kFp32ToleranceAbs = 1e-4;
constexpr double kReducedToleranceAbs = 1e-2;  // fp16, bf16, int8, tf32

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// kUnsupported marks a refusal (the admin API answers 409), as opposed to a bad request.
Status refused(const std::string& why) { return Status(StatusCode::kUnsupported, "refused: " + why); }

nlohmann::ordered_json num(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); }

std::string with_interval(double v, double lo, double hi) {
  return fmt("%.4f", v) + (std::isfinite(lo) ? " [" + fmt("%.4f", lo) + ", " + fmt("%.4f", hi) + "]" : " [no interval]");
}

struct Baseline {
  std::string name;
  double pr_auc = 0;
};

// The baselines' PR-AUC on `rows`; the best of them.
Baseline best_baseline(const EvalDataset& d, const std::vector<size_t>& rows, const std::vector<uint8_t>& labels) {
  std::vector<float> rule, zscore, win;
  win.reserve(rows.size() * size_t(d.t * d.f));
  const float* w = d.windows.as<float>();
  for (size_t r : rows) {
    rule.push_back(d.rule.as<float>()[r]);
    zscore.push_back(d.zscore.as<float>()[r]);
    win.insert(win.end(), w + r * size_t(d.t * d.f), w + (r + 1) * size_t(d.t * d.f));
  }
  Baseline best{"", -1};
  auto consider = [&](const char* name, const std::vector<float>& s) {
    const double ap = average_precision(s, labels);
    if (std::isfinite(ap) && ap > best.pr_auc) best = {name, ap};
  };
  consider("rules", rule);
  consider("zscore", zscore);
  consider("ret60", baseline_ret60(win, d.t, d.f));
  consider("volume_z", baseline_volume_z(win, d.t, d.f));
  return best;
}

std::vector<int64_t> end_ts_of(const EvalDataset& d, const std::vector<size_t>& rows) {
  std::vector<int64_t> out;
  out.reserve(rows.size());
  for (size_t r : rows) out.push_back(d.end_ts.as<int64_t>()[r]);
  return out;
}

}  // namespace

double gate_tolerance_abs(const engine::Engine& eng) {
  const std::string d = eng.describe();
  const std::string head = d.substr(0, d.find('\n'));
  for (const char* reduced : {"precision fp16", "precision bf16", "precision int8", "tf32 allowed"}) {
    if (head.find(reduced) != std::string::npos) return kReducedToleranceAbs;
  }
  return kFp32ToleranceAbs;
}

nlohmann::ordered_json GateReport::to_json() const {
  nlohmann::ordered_json j = {{"candidate", candidate}, {"engine", engine_source}, {"data", data_dir},
                              {"split", split},         {"windows", windows},      {"positives", positives},
                              {"warmup_ms", warmup_ms}, {"max_abs_diff", max_abs_diff},
                              {"tolerance_abs", tolerance_abs}, {"pr_auc", num(pr_auc)}};
  j["pr_auc_lo"] = num(pr_auc_lo);
  j["pr_auc_hi"] = num(pr_auc_hi);
  if (!prod.empty()) j["prod"] = prod;
  if (prod_pr_auc_lo) j["prod_pr_auc_lo"] = num(*prod_pr_auc_lo);
  if (prod_pr_auc_hi) j["prod_pr_auc_hi"] = num(*prod_pr_auc_hi);
  if (!baseline.empty()) j["baseline"] = baseline;
  if (baseline_pr_auc) j["baseline_pr_auc"] = num(*baseline_pr_auc);
  if (prod_pr_auc) j["prod_pr_auc"] = num(*prod_pr_auc);
  if (floor) j["floor"] = num(*floor);
  return j;
}

Result<GateResult> run_promotion_gate(const GateModel& candidate, const std::optional<GateModel>& prod,
                                      const GateOptions& o) {
  if (o.data_dir.empty()) return Status(StatusCode::kInvalidArgument, "the gate needs held windows: --data DIR is required");
  if (o.batch < 1 || o.batch > 65536) return Status(StatusCode::kInvalidArgument, "batch must be in 1..65536");
  auto split = parse_split(o.split);
  if (!split) return split.status();
  if (split.value() == Split::kTest) {
    return Status(StatusCode::kInvalidArgument,
                  "the gate never reads the test split (it is read once per release, to report; docs/labels.md): "
                  "gate on validation or a dedicated gate data set");
  }
  auto ds = load_eval_dataset(o.data_dir);
  if (!ds) return ds.status();
  const EvalDataset& d = ds.value();
  const std::vector<size_t> rows = split_rows(d, split.value());
  if (rows.empty()) return Status(StatusCode::kInvalidArgument, "split " + o.split + " of " + o.data_dir + " has no windows");
  const std::vector<uint8_t> labels = labels_of(d, rows);

  GateResult out;
  GateReport& r = out.report;
  r.candidate = candidate.label;
  r.data_dir = o.data_dir;
  r.split = o.split;
  r.windows = int64_t(rows.size());
  r.positives = std::count(labels.begin(), labels.end(), uint8_t(1));

  // 1. The engine to serve: the plan, else a build for the backend.
  const bool from_plan = !candidate.plan_path.empty();
  if (from_plan) {
    auto e = engine::Engine::load_file(candidate.plan_path);
    if (!e) return refused(e.status().with_context("loading plan " + candidate.plan_path).message());
    out.engine = e.value();
    r.engine_source = "plan " + candidate.plan_path;
  } else {
    auto e = build_window_engine(candidate.onnx_path, d.t, d.f, o.batch, o.backend, o.precision, o.time_tactics);
    if (!e) return refused(e.status().message());
    out.engine = e.value();
    r.engine_source = "built from " + candidate.onnx_path + " (" + o.backend + ", " + engine::precision_name(o.precision) + ")";
  }
  if (out.engine->backend() != o.backend) {
    return refused(r.engine_source + " is for backend " + out.engine->backend() + ", not " + o.backend);
  }

  // 2. Warm-up on real windows (first runs pay for allocation, page faults, lazy init).
  const std::vector<size_t> warm(rows.begin(), rows.begin() + std::min<size_t>(rows.size(), size_t(o.batch)));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.warmup_runs; ++i) {
    auto s = score_windows(*out.engine, d, warm, o.batch, candidate.label);
    if (!s) return refused(s.status().message());
  }
  r.warmup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // 3. Outputs against the CPU FP32 reference of the same ONNX.
  auto scores = score_windows(*out.engine, d, rows, o.batch, candidate.label);
  if (!scores) return refused(scores.status().message());
  r.tolerance_abs = gate_tolerance_abs(*out.engine);
  // Built here by the CPU backend in FP32 without timing: the same build as the reference.
  const bool is_reference = !from_plan && o.backend == "cpu" && o.precision == engine::Precision::kFP32 && !o.time_tactics;
  if (!is_reference) {
    auto ref_engine = build_window_engine(candidate.onnx_path, d.t, d.f, o.batch);
    if (!ref_engine) return ref_engine.status().with_context("the CPU FP32 reference");
    auto ref = score_windows(*ref_engine.value(), d, rows, o.batch, candidate.label + " (reference)");
    if (!ref) return ref.status();
    for (size_t i = 0; i < rows.size(); ++i) {
      r.max_abs_diff = std::max(r.max_abs_diff, double(std::fabs(scores.value()[i] - ref.value()[i])));
    }
    if (!(r.max_abs_diff <= r.tolerance_abs)) {
      return refused(candidate.label + "'s outputs differ from its ONNX run by the CPU FP32 engine by up to " +
                     fmt("%.3g", r.max_abs_diff) + " on " + std::to_string(r.windows) + " " + o.split +
                     " windows (tolerance " + fmt("%.0e", r.tolerance_abs) + ")");
    }
  }

  // 4. Accuracy against prod and the best baseline on the same windows, with intervals.
  const std::vector<int64_t> ends = end_ts_of(d, rows);
  const Interval cand = pr_auc_interval(scores.value(), labels, ends, int64_t(300) * 1'000'000'000, o.bootstrap_reps);
  r.pr_auc = cand.value;
  r.pr_auc_lo = cand.lo;
  r.pr_auc_hi = cand.hi;
  const std::string on = std::to_string(r.windows) + " " + o.split + " windows of " + o.data_dir;
  const std::string cand_s = "PR-AUC " + with_interval(cand.value, cand.lo, cand.hi) + " of " + candidate.label;
  if (o.check_accuracy && (prod || o.check_baseline)) {
    if (r.positives == 0) return refused("no positive window among the " + on + ": PR-AUC is undefined, nothing to gate on");
    std::string prod_s = "no prod to compare with", base_s = "no baseline checked";
    bool below_prod = false, below_base = false;
    if (prod) {
      auto prod_engine = build_window_engine(prod->onnx_path, d.t, d.f, o.batch);
      if (!prod_engine) return prod_engine.status().with_context("scoring prod " + prod->label);
      auto prod_scores = score_windows(*prod_engine.value(), d, rows, o.batch, prod->label);
      if (!prod_scores) return prod_scores.status().with_context("scoring prod");
      const Interval p = pr_auc_interval(prod_scores.value(), labels, ends, int64_t(300) * 1'000'000'000, o.bootstrap_reps);
      r.prod = prod->label;
      r.prod_pr_auc = p.value;
      r.prod_pr_auc_lo = p.lo;
      r.prod_pr_auc_hi = p.hi;
      r.floor = p.value * (1.0 - o.max_relative_drop);
      const double drop = p.value > 0 ? (p.value - r.pr_auc) / p.value : 0.0;
      below_prod = r.pr_auc < *r.floor;
      prod_s = "prod " + prod->label + " " + with_interval(p.value, p.lo, p.hi) + " (floor " + fmt("%.4f", *r.floor) +
               ", allowed drop " + fmt("%.1f", 100 * o.max_relative_drop) + " %" +
               (below_prod ? "; " + fmt("%.2f", 100 * drop) + " % below it" : "") + ")";
    }
    if (o.check_baseline) {
      const Baseline b = best_baseline(d, rows, labels);
      if (!b.name.empty()) {
        r.baseline = b.name;
        r.baseline_pr_auc = b.pr_auc;
        below_base = r.pr_auc < b.pr_auc;
        base_s = "best baseline " + b.name + " " + fmt("%.4f", b.pr_auc) +
                 (below_base ? " (above the candidate's " + fmt("%.4f", r.pr_auc) + ")" : "");
      }
    }
    const std::string both = cand_s + " on " + on + " vs " + prod_s + " and " + base_s;
    if (below_prod || below_base) return refused(both);
    r.summary = both;
  } else {
    r.summary = cand_s + " on " + on + (o.check_accuracy ? " (no prod to compare with)" : " (outputs checked, no accuracy gate)");
  }
  r.summary += "; outputs within " + fmt("%.0e", r.tolerance_abs) + " of the CPU FP32 reference (max " +
               fmt("%.2g", r.max_abs_diff) + (is_reference ? ", the engine is the reference" : "") + ")";
  return out;
}

}  // namespace ts::serve
