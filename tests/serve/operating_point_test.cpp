// The registry's operating point is what serving decides with: a version's validation-fitted
// threshold replaces [model] threshold (and named groups' thresholds), a bad one is refused with
// the entry named, and the shipped registry's prod version carries one.
#include <gtest/gtest.h>

#include <filesystem>

#include "app/model_wiring.h"
#include "serve/model_registry.h"
#include "serve/model_version.h"

namespace ts {
namespace {

serve::ModelVersion parse(const char* text) {
  auto v = serve::model_version_from_json(nlohmann::ordered_json::parse(text), "models[0]");
  EXPECT_TRUE(v.is_ok()) << v.status().to_string();
  return v.is_ok() ? v.value() : serve::ModelVersion{};
}

TEST(OperatingPoint, RegistryThresholdReplacesTheConfiguredOne) {
  auto v = parse(R"({"name": "alert-default", "version": 3, "stage": "prod", "onnx": "m.onnx",
    "operating_point": {"threshold": 0.62, "budget_false_alerts_per_symbol_hour": 1,
                        "fitted_on": "validation", "groups": {"sse": 0.71}}})");
  ASSERT_TRUE(v.threshold.has_value());
  ModelAlertOptions alerts;  // threshold 0.9, hysteresis 0.1 (the example config's values)
  DecisionGroup sse, other, plain;
  sse.match.name = "sse";
  other.match.name = "other";
  other.threshold = 0.95;
  other.threshold_set = true;
  plain.match.name = "plain";  // no threshold of its own in the config
  alerts.groups = {sse, other, plain};
  const std::string line = apply_operating_point(alerts, v);
  EXPECT_DOUBLE_EQ(alerts.threshold, 0.62);
  EXPECT_DOUBLE_EQ(alerts.groups[0].threshold, 0.71);
  EXPECT_DOUBLE_EQ(alerts.groups[1].threshold, 0.95);  // not in the operating point: as configured
  EXPECT_DOUBLE_EQ(alerts.groups[2].threshold, 0.62);  // no threshold of its own: the model's
  EXPECT_LT(alerts.groups[2].hysteresis, 0.62);
  EXPECT_NE(line.find("0.62"), std::string::npos);
  EXPECT_NE(line.find("0.9"), std::string::npos);  // the log says what it replaced
}

TEST(OperatingPoint, LowThresholdLowersHysteresisBelowIt) {
  auto v = parse(R"({"name": "m", "version": 1, "stage": "prod", "onnx": "m.onnx",
    "operating_point": {"threshold": 0.05}})");
  ModelAlertOptions alerts;
  apply_operating_point(alerts, v);
  EXPECT_DOUBLE_EQ(alerts.threshold, 0.05);
  EXPECT_LT(alerts.hysteresis, alerts.threshold);
}

TEST(OperatingPoint, WithoutOneTheConfigStands) {
  auto v = parse(R"({"name": "m", "version": 1, "stage": "prod", "onnx": "m.onnx"})");
  ModelAlertOptions alerts;
  EXPECT_EQ(apply_operating_point(alerts, v), "");
  EXPECT_DOUBLE_EQ(alerts.threshold, 0.9);
}

TEST(OperatingPoint, BadThresholdIsRefusedWithTheEntryNamed) {
  for (const char* bad : {R"({"threshold": 1.5})", R"({"threshold": "high"})", R"({})", R"(0.5)",
                          R"({"threshold": 0.5, "groups": {"sse": -1}})"}) {
    auto j = nlohmann::ordered_json::parse(R"({"name": "m", "version": 2, "stage": "prod", "onnx": "m.onnx"})");
    j["operating_point"] = nlohmann::ordered_json::parse(bad);
    auto v = serve::model_version_from_json(j, "models[4]");
    ASSERT_FALSE(v.is_ok()) << bad;
    EXPECT_NE(v.status().message().find("models[4] (m v2)"), std::string::npos) << v.status().message();
    EXPECT_NE(v.status().message().find("operating_point"), std::string::npos) << v.status().message();
  }
}

// A promotion or rollback publishes the entering version's threshold for the shards to adopt with
// its first result (detect/decision_values.h); a version without an operating point decides at
// [model] threshold, not at the version it replaced.
TEST(OperatingPoint, AHotSwapPublishesTheEnteringVersionsThreshold) {
  ModelAlertOptions configured;  // threshold 0.9
  DecisionGroup sse;
  sse.match.name = "sse";
  configured.groups = {sse};
  DecisionValues values;
  auto v3 = parse(R"({"name": "alert-default", "version": 3, "stage": "prod", "onnx": "m.onnx",
    "operating_point": {"threshold": 0.62, "groups": {"sse": 0.71}}})");
  EXPECT_NE(publish_decision_values(values, configured, v3).find("0.62"), std::string::npos);
  auto got = values.latest();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->version, 3u);
  EXPECT_DOUBLE_EQ(got->values.threshold, 0.62);
  EXPECT_DOUBLE_EQ(got->values.groups[0].threshold, 0.71);
  auto v4 = parse(R"({"name": "alert-default", "version": 4, "stage": "prod", "onnx": "m.onnx"})");
  EXPECT_EQ(publish_decision_values(values, configured, v4), "");
  got = values.latest();
  EXPECT_EQ(got->version, 4u);
  EXPECT_DOUBLE_EQ(got->values.threshold, 0.9);
  EXPECT_DOUBLE_EQ(got->values.groups[0].threshold, 0.9);
  EXPECT_EQ(values.generation(), 2u);
}

// A fresh clone serves the shipped registry's prod version: at its validation-fitted threshold.
TEST(OperatingPoint, TheShippedProdVersionCarriesItsValidationThreshold) {
  auto reg = serve::ModelRegistry::open(std::string(TICKSENTRY_SOURCE_DIR) + "/models/registry.json");
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  auto prod = reg.value()->prod("alert-default");
  ASSERT_TRUE(prod.has_value());
  ASSERT_TRUE(prod->threshold.has_value());
  EXPECT_EQ(prod->raw["operating_point"]["fitted_on"], "validation");
  ModelAlertOptions alerts;
  apply_operating_point(alerts, *prod);
  EXPECT_DOUBLE_EQ(alerts.threshold, *prod->threshold);
}

}  // namespace
}  // namespace ts
