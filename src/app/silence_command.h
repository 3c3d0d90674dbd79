#pragma once
// `ticksentry silence` (like Alertmanager's `amtool silence`), against a running ticksentry's
// admin API (/api/silences):
//   ticksentry silence add MATCHER... --comment WHY [--duration 1h] [--author NAME]
//       MATCHER in Alertmanager's syntax: symbol=GOOG, type=~"limit_.*", market!=US. Prints the
//       new silence's id.
//   ticksentry silence list [--expired] [--json]      (also `query`)
//   ticksentry silence expire ID...
// Every subcommand takes --url (default $TICKSENTRY_URL, else http://127.0.0.1:8080) and --token
// (default $TICKSENTRY_TOKEN; the run prints it in its dashboard URL).
// Silences that must hold whenever ticksentry runs belong in the config file instead
// ([[silences.declared]], app/silence_config.h).
// Exit codes: 0 done; 1 the server refused (its message is printed); 2 bad arguments or no
// server at --url.
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts {

// "90" (seconds), "90s", "30m", "2h", "1d", "1h30m" → seconds; nothing when malformed or 0.
std::optional<double> parse_duration_s(const std::string& text);

class SilenceCommand {
 public:
  explicit SilenceCommand(CLI::App& app);
  std::optional<int> run();

 private:
  int add();
  int list();
  int expire();
  CLI::App* cmd_ = nullptr;
  CLI::App* add_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* expire_ = nullptr;
  std::string url_;
  std::string token_;
  std::vector<std::string> matchers_;
  std::vector<std::string> ids_;
  std::string comment_;
  std::string author_;
  std::string duration_ = "1h";
  bool expired_ = false;
  bool json_ = false;
};

}  // namespace ts
