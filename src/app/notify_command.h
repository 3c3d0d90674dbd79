#pragma once
// `ticksentry notify test-route --config FILE --labels symbol=GOOG,type=large_trade [--verify R,...]`
// (like Alertmanager's `amtool config routes test`): which receivers the [notify] routing tree of
// FILE sends an alert with these labels to, through which routes, and whether a silence declared
// in the file ([[silences.declared]]) or a route's time window mutes it now. Labels an alert
// would carry are derived when not given: market from the symbol ("600519.SH" → SH), source=rule.
// Exit codes: 0 (with --verify: the receivers are exactly those), 1 --verify differs, 2 bad
// arguments or configuration.
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts {

class NotifyCommand {
 public:
  explicit NotifyCommand(CLI::App& app);
  std::optional<int> run();

 private:
  int test_route();
  CLI::App* cmd_ = nullptr;
  CLI::App* test_route_ = nullptr;
  std::string config_path_;
  std::vector<std::string> labels_;
  std::vector<std::string> verify_;
  bool json_ = false;
};

}  // namespace ts
