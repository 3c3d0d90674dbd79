// Model alerts end to end: `ticksentry replay` of a real LOBSTER day with the shipped model. The
// summary reports the model; every model alert is in the audit store with the exact window that
// fed it, and re-running the model on that window gives the probability the alert carries.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "audit/audit_store.h"
#include "engine/engine.h"
#include "features/feature_set.h"
#include "run_bin.h"
#include "serve_test_util.h"
#include "test_data.h"

namespace ts {
namespace {

using testing::run_bin;

const std::string kModel = std::string(TICKSENTRY_SOURCE_DIR) + "/models/default.onnx";

TEST(PipelineModel, ReplayRaisesModelAlertsWithTheirWindowsAudited) {
  auto dir = testing::scratch_dir("serve_pipeline_model");
  {
    std::ofstream cfg(dir / "model.toml");
    cfg << "[model]\npath = \"" << kModel << "\"\nthreshold = 0.3\nhysteresis = 0.05\ncooldown_s = 60\n"
        << "backend = \"cpu\"\n";
  }
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--config", "model.toml", "--no-stdout",
                    "--summary-json", "summary.json", "--audit-db", "audit.db", "--jsonl", "alerts.jsonl"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream sf(dir / "summary.json");
  const auto s = nlohmann::json::parse(sf);
  ASSERT_TRUE(s.contains("model")) << s.dump(2);
  const auto& m = s["model"];
  EXPECT_EQ(m["name"], "default");
  EXPECT_EQ(m["backend"], "cpu");
  // One request per completed feature row (1 s) of the day once 60 rows are there: thousands.
  EXPECT_GT(m["requests"].get<uint64_t>(), 5000u) << m.dump(2);
  // Unpaced replay is lossless: every window is scored, whatever the machine's speed.
  EXPECT_TRUE(m["drops"].empty()) << m["drops"].dump();
  EXPECT_EQ(m["results"].get<uint64_t>(), m["requests"].get<uint64_t>()) << "every request answered";
  EXPECT_EQ(m["failures"].get<uint64_t>(), 0u);
  EXPECT_GT(m["batches"].get<uint64_t>(), 0u);
  EXPECT_GT(m["inference_latency_us"]["p99"].get<double>(), 0.0);
  // Every scored window's event has a receive time: receive → score covers each result, and it
  // includes the inference.
  EXPECT_EQ(m["receive_to_score_us"]["count"].get<uint64_t>(), m["results"].get<uint64_t>());
  EXPECT_GE(m["receive_to_score_us"]["p50"].get<double>(), m["inference_latency_us"]["p50"].get<double>() * 0.99);
  ASSERT_TRUE(s["alerts"].contains("model")) << "threshold 0.3 on GOOG's day raises model alerts: " << s.dump(2);
  const uint64_t model_alerts = s["alerts"]["model"].get<uint64_t>();

  auto store = AuditStore::open((dir / "audit.db").string());
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  auto inputs = store.value()->model_inputs();
  ASSERT_TRUE(inputs.is_ok());
  ASSERT_EQ(inputs.value().size(), model_alerts) << "one audited window per model alert";
  AlertQuery q;
  q.type = "model";
  q.limit = 100000;
  auto alerts = store.value()->query(q);
  ASSERT_TRUE(alerts.is_ok());
  ASSERT_EQ(alerts.value().size(), model_alerts);

  // Re-score every audited window with the same model: the alert's probability comes back.
  engine::BuildOptions bo;
  bo.time_tactics = false;
  auto plan = engine::build_file(kModel, bo);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  auto eng = engine::Engine::load(plan.value());
  ASSERT_TRUE(eng.is_ok());
  auto ctx = eng.value()->create_context();
  ASSERT_TRUE(ctx.is_ok());
  for (const auto& in : inputs.value()) {
    ASSERT_EQ(in.rows, 60);
    ASSERT_EQ(in.cols, 20);
    ASSERT_EQ(in.window.size(), 1200u);
    EXPECT_EQ(in.model, "default");
    EXPECT_FALSE(in.shadow);
    EXPECT_GE(in.probability, 0.3);
    std::vector<float> w = in.window;
    float p = -1;
    engine::TensorView iv{engine::DType::kF32, {1, 60, 20}, w.data()};
    engine::TensorView ov{engine::DType::kF32, {1, 1}, &p};
    ASSERT_TRUE(ctx.value()->execute({&iv, 1}, {&ov, 1}).is_ok());
    EXPECT_NEAR(p, in.probability, 1e-5) << "alert " << in.alert_id;
  }
  // The JSONL record carries the model too.
  std::ifstream jf(dir / "alerts.jsonl");
  std::string line;
  uint64_t jsonl_model = 0;
  while (std::getline(jf, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "model") {
      ++jsonl_model;
      EXPECT_EQ(j["model"]["name"], "default");
      EXPECT_GE(j["model"]["probability"].get<double>(), 0.3);
    }
  }
  EXPECT_EQ(jsonl_model, model_alerts);
}

TEST(PipelineModel, ASymbolGroupsThresholdAndCooldownApplyToItsSymbols) {
  // The model says 0.3 with a 60 s cooldown (several alerts on GOOG's day, test above); GOOG's
  // group says 0.35 and a cooldown longer than the day: exactly one alert, judged at 0.35.
  auto dir = testing::scratch_dir("serve_pipeline_model_groups");
  {
    std::ofstream cfg(dir / "model.toml");
    cfg << "[model]\npath = \"" << kModel << "\"\nthreshold = 0.3\nhysteresis = 0.05\ncooldown_s = 60\n"
        << "backend = \"cpu\"\n"
        << "[[model.groups]]\nname = \"nyse\"\nsymbols = [\"*.N\"]\nthreshold = 0.99\n"
        << "[[model.groups]]\nname = \"goog\"\nsymbols = [\"GOO?\"]\nthreshold = 0.35\ncooldown_s = 100000\n";
  }
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--config", "model.toml", "--no-stdout",
                    "--summary-json", "summary.json", "--jsonl", "alerts.jsonl"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream jf(dir / "alerts.jsonl");
  std::string line;
  std::vector<nlohmann::json> model_alerts;
  while (std::getline(jf, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "model") model_alerts.push_back(j);
  }
  ASSERT_EQ(model_alerts.size(), 1u) << "the group's cooldown outlasts the day";
  EXPECT_NEAR(model_alerts[0]["model"]["threshold"].get<double>(), 0.35, 1e-6);
  EXPECT_GE(model_alerts[0]["model"]["probability"].get<double>(), 0.35);
}

TEST(PipelineModel, MissingModelIsAClearStartupError) {
  auto dir = testing::scratch_dir("serve_pipeline_model_missing");
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--model", "/nonexistent/m.onnx", "--no-stdout"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("model /nonexistent/m.onnx: no such file"), std::string::npos) << o.err;
}

// A model with 16 values per row (not one probability) once aborted `replay --model` in the model
// server's warm-up (SIGABRT, heap corruption). It is refused at start-up: exit 2 naming the
// model, the output's shape and how to declare the probability column; no alert file is begun.
TEST(PipelineModel, ReplayRefusesAModelWithSixteenOutputsPerRow) {
  auto dir = testing::scratch_dir("serve_pipeline_model_wide");
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  {
    const auto bytes = serve::testing::many_outputs_model(16, kFeatureCount);
    std::ofstream f(dir / "wide.onnx", std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--model", "wide.onnx", "--no-stdout",
                    "--http", "off", "--out-dir", "out"},
                   dir);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("wide.onnx"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("nothing says which column is the probability"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("probability_column"), std::string::npos) << "says how to declare it: " << o.err;
  EXPECT_NE(o.err.find("[batch,16]"), std::string::npos) << o.err;
}

TEST(PipelineModel, BadModelConfigIsAClearStartupError) {
  auto dir = testing::scratch_dir("serve_pipeline_model_badcfg");
  {
    std::ofstream cfg(dir / "bad.toml");
    cfg << "[model]\npath = \"" << kModel << "\"\nthreshold = 1.5\n";
  }
  const auto goog = testing::lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--config", "bad.toml", "--no-stdout"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("threshold must be in (0, 1]"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ts
