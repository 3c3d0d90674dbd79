#include "http/registry_models.h"

#include <charconv>
#include <ctime>

namespace ts::http {

namespace {
// "2026-11-30T10:01:11+00:00" (the registry writes UTC) → Unix ms; 0 when unreadable.
int64_t iso_utc_ms(const std::string& s) {
  std::tm tm{};
  if (!strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  return int64_t(timegm(&tm)) * 1000;
}
}  // namespace

std::vector<ModelVersionInfo> RegistryModels::list() {
  std::vector<ModelVersionInfo> out;
  for (const serve::ModelVersion& v : registry_.list()) {
    ModelVersionInfo i;
    i.name = v.name;
    i.version = std::to_string(v.version);
    i.stage = serve::stage_name(v.stage);
    i.created_ms = iso_utc_ms(v.created);
    if (v.pr_auc) i.metrics["pr_auc"] = *v.pr_auc;
    out.push_back(std::move(i));
  }
  return out;
}

Status RegistryModels::change(const std::string& name, const std::string& version, serve::Stage stage) {
  int v = 0;
  auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
  if (ec != std::errc() || end != version.data() + version.size() || v <= 0) {
    return {StatusCode::kInvalidArgument, "version must be a positive integer, got '" + version + "'"};
  }
  auto report = registry_.promote(name, v, stage, options_);
  return report.is_ok() ? Status::ok() : report.status();
}

Status RegistryModels::promote(const std::string& name, const std::string& version) {
  return change(name, version, serve::Stage::kProd);
}

Status RegistryModels::shadow(const std::string& name, const std::string& version) {
  return change(name, version, serve::Stage::kShadow);
}

Status RegistryModels::rollback(const std::string& name) {
  auto report = registry_.rollback(name, options_);
  return report.is_ok() ? Status::ok() : report.status();
}

}  // namespace ts::http
