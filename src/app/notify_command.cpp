#include "app/notify_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "app/silence_config.h"
#include "core/clock.h"
#include "core/config.h"
#include "notify/labels.h"
#include "notify/notify_config.h"

namespace ts {

namespace {

constexpr int kExitOk = 0, kExitDiffers = 1, kExitUsage = 2;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string describe_matchers(const std::vector<notify::Matcher>& ms) {
  std::vector<std::string> t;
  for (const auto& m : ms) t.push_back(m.to_string());
  return t.empty() ? "every alert" : join(t, ", ");
}

}  // namespace

NotifyCommand::NotifyCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("notify", "check the [notify] configuration (like amtool config routes)");
  cmd_->require_subcommand(1);
  test_route_ = cmd_->add_subcommand("test-route", "which receivers an alert with these labels goes to");
  test_route_->add_option("--config", config_path_, "TOML config file with a [notify] section")->required();
  test_route_->add_option("--labels", labels_, "symbol=GOOG,type=large_trade,severity=critical (repeatable)")
      ->required();
  test_route_->add_option("--verify", verify_, "the receivers expected (comma separated): exit 1 when they differ")
      ->delimiter(',');
  test_route_->add_flag("--json", json_, "print the answer as JSON");
}

std::optional<int> NotifyCommand::run() {
  if (!*cmd_) return std::nullopt;
  return test_route();
}

int NotifyCommand::test_route() {
  const Config config = Config::load_file(config_path_);
  if (!notify::has_notify_section(config)) {
    std::fprintf(stderr, "ticksentry notify test-route: %s has no [notify] section: no alert is sent anywhere\n",
                 config_path_.c_str());
    return kExitUsage;
  }
  const notify::NotifyConfig nc = notify::read_notify_config(config);
  const SilencesConfig sc = read_silences_config(config);

  notify::Labels labels;
  for (const auto& group : labels_) {
    for (const auto& kv : split(group, ',')) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "ticksentry notify test-route: --labels '%s': expected name=value\n", kv.c_str());
        return kExitUsage;
      }
      labels.set(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  // As alert_labels() would set them.
  if (labels.has("symbol") && !labels.has("market")) labels.set("market", notify::market_label(market_of(labels.get("symbol"))));
  if (!labels.has("source")) labels.set("source", "rule");
  if (labels.has("type") && !notify::alert_type_from_name(labels.get("type"))) {
    std::fprintf(stderr, "ticksentry notify test-route: warning: type '%s' is not an alert type ticksentry raises\n",
                 labels.get("type").c_str());
  }

  const int64_t now = wall_ns();
  const auto routes = nc.route.match(labels);
  std::vector<std::string> receivers;
  nlohmann::json jroutes = nlohmann::json::array();
  for (const notify::Route* r : routes) {
    if (std::find(receivers.begin(), receivers.end(), r->receiver) == receivers.end()) receivers.push_back(r->receiver);
    jroutes.push_back({{"route", r->id},
                       {"matchers", describe_matchers(r->matchers)},
                       {"receiver", r->receiver},
                       {"group_by", r->group_by},
                       {"group_wait_ms", r->group_wait_ms},
                       {"muted_now_by_time_window", !r->active_at(now)}});
  }
  std::string silenced_by;
  for (size_t i = 0; i < sc.declared.size(); ++i) {
    const auto& s = sc.declared[i];
    if (s.active_at(now) && notify::matches_all(s.matchers, labels)) {
      silenced_by = "config-" + std::to_string(i + 1) + " (" + s.comment + ")";
      break;
    }
  }
  if (json_) {
    nlohmann::json j = {{"labels", labels.to_string()}, {"receivers", receivers}, {"routes", jroutes}};
    if (!silenced_by.empty()) j["silenced_by"] = silenced_by;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("labels:    %s\n", labels.to_string().c_str());
    std::printf("receivers: %s\n", receivers.empty() ? "(none)" : join(receivers, ", ").c_str());
    for (const auto& r : jroutes) {
      std::printf("  %-12s %s -> %s (group_by %s, group_wait %lld ms)%s\n", r["route"].get<std::string>().c_str(),
                  r["matchers"].get<std::string>().c_str(), r["receiver"].get<std::string>().c_str(),
                  join(r["group_by"].get<std::vector<std::string>>(), ",").c_str(),
                  (long long)r["group_wait_ms"].get<int64_t>(),
                  r["muted_now_by_time_window"].get<bool>() ? " [muted now by its time windows]" : "");
    }
    if (!silenced_by.empty()) std::printf("silenced:  by declared silence %s\n", silenced_by.c_str());
  }
  if (!verify_.empty()) {
    const std::set<std::string> want(verify_.begin(), verify_.end()), got(receivers.begin(), receivers.end());
    if (want != got) {
      std::fprintf(stderr, "ticksentry notify test-route: expected receivers %s, got %s\n", join(verify_, ",").c_str(),
                   receivers.empty() ? "(none)" : join(receivers, ",").c_str());
      return kExitDiffers;
    }
  }
  return kExitOk;
}

}  // namespace ts
