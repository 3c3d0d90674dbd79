#pragma once
// Where one run writes its alerts and summary: the JSONL file, the SQLite audit store and the
// summary JSON, from the flags and [sinks], with --out-dir applied. One place, so every use of the
// audit store path (alert sink, dashboard history, model failures, notification deliveries) agrees.
#include <string>

#include "app/commands.h"
#include "core/config.h"

namespace ts {

struct RunOutputs {
  std::string jsonl;         // "" = no JSONL file
  std::string audit_db;      // "" = no SQLite store (also "" with audit_backend = "postgres")
  bool postgres = false;     // [sinks] audit_backend = "postgres"
  std::string postgres_dsn;  // its DSN (only with postgres)
  std::string summary_json;  // "" = none
  bool append = false;       // --append or [sinks] append
  std::string out_dir;       // "" = the working directory
};

// Reads [sinks] jsonl, audit_db, audit_backend, postgres_dsn and append. With --out-dir DIR,
// relative paths resolve under DIR and the summary defaults to DIR/summary.json; DIR is created.
// Throws ConfigError when DIR cannot be created or audit_backend is neither sqlite nor postgres.
RunOutputs run_outputs(const Config& config, const CommonOptions& c);

}  // namespace ts
