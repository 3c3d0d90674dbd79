#pragma once
// One recorded version of a model in models/registry.json (format in docs/models-registry.md):
// its stage, files, metrics and stage history, and its JSON form. models/registry.py reads and
// writes the same entries (format_version 2; version 1 files, written before stages existed,
// are read as well).
//
// Plain values: copy freely; no threading concerns.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace ts::serve {

// candidate: recorded by `make model`, never served. shadow: runs on live traffic, its alerts
// are recorded, not sent (one per model name). staging: checked, waiting for prod. prod: serves
// alerts (one per model name). retired: was prod or shadow once; kept so rollback can return.
enum class Stage : uint8_t { kCandidate = 0, kShadow, kStaging, kProd, kRetired };
const char* stage_name(Stage s);
std::optional<Stage> stage_from_name(std::string_view name);

// One stage transition, appended to a version's history (never rewritten).
struct StageChange {
  Stage stage = Stage::kCandidate;  // the stage entered
  Stage from = Stage::kCandidate;   // the stage left
  std::string at;                   // UTC, ISO 8601 to the second ("2026-11-30T10:01:11+00:00")
  std::string by;                   // who asked ($USER of the CLI, or the admin API's caller)
  std::string why;                  // free text ("promote", "rollback", a reason given)
  std::optional<int> replaced;      // entering prod: the version that was prod before, if any
  bool rollback = false;            // entering prod through rollback (rollback skips these)
  nlohmann::ordered_json gate;      // the gate's numbers for this change; null when none ran
};

struct ModelVersion {
  std::string name;                         // "alert-default"
  int version = 0;                          // 1, 2, ... per name
  Stage stage = Stage::kCandidate;
  std::string created;                      // UTC ISO 8601, when recorded
  std::string onnx;                         // as written: relative to the registry's folder (or absolute)
  std::string sha256;                       // of the ONNX file, as recorded ("" if not)
  std::map<std::string, std::string> plans; // backend ("cpu", "cuda") → plan file, paths as for onnx
  std::optional<double> pr_auc;             // metrics.pr_auc recorded by `make model` (its test split)
  // "operating_point": {"threshold": t, "budget_false_alerts_per_symbol_hour": 1, "fitted_on":
  // "validation", "groups": {"<group name>": t, ...}}: the alert threshold fitted on validation
  // for the alert budget (docs/labels.md). Serving a registry version decides with exactly this
  // threshold (app/model_wiring.cpp); absent in entries recorded before the protocol.
  std::optional<double> threshold;
  std::map<std::string, double> group_thresholds;  // symbol group name → its threshold
  std::vector<StageChange> history;         // oldest first
  nlohmann::ordered_json raw;               // the entry as read: fields not named above survive a write
};

// Parses one entry of "models"; an error names the field ("models[2]: \"stage\" ...").
Result<ModelVersion> model_version_from_json(const nlohmann::ordered_json& j, const std::string& where);
// The entry as JSON: `raw` with the fields above written over it (key order kept).
nlohmann::ordered_json model_version_to_json(const ModelVersion& v);

// The current time as the registry writes it ("2026-11-30T10:01:11+00:00").
std::string registry_now_utc();

}  // namespace ts::serve
