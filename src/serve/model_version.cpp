#include "serve/model_version.h"

#include <ctime>

namespace ts::serve {

namespace {

constexpr const char* kStageNames[] = {"candidate", "shadow", "staging", "prod", "retired"};

Status bad(const std::string& where, const std::string& what) {
  return Status(StatusCode::kParseError, where + ": " + what);
}

Result<Stage> stage_field(const nlohmann::ordered_json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return bad(where, std::string("\"") + key + "\" must be a stage name");
  auto s = stage_from_name(it->get<std::string>());
  if (!s) {
    return bad(where, std::string("\"") + key + "\" is \"" + it->get<std::string>() +
                          "\", not one of candidate, shadow, staging, prod, retired");
  }
  return *s;
}

std::string string_or(const nlohmann::ordered_json& j, const char* key, std::string dflt = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : dflt;
}

}  // namespace

const char* stage_name(Stage s) {
  const auto i = size_t(s);
  return i < std::size(kStageNames) ? kStageNames[i] : "unknown";
}

std::optional<Stage> stage_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kStageNames); ++i) {
    if (name == kStageNames[i]) return Stage(i);
  }
  return std::nullopt;
}

Result<ModelVersion> model_version_from_json(const nlohmann::ordered_json& j, const std::string& where) {
  if (!j.is_object()) return bad(where, "expected an object");
  ModelVersion v;
  v.raw = j;
  auto name = j.find("name");
  if (name == j.end() || !name->is_string() || name->get<std::string>().empty()) return bad(where, "\"name\" must be a non-empty string");
  v.name = name->get<std::string>();
  const std::string at = where + " (" + v.name + ")";
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || version->get<int64_t>() < 1 || version->get<int64_t>() > 1'000'000) {
    return bad(at, "\"version\" must be an integer >= 1");
  }
  v.version = version->get<int>();
  const std::string atv = where + " (" + v.name + " v" + std::to_string(v.version) + ")";
  auto stage = stage_field(j, "stage", atv);
  if (!stage) return stage.status();
  v.stage = stage.value();
  auto onnx = j.find("onnx");
  if (onnx == j.end() || !onnx->is_string() || onnx->get<std::string>().empty()) return bad(atv, "\"onnx\" must be a path");
  v.onnx = onnx->get<std::string>();
  v.created = string_or(j, "created");
  v.sha256 = string_or(j, "sha256");
  if (auto m = j.find("metrics"); m != j.end() && m->is_object()) {
    if (auto p = m->find("pr_auc"); p != m->end() && p->is_number()) v.pr_auc = p->get<double>();
  }
  if (auto op = j.find("operating_point"); op != j.end() && !op->is_null()) {
    if (!op->is_object()) return bad(atv, "\"operating_point\" must be an object");
    auto t = op->find("threshold");
    if (t == op->end() || !t->is_number() || !(t->get<double>() > 0 && t->get<double>() <= 1)) {
      return bad(atv, "operating_point.threshold must be a number in (0, 1]");
    }
    v.threshold = t->get<double>();
    if (auto g = op->find("groups"); g != op->end()) {
      if (!g->is_object()) return bad(atv, "operating_point.groups must map a group name to a threshold");
      for (const auto& [group, gt] : g->items()) {
        if (!gt.is_number() || !(gt.get<double>() > 0 && gt.get<double>() <= 1)) {
          return bad(atv, "operating_point.groups." + group + " must be a number in (0, 1]");
        }
        v.group_thresholds[group] = gt.get<double>();
      }
    }
  }
  if (auto plans = j.find("plans"); plans != j.end()) {
    if (!plans->is_object()) return bad(atv, "\"plans\" must map a backend to a plan file");
    for (const auto& [backend, path] : plans->items()) {
      if (!path.is_string() || path.get<std::string>().empty()) return bad(atv, "plans." + backend + " must be a path");
      v.plans[backend] = path.get<std::string>();
    }
  }
  if (auto h = j.find("history"); h != j.end()) {
    if (!h->is_array()) return bad(atv, "\"history\" must be a list");
    for (size_t i = 0; i < h->size(); ++i) {
      const auto& e = (*h)[i];
      const std::string ath = atv + " history[" + std::to_string(i) + "]";
      if (!e.is_object()) return bad(ath, "expected an object");
      StageChange c;
      auto to = stage_field(e, "stage", ath);
      if (!to) return to.status();
      auto from = stage_field(e, "from", ath);
      if (!from) return from.status();
      c.stage = to.value();
      c.from = from.value();
      c.at = string_or(e, "at");
      c.by = string_or(e, "by");
      c.why = string_or(e, "why");
      if (auto r = e.find("replaced"); r != e.end() && !r->is_null()) {
        if (!r->is_number_integer()) return bad(ath, "\"replaced\" must be a version number");
        c.replaced = r->get<int>();
      }
      if (auto r = e.find("rollback"); r != e.end()) c.rollback = r->is_boolean() && r->get<bool>();
      if (auto g = e.find("gate"); g != e.end()) c.gate = *g;
      v.history.push_back(std::move(c));
    }
  }
  return v;
}

nlohmann::ordered_json model_version_to_json(const ModelVersion& v) {
  nlohmann::ordered_json j = v.raw.is_object() ? v.raw : nlohmann::ordered_json::object();
  j["name"] = v.name;
  j["version"] = v.version;
  if (!v.created.empty()) j["created"] = v.created;
  j["stage"] = stage_name(v.stage);
  j["onnx"] = v.onnx;
  if (!v.sha256.empty()) j["sha256"] = v.sha256;
  if (v.plans.empty()) {
    j.erase("plans");
  } else {
    j["plans"] = nlohmann::ordered_json::object();
    for (const auto& [backend, path] : v.plans) j["plans"][backend] = path;
  }
  if (v.history.empty()) {
    j.erase("history");
  } else {
    auto h = nlohmann::ordered_json::array();
    for (const StageChange& c : v.history) {
      nlohmann::ordered_json e = {{"stage", stage_name(c.stage)}, {"from", stage_name(c.from)}, {"at", c.at},
                                  {"by", c.by},                   {"why", c.why}};
      if (c.replaced) e["replaced"] = *c.replaced;
      if (c.rollback) e["rollback"] = true;
      if (!c.gate.is_null()) e["gate"] = c.gate;
      h.push_back(std::move(e));
    }
    j["history"] = std::move(h);
  }
  return j;
}

std::string registry_now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

}  // namespace ts::serve
