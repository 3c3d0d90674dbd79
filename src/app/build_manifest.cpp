#include "app/build_manifest.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/ir/graph.h"
#include "engine/onnx_import.h"
#include "engine/plan.h"
#include "features/feature_set.h"

namespace ts {

std::vector<std::string> pipeline_feature_names() {
  std::vector<std::string> out;
  for (int i = 0; i < kFeatureCount; ++i) out.emplace_back(feature_name(i));
  return out;
}

namespace {

Status bad(const std::string& file, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, "manifest " + file + ": " + why);
}

// Applies a manifest JSON's keys over `m`.
Status apply_manifest_json(const std::string& path, engine::ModelManifest& m) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, "manifest " + path + ": cannot open");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad(path, "not valid JSON");
  if (!j.is_object()) return bad(path, "expected a JSON object");
  static const std::set<std::string> kKeys = {"input", "window_rows", "features", "output", "output_columns",
                                              "probability_column", "threshold", "name", "version"};
  const char* kList = "input, window_rows, features, output, output_columns, probability_column, threshold, name, version";
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!kKeys.count(it.key())) return bad(path, "unknown key '" + it.key() + "' (valid: " + kList + ")");
  }
  auto str = [&](const char* key, std::string& out) -> Status {
    if (!j.contains(key)) return Status::ok();
    if (!j[key].is_string()) return bad(path, std::string(key) + " must be a string");
    out = j[key].get<std::string>();
    return Status::ok();
  };
  auto integer = [&](const char* key, int64_t& out) -> Status {
    if (!j.contains(key)) return Status::ok();
    if (!j[key].is_number_integer()) return bad(path, std::string(key) + " must be an integer");
    out = j[key].get<int64_t>();
    return Status::ok();
  };
  TS_RETURN_IF_ERROR(str("input", m.input_name));
  TS_RETURN_IF_ERROR(str("output", m.output_name));
  TS_RETURN_IF_ERROR(str("name", m.model_name));
  TS_RETURN_IF_ERROR(str("version", m.model_version));
  TS_RETURN_IF_ERROR(integer("window_rows", m.window_rows));
  TS_RETURN_IF_ERROR(integer("output_columns", m.output_columns));
  TS_RETURN_IF_ERROR(integer("probability_column", m.probability_column));
  if (j.contains("features")) {
    const auto& f = j["features"];
    if (f.is_number_integer()) {
      m.features = f.get<int64_t>();
      if (int64_t(m.feature_names.size()) != m.features) m.feature_names.clear();
    } else if (f.is_array()) {
      m.feature_names.clear();
      for (const auto& n : f) {
        if (!n.is_string()) return bad(path, "features must be a count or a list of names (strings)");
        m.feature_names.push_back(n.get<std::string>());
      }
      m.features = int64_t(m.feature_names.size());
    } else {
      return bad(path, "features must be a count or a list of names");
    }
  }
  if (j.contains("threshold")) {
    if (!j["threshold"].is_number()) return bad(path, "threshold must be a number");
    m.threshold = j["threshold"].get<double>();
  }
  return Status::ok();
}

}  // namespace

