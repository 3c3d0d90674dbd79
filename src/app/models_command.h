#pragma once
// `ticksentry models`: the model registry (models/registry.json, docs/models-registry.md) from
// the command line.
//
//   ticksentry models [--registry models/registry.json]             list: name, version, stage,
//                                                                     created, PR-AUC, last change
//   ticksentry models promote NAME VERSION --data DIR [--stage prod|staging|shadow]
//        [--split validation] [--backend cpu] [--reason TEXT] [--by WHO]
//   ticksentry models rollback NAME --data DIR [--split validation] [--backend cpu] [--reason TEXT]
//   ticksentry models set-stage NAME VERSION shadow|staging|candidate|retired [--reason TEXT]
//
// promote and rollback run the promotion gate (serve/promotion_gate.h) on DIR, a
// `ticksentry features --export` directory; the CLI records the stage (no server is swapped: a
// running server takes changes through the admin API).
//
// Exit codes: 0 done; 2 refused by the gate, bad arguments, unknown model or version, a corrupt
// registry or data set, an I/O error (one line on stderr, "ticksentry models: ..."); 1
// unexpected internal failure.
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace ts {

struct ModelsOptions {
  std::string registry = "models/registry.json";
  std::string name;
  int version = 0;
  std::string stage = "prod";   // promote: prod | staging | shadow; set-stage: any but prod
  std::string data;             // a `features --export` directory
  std::string split = "validation";
  std::string backend = "cpu";
  std::string reason;           // recorded as the change's "why"
  std::string by;               // recorded as "by"; default $USER
};

class ModelsCommand {
 public:
  explicit ModelsCommand(CLI::App& app);
  // The exit code if `models` was the subcommand given, else nullopt.
  std::optional<int> run() const;

 private:
  ModelsOptions opts_;
  CLI::App* cmd_ = nullptr;
  CLI::App* promote_ = nullptr;
  CLI::App* rollback_ = nullptr;
  CLI::App* set_stage_ = nullptr;
};

}  // namespace ts
