#include "app/silence_command.h"

#include <CLI/CLI.hpp>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "app/time_arg.h"
#include "notify/matcher.h"

namespace ts {

namespace {

constexpr int kExitOk = 0, kExitRefused = 1, kExitUsage = 2;

std::string env_or(const char* name, const std::string& def) {
  const char* v = std::getenv(name);
  return v && *v ? v : def;
}

struct Reply {
  int status = 0;  // 0: no answer (the message says why)
  std::string body;
  std::string error;
};

Reply call(const std::string& url, const std::string& token, const std::string& method, const std::string& path,
           const std::string& body = "") {
  Reply out;
  httplib::Client client(url);
  if (!client.is_valid()) {
    out.error = "--url " + url + ": not an http://HOST:PORT address";
    return out;
  }
  client.set_connection_timeout(5);
  client.set_read_timeout(15);
  client.set_bearer_token_auth(token);
  httplib::Result r = method == "GET" ? client.Get(path) : client.Post(path, body, "application/json");
  if (!r) {
    out.error = "no ticksentry at " + url + " (" + httplib::to_string(r.error()) +
                "): start one with --http, or point --url / $TICKSENTRY_URL at it";
    return out;
  }
  out.status = r->status;
  out.body = r->body;
  return out;
}

// The server's {"message": ...} of a refusal, else the body.
std::string refusal(const Reply& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  return r.body;
}

int report_failure(const Reply& r, const char* what) {
  if (r.status == 0) {
    std::fprintf(stderr, "ticksentry silence: %s\n", r.error.c_str());
    return kExitUsage;
  }
  if (r.status == 401) {
    std::fprintf(stderr, "ticksentry silence %s: 401: wrong or missing token (--token or $TICKSENTRY_TOKEN)\n", what);
    return kExitUsage;
  }
  std::fprintf(stderr, "ticksentry silence %s: %d: %s\n", what, r.status, refusal(r).c_str());
  return kExitRefused;
}

std::string when(int64_t ms) {
  if (ms <= 0) return "-";
  if (ms >= int64_t(9e15) / 1000) return "never";
  return format_utc_ns(ms * 1'000'000);
}

}  // namespace

std::optional<double> parse_duration_s(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t used = 0;
    double v;
    try {
      v = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used == 0 || !(v >= 0)) return std::nullopt;
    i += used;
    double unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: return std::nullopt;
      }
      ++i;
    } else if (any) {
      return std::nullopt;  // "1h30": a unit is needed after the first part
    }
    total += v * unit;
    any = true;
  }
  if (!(total > 0)) return std::nullopt;
  return total;
}

SilenceCommand::SilenceCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("silence", "add, list and expire silences of a running ticksentry (like amtool silence)");
  cmd_->require_subcommand(1);
  auto connection = [this](CLI::App* c) {
    c->add_option("--url", url_, "the ticksentry dashboard/API (default $TICKSENTRY_URL, else http://127.0.0.1:8080)");
    c->add_option("--token", token_, "admin token (default $TICKSENTRY_TOKEN)");
  };
  add_ = cmd_->add_subcommand("add", "mute alerts matching every MATCHER (symbol=GOOG type=~\"limit_.*\")");
  add_->add_option("matchers", matchers_, "label matchers: symbol, market, type, severity, source, model")->required();
  add_->add_option("--comment,-c", comment_, "why (required)")->required();
  add_->add_option("--duration,-d", duration_, "how long: 90s, 30m, 2h, 1d, 1h30m (default 1h)");
  add_->add_option("--author,-a", author_, "who (default $USER)");
  connection(add_);
  list_ = cmd_->add_subcommand("list", "active silences (with --expired also ended ones)");
  list_->alias("query");
  list_->add_flag("--expired", expired_, "also silences that have ended");
  list_->add_flag("--json", json_, "the API's JSON");
  connection(list_);
  expire_ = cmd_->add_subcommand("expire", "end silences now");
  expire_->add_option("ids", ids_, "silence ids (`ticksentry silence list`)")->required();
  connection(expire_);
}