Result<std::optional<engine::ModelManifest>> make_build_manifest(const std::string& onnx_path,
                                                                 const BuildManifestOptions& o, std::string* why_none) {
  using Out = std::optional<engine::ModelManifest>;
  if (o.none) {
    if (why_none) *why_none = "--noManifest";
    return Out();
  }
  std::string file = o.manifest_path;
  if (file.empty()) {
    std::filesystem::path beside = std::filesystem::path(onnx_path);
    beside.replace_extension(".manifest.json");
    if (std::filesystem::exists(beside)) file = beside.string();
  }
  const bool asked = !file.empty() || o.threshold || o.probability_column;
  auto g = engine::import_onnx_file(onnx_path);
  if (!g.is_ok()) return g.status();
  const engine::Graph& graph = g.value();
  engine::ModelManifest m;
  bool window_model = graph.inputs.size() == 1 && !graph.outputs.empty();
  if (window_model) {
    const engine::Value& x = graph.value(graph.inputs[0]);
    window_model = x.rank_known && x.shape.size() == 3;
    m.input_name = x.name;
    if (window_model) {
      m.window_rows = x.shape[1].is_known() ? x.shape[1].value : 0;
      m.features = x.shape[2].is_known() ? x.shape[2].value : 0;
    }
    const engine::Value& y = graph.value(graph.outputs[0]);
    m.output_name = y.name;
    if (y.rank_known && y.shape.size() == 2 && y.shape[1].is_known()) m.output_columns = y.shape[1].value;
  }
  if (m.features == kFeatureCount) m.feature_names = pipeline_feature_names();
  if (!window_model && !asked) {
    if (why_none) *why_none = "the model's input is not one [batch, T, F] window";
    return Out();
  }
  if (!file.empty()) TS_RETURN_IF_ERROR(apply_manifest_json(file, m));
  if (o.threshold) m.threshold = *o.threshold;
  if (o.probability_column) m.probability_column = *o.probability_column;
  if (m.features == kFeatureCount && m.feature_names.empty()) m.feature_names = pipeline_feature_names();
  auto names = [&](const std::vector<engine::ValueId>& ids) {
    std::string out;
    for (engine::ValueId id : ids) out += (out.empty() ? "" : ", ") + graph.value(id).name;
    return out.empty() ? std::string("none") : out;
  };
  auto has = [&](const std::vector<engine::ValueId>& ids, const std::string& name) {
    for (engine::ValueId id : ids) {
      if (graph.value(id).name == name) return true;
    }
    return false;
  };
  const std::string where = "manifest" + (file.empty() ? std::string() : " " + file);
  if (!has(graph.inputs, m.input_name)) {
    return Status(StatusCode::kInvalidArgument, where + ": names input '" + m.input_name + "'; the model's inputs: " +
                                                    names(graph.inputs));
  }
  if (!has(graph.outputs, m.output_name)) {
    return Status(StatusCode::kInvalidArgument, where + ": names output '" + m.output_name + "'; the model's outputs: " +
                                                    names(graph.outputs));
  }
  if (std::string why = engine::manifest_problem(m); !why.empty()) {
    return Status(StatusCode::kInvalidArgument, where + ": " + why);
  }
  return Out(std::move(m));
}

Status fit_manifest_window(engine::ModelManifest& m, std::span<const uint8_t> bytes) {
  auto plan = engine::deserialize_plan(bytes);
  if (!plan) return plan.status().with_context("manifest");
  const engine::Graph& g = plan.value().graph;
  const engine::Value* x = nullptr;
  for (engine::ValueId id : g.inputs) {
    if (g.value(id).name == m.input_name) x = &g.value(id);
  }
  if (!x) return Status::ok();  // make_build_manifest checked the name against the ONNX
  // The [lo, hi] ranges of T the plan runs: the static dim, else each profile's.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  if (x->rank_known && x->shape.size() == 3 && x->shape[1].is_known()) {
    ranges.emplace_back(x->shape[1].value, x->shape[1].value);
  } else {
    for (const engine::OptimizationProfile& p : plan.value().profiles) {
      auto it = p.inputs.find(m.input_name);
      if (it != p.inputs.end() && it->second.min.size() == 3 && it->second.max.size() == 3) {
        ranges.emplace_back(it->second.min[1], it->second.max[1]);
      }
    }
  }
  if (ranges.empty()) return Status::ok();
  std::string accepted;
  bool admits = false, one = true;
  for (const auto& [lo, hi] : ranges) {
    accepted += (accepted.empty() ? "" : ", ") + std::to_string(lo) + (lo == hi ? "" : ".." + std::to_string(hi));
    admits |= m.window_rows >= lo && m.window_rows <= hi;
    one &= lo == hi && lo == ranges.front().first;
  }
  if (m.window_rows > 0 && !admits) {
    return Status(StatusCode::kInvalidArgument,
                  "manifest: window_rows (T) is " + std::to_string(m.window_rows) + ", the plan accepts T = " + accepted +
                      " (input " + m.input_name + " [batch, T, F] in its profiles: --minShapes/--maxShapes " +
                      m.input_name + ":Bx" + std::to_string(m.window_rows) + "xF builds one for it)");
  }
  if (m.window_rows == 0 && one) m.window_rows = ranges.front().first;
  return Status::ok();
}

}  // namespace ts
