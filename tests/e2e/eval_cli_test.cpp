// `ticksentry eval` as a user runs it: a tiny ONNX model equal to the z-score baseline gets the
// baseline's metrics, with the report's intervals, per symbol and at the protocol's threshold;
// its plan the same scores, and bad arguments are clear errors (exit 2).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "dataset_test_util.h"
#include "test_data.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using testing::read_json;
using testing::run_bin;

// Each test exports its own data set into its own folder: ctest runs the tests of this file as
// parallel processes, and a shared folder would be wiped by one while another reads it.
class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir(std::string("dataset_eval_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    const std::string cmd = "/usr/bin/python3 " + std::string(TICKSENTRY_SOURCE_DIR) + "/tests/e2e/make_zscore_model.py " +
                            (dir_ / "z.onnx").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto o = run_bin({"features", "--export", "data", "--format", "sim", "--symbols", "20", "--sim-seconds", "1200",
                      "--seed", "11", "--window", "30"},
                     dir_);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  fs::path dir_;
};

TEST_F(EvalCli, ModelEqualToTheZScoreGetsItsMetrics) {
  auto o = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--split", "all", "--json", "eval.json"}, dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("zscore"), std::string::npos) << o.out;
  const auto j = read_json(dir_ / "eval.json");
  const auto m = read_json(dir_ / "data" / "manifest.json");
  EXPECT_EQ(j["windows"].get<int64_t>(), m["count"].get<int64_t>());
  EXPECT_EQ(j["positives"].get<int64_t>(), m["positives"].get<int64_t>());
  const auto& model = j["detectors"]["model"];
  const auto& z = j["detectors"]["zscore"];
  ASSERT_TRUE(model["roc_auc"].is_number()) << j.dump();
  // A monotone function of the z-score ranks the windows as the z-score does.
  EXPECT_NEAR(model["roc_auc"].get<double>(), z["roc_auc"].get<double>(), 2e-3);
  EXPECT_NEAR(model["pr_auc"].get<double>(), z["pr_auc"].get<double>(), 2e-3);
  EXPECT_EQ(model["events"], z["events"]);
  for (const char* det : {"model", "rules", "zscore"}) {
    const auto& r = j["detectors"][det];
    EXPECT_LE(r["false_alerts"].get<double>(), j["budget"]["max_false_alerts"].get<double>()) << det;
    EXPECT_GT(r["pr_curve"]["points"].size(), 1u) << det;
    EXPECT_TRUE(r["roc_auc"].is_number()) << det;
  }
  // The default split is the last 15 % of the time range.
  o = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--json", "test.json"}, dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto t = read_json(dir_ / "test.json");
  EXPECT_EQ(t["split"], "test");
  EXPECT_NEAR(t["windows"].get<double>(), 0.15 * j["windows"].get<double>(), 0.03 * j["windows"].get<double>());
}

// The two tasks of docs/labels.md are measured on their own labels: detection (onset in the last
// seconds: lead <= 0) and forecast (onset ahead: lead > 0); labels.npy is their union.
TEST_F(EvalCli, EachTaskIsMeasuredOnItsOwnLabels) {
  nlohmann::json r[3];
  const char* tasks[] = {"any", "detect", "forecast"};
  for (int k = 0; k < 3; ++k) {
    const std::string out = std::string(tasks[k]) + ".json";
    auto o = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--split", "all", "--task", tasks[k], "--json", out},
                     dir_);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    r[k] = read_json(dir_ / out);
    EXPECT_EQ(r[k]["task"], tasks[k]);
  }
  const int64_t any = r[0]["positives"], det = r[1]["positives"], fc = r[2]["positives"];
  EXPECT_GT(det, 0);
  EXPECT_GT(fc, det) << "H = 60 s ahead against 10 s behind";
  EXPECT_LE(std::max(det, fc), any);
  EXPECT_LE(any, det + fc);
  const auto& d = r[1]["detectors"]["zscore"];
  const auto& f = r[2]["detectors"]["zscore"];
  if (d["median_lead_s"].is_number()) {
    EXPECT_LE(d["median_lead_s"].get<double>(), 0.0) << "detection comes after the onset";
  }
  if (f["median_lead_s"].is_number()) {
    EXPECT_GT(f["median_lead_s"].get<double>(), 0.0) << "forecast comes before it";
  }
}

TEST_F(EvalCli, PlanGivesTheSameScoresAsOnnx) {
  auto b = run_bin({"build", "--onnx", "z.onnx", "--saveEngine", "z.plan", "--minShapes", "x:1x30x20", "--maxShapes",
                    "x:64x30x20"},
                   dir_);
  ASSERT_EQ(b.exit_code, 0) << b.err << b.out;
  auto o1 = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--json", "onnx.json"}, dir_);
  auto o2 = run_bin({"eval", "--model", "z.plan", "--data", "data", "--json", "plan.json"}, dir_);
  ASSERT_EQ(o1.exit_code, 0) << o1.err;
  ASSERT_EQ(o2.exit_code, 0) << o2.err;
  const auto a = read_json(dir_ / "onnx.json"), p = read_json(dir_ / "plan.json");
  EXPECT_NEAR(a["detectors"]["model"]["roc_auc"].get<double>(), p["detectors"]["model"]["roc_auc"].get<double>(), 1e-6);
  EXPECT_EQ(a["detectors"]["model"]["alerts"], p["detectors"]["model"]["alerts"]);
}

