#pragma once
// What the admin API serves but other parts of ticksentry own: the model registry
// (src/serve) and the silences (src/notify). They implement these interfaces; the HTTP layer
// (admin_routes.cpp) turns each call into a REST endpoint and each Status into an HTTP code:
//   ok → 200, kInvalidArgument / kOutOfRange / kParseError → 400, kNotFound → 404,
//   kUnsupported → 409 (a refusal: the message says why), anything else → 500.
// The message of a non-ok Status is shown to the user as is ("promote gru v3: PR-AUC 0.41
// below the gate 0.45"), so it must say what was refused and why.
//
// Threading: every method may be called from any of the HTTP server's threads, concurrently;
// implementations synchronise themselves. Calls may block briefly (SQLite, file I/O) but never
// for long: a promote that builds an engine starts the build and returns.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/symbol_table.h"
#include "detect/alert.h"

namespace ts::http {

// ---- models -------------------------------------------------------------------------------
struct ModelVersionInfo {
  std::string name;                        // "default"
  std::string version;                     // "3" or a hash; unique within name
  std::string stage;                       // "prod", "staging", "shadow", "archived"
  int64_t created_ms = 0;                  // Unix ms; 0 = unknown
  std::map<std::string, double> metrics;   // {"pr_auc": 0.47, "p99_us": 180}
  std::string source;                      // a model served from a file: its path ("" = the registry)
  std::string backend;                     // where it runs when known ("cpu", "cuda")
};

class ModelAdmin {
 public:
  virtual ~ModelAdmin() = default;
  // Every version of every model, any order (the API sorts by name, then created_ms).
  virtual std::vector<ModelVersionInfo> list() = 0;
  // Makes `version` the model's prod version (the previous prod becomes the rollback target).
  // Refusals (gate failed, version unknown, build failed) are a non-ok Status with the reason.
  virtual Status promote(const std::string& name, const std::string& version) = 0;
  // Puts back the prod version that was live before the last promote; kNotFound when none.
  virtual Status rollback(const std::string& name) = 0;
  // Runs `version` in shadow beside prod (scored, never alerting).
  virtual Status shadow(const std::string& name, const std::string& version) = 0;
};

// ---- silences -----------------------------------------------------------------------------
// A silence mutes alerts that match every non-empty matcher, from starts_at_ms until
// ends_at_ms (wall clock, Unix ms) or until it is expired by hand.
struct SilenceSpec {
  std::string symbol;     // "" = any symbol
  std::string type;       // alert type name ("rapid_rise"), "" = any
  std::string severity;   // "info" | "warning" | "critical", "" = any
  int64_t duration_ms = 3600'000;
  std::string created_by;
  std::string comment;
  // Label matchers in Alertmanager's syntax (`symbol=~"60.*"`, `market!=US`), besides the three
  // fields above: `ticksentry silence add` sends these. Stores that cannot match on labels
  // (MemorySilences) refuse them.
  std::vector<std::string> matchers;
};

struct SilenceInfo {
  std::string id;
  SilenceSpec spec;
  int64_t starts_at_ms = 0;
  int64_t ends_at_ms = 0;
  bool active = false;    // false once expired (by hand or by time)
  uint64_t muted = 0;     // alerts the dashboard saw muted by it (this process)
  std::vector<std::string> matchers;  // every matcher as text: symbol="AAPL", market=~"S.*"
  bool declared = false;  // from the config file ([[silences.declared]]): cannot be expired here
};

class SilenceAdmin {
 public:
  virtual ~SilenceAdmin() = default;
  // Validates and stores a silence. kInvalidArgument (with the reason) when every matcher is
  // empty, the type or severity is unknown, or the duration is not in (0, 30 days].
  virtual Result<SilenceInfo> create(const SilenceSpec& spec) = 0;
  // Active silences first, then recently expired ones.
  virtual std::vector<SilenceInfo> list() = 0;
  // Ends a silence now. kNotFound for an unknown id; expiring an expired silence is ok.
  virtual Status expire(const std::string& id) = 0;
  // The id of an active silence matching the alert at `now_ms`, counting it as muted; nothing
  // when no silence matches. Called once per alert by the dashboard stream (sink thread).
  virtual std::optional<std::string> match(const Alert& a, const SymbolTable& symbols, int64_t now_ms) = 0;
};

}  // namespace ts::http