std::optional<int> SilenceCommand::run() {
  if (!*cmd_) return std::nullopt;
  if (url_.empty()) url_ = env_or("TICKSENTRY_URL", "http://127.0.0.1:8080");
  if (token_.empty()) token_ = env_or("TICKSENTRY_TOKEN", "");
  if (token_.empty()) {
    std::fprintf(stderr,
                 "ticksentry silence: no token: --token or $TICKSENTRY_TOKEN (the run prints it in its dashboard "
                 "URL, or set [http] token)\n");
    return kExitUsage;
  }
  if (*add_) return add();
  if (*list_) return list();
  return expire();
}

int SilenceCommand::add() {
  for (const auto& m : matchers_) {
    if (auto parsed = notify::Matcher::parse(m); !parsed.is_ok()) {
      std::fprintf(stderr, "ticksentry silence add: %s\n", parsed.status().message().c_str());
      return kExitUsage;
    }
  }
  const auto seconds = parse_duration_s(duration_);
  if (!seconds) {
    std::fprintf(stderr, "ticksentry silence add: --duration '%s': expected 90s, 30m, 2h, 1d or 1h30m\n",
                 duration_.c_str());
    return kExitUsage;
  }
  const nlohmann::json body = {{"matchers", matchers_},
                               {"comment", comment_},
                               {"created_by", author_.empty() ? env_or("USER", "cli") : author_},
                               {"duration_s", *seconds}};
  const Reply r = call(url_, token_, "POST", "/api/silences", body.dump());
  if (r.status != 201) return report_failure(r, "add");
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  std::printf("%s\n", j.is_object() ? j.value("id", std::string("?")).c_str() : "?");
  return kExitOk;
}

int SilenceCommand::list() {
  const Reply r = call(url_, token_, "GET", "/api/silences");
  if (r.status != 200) return report_failure(r, "list");
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("silences")) {
    std::fprintf(stderr, "ticksentry silence list: unexpected answer: %s\n", r.body.substr(0, 200).c_str());
    return kExitRefused;
  }
  nlohmann::json shown = nlohmann::json::array();
  for (const auto& s : j["silences"]) {
    if (expired_ || s.value("active", false)) shown.push_back(s);
  }
  if (json_) {
    std::printf("%s\n", nlohmann::json{{"silences", shown}}.dump().c_str());
    return kExitOk;
  }
  std::printf("%-17s %-40s %-24s %-12s %-8s %s\n", "ID", "MATCHERS", "ENDS", "CREATED BY", "STATE", "COMMENT");
  for (const auto& s : shown) {
    std::string ms;
    for (const auto& m : s.value("matchers", nlohmann::json::array())) ms += (ms.empty() ? "" : " ") + m.get<std::string>();
    const bool declared = s.value("declared", false);
    const std::string ends = declared && s.value("ends_at_ms", int64_t(0)) >= int64_t(9e12) ? "while configured"
                                                                                           : when(s.value("ends_at_ms", int64_t(0)));
    std::printf("%-17s %-40s %-24s %-12s %-8s %s\n", s.value("id", std::string()).c_str(), ms.c_str(), ends.c_str(),
                s.value("created_by", std::string()).c_str(),
                declared ? "config" : s.value("active", false) ? "active" : "expired",
                s.value("comment", std::string()).c_str());
  }
  std::printf("(%zu silences%s, from %s)\n", shown.size(), expired_ ? "" : " active", url_.c_str());
  return kExitOk;
}

int SilenceCommand::expire() {
  int rc = kExitOk;
  for (const auto& id : ids_) {
    const bool plain = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    });
    if (!plain) {
      std::fprintf(stderr, "ticksentry silence expire: '%s' is not a silence id\n", id.c_str());
      rc = kExitUsage;
      continue;
    }
    const Reply r = call(url_, token_, "POST", "/api/silences/" + id + "/expire");
    if (r.status == 200) {
      std::printf("expired %s\n", id.c_str());
      continue;
    }
    const int failed = report_failure(r, "expire");
    if (failed > rc) rc = failed;
  }
  return rc;
}

}  // namespace ts