// The metrics of models/REPORT.md for any model and data: every detector (the rules, the z-score,
// ret60, volume_z) and every symbol with 95 % block-bootstrap intervals and the p10 lead; the
// protocol's threshold (fitted on validation, applied unchanged to the measured split) or the
// model's as given (the registry's operating point).
TEST_F(EvalCli, ReportsTheReportsMetricsWithIntervalsPerSymbolAtTheProtocolsThreshold) {
  // The test split is the last 180 s of the 1,200 s: 20 s blocks give the bootstrap 9 of them.
  auto o = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--split", "test", "--fit-on", "validation", "--block-s",
                    "20", "--json", "t.json"},
                   dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("ret60"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("fitted on validation"), std::string::npos) << o.out;
  o = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--split", "validation", "--json", "v.json"}, dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto t = read_json(dir_ / "t.json");
  const auto v = read_json(dir_ / "v.json");
  const auto m = read_json(dir_ / "data" / "manifest.json");
  EXPECT_EQ(t["threshold_fitted_on"], "validation");
  EXPECT_EQ(v["threshold_fitted_on"], "validation");  // the measured split is validation there
  for (const char* det : {"model", "rules", "zscore", "ret60", "volume_z"}) {
    SCOPED_TRACE(det);
    const auto& r = t["detectors"][det];
    ASSERT_TRUE(r.is_object()) << t.dump();
    // The threshold is validation's: what eval fits when it measures validation itself.
    EXPECT_EQ(r["threshold"], v["detectors"][det]["threshold"]);
    for (const char* k : {"pr_auc", "roc_auc", "recall", "precision", "false_alerts_per_symbol_hour", "median_lead_s"}) {
      const auto& c = r["intervals"][k];
      ASSERT_TRUE(c.contains("value") && c.contains("lo") && c.contains("hi")) << k;
      if (c["lo"].is_number() && c["value"].is_number()) {
        EXPECT_LE(c["lo"].get<double>(), c["hi"].get<double>()) << k;
        EXPECT_GE(c["value"].get<double>(), c["lo"].get<double>() - 1e-9) << k;
        EXPECT_LE(c["value"].get<double>(), c["hi"].get<double>() + 1e-9) << k;
      }
    }
    if (r["p10_lead_s"].is_number()) EXPECT_LE(r["p10_lead_s"].get<double>(), r["median_lead_s"].get<double>());
    // Per symbol: every one named in the manifest, adding up to the whole split.
    int64_t events = 0, caught = 0, alerts = 0, false_alerts = 0;
    for (const auto& [name, s] : r["symbols"].items()) {
      const auto& names = m["symbols"];
      EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
      events += s["events"].get<int64_t>();
      caught += s["events_detected"].get<int64_t>();
      alerts += s["alerts"].get<int64_t>();
      false_alerts += s["false_alerts"].get<int64_t>();
    }
    EXPECT_EQ(events, r["events"].get<int64_t>());
    EXPECT_EQ(caught, r["events_detected"].get<int64_t>());
    EXPECT_EQ(alerts, r["alerts"].get<int64_t>());
    EXPECT_EQ(false_alerts, r["false_alerts"].get<int64_t>());
  }
  EXPECT_GT(t["detectors"]["model"]["events"].get<int64_t>(), 0) << "the sim data has events in its test split";
  EXPECT_TRUE(t["detectors"]["model"]["intervals"]["pr_auc"]["lo"].is_number()) << "9 blocks, 100 replicates: an interval";

  // The model's threshold as given (the registry's operating point): not fitted, not moved.
  o = run_bin({"eval", "--model", "z.onnx", "--data", "data", "--threshold", "1e9", "--reps", "0", "--json", "g.json"}, dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto g = read_json(dir_ / "g.json");
  EXPECT_EQ(g["detectors"]["model"]["threshold"].get<double>(), 1e9);
  EXPECT_EQ(g["detectors"]["model"]["alerts"].get<int64_t>(), 0);
  EXPECT_EQ(g["detectors"]["model"]["events_detected"].get<int64_t>(), 0);
  EXPECT_TRUE(g["detectors"]["model"]["intervals"]["pr_auc"]["lo"].is_null()) << "--reps 0: no interval";
}

TEST_F(EvalCli, BadArgumentsAreClearErrors) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  fs::create_directories(dir_ / "broken");
  fs::copy_file(dir_ / "data" / "manifest.json", dir_ / "broken" / "manifest.json", fs::copy_options::overwrite_existing);
  const Case cases[] = {
      {{"eval", "--model", "z.onnx", "--data", "nowhere"}, "nowhere"},
      {{"eval", "--model", "missing.onnx", "--data", "data"}, "missing.onnx"},
      {{"eval", "--model", "z.onnx", "--data", "data", "--split", "later"}, "--split"},
      {{"eval", "--model", "z.onnx", "--data", "broken"}, "windows.npy"},
      {{"eval", "--model", "data/labels.npy", "--data", "data"}, "data/labels.npy"},
      {{"eval", "--data", "data"}, "--model"},
      {{"eval", "--model", "z.onnx", "--data", "data", "--task", "later"}, "task"},
      {{"eval", "--model", "z.onnx", "--data", "data", "--fit-on", "test"}, "--fit-on"},
      {{"eval", "--model", "z.onnx", "--data", "data", "--reps", "-1"}, "--reps"},
      {{"eval", "--model", "z.onnx", "--data", "data", "--block-s", "0"}, "--block-s"},
  };
  for (const auto& c : cases) {
    auto o = run_bin(c.args, dir_);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(o.exit_code, 2) << joined << "\n" << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << joined << "\nstderr: " << o.err;
  }
}

}  // namespace
}  // namespace ts
