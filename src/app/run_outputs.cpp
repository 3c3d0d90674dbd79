#include "app/run_outputs.h"

#include <filesystem>
#include <system_error>

namespace ts {

namespace {

std::string under(const std::string& dir, const std::string& path) {
  if (dir.empty() || path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(dir) / path).string();
}

}  // namespace

RunOutputs run_outputs(const Config& config, const CommonOptions& c) {
  auto s = config.section("sinks");
  RunOutputs o;
  o.out_dir = c.out_dir;
  o.append = c.append || s.get("append", false);
  const std::string backend = s.get("audit_backend", "sqlite");
  if (backend != "sqlite" && backend != "postgres") {
    throw ConfigError("sinks.audit_backend must be sqlite or postgres, not '" + backend + "'");
  }
  const std::string dsn = s.get("postgres_dsn", "");
  const std::string db = c.audit_db.value_or(s.get("audit_db", "ticksentry-audit.db"));
  if (backend == "postgres") {
    o.postgres = true;
    o.postgres_dsn = dsn;
  } else {
    o.audit_db = under(o.out_dir, db);
  }
  o.jsonl = under(o.out_dir, c.jsonl_path.value_or(s.get("jsonl", "ticksentry-alerts.jsonl")));
  o.summary_json = under(o.out_dir, c.summary_json.empty() && !o.out_dir.empty() ? "summary.json" : c.summary_json);
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) throw ConfigError("--out-dir " + o.out_dir + ": " + ec.message());
  }
  return o;
}

}  // namespace ts
