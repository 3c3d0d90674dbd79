// The admin API's model and silence endpoints (HttpServer::add_admin_routes):
//   GET  /api/models                         {"models": [{name, version, stage, created_ms, metrics,
//                                              source?, backend?}]} (source: a --model file)
//   POST /api/models/{name}/promote          body {"version": "3"}
//   POST /api/models/{name}/rollback
//   POST /api/models/{name}/shadow           body {"version": "4"}
//   GET  /api/silences                       {"silences": [{id, symbol, type, severity, comment,
//                                              created_by, starts_at_ms, ends_at_ms, active, muted,
//                                              matchers, declared}]}
//   POST /api/silences                       body {symbol, type, severity, matchers: ["market=SH"],
//                                              duration_s, comment, created_by}
//   POST /api/silences/{id}/expire  (also DELETE /api/silences/{id})
// Refusals and bad input map to 4xx through http_code() (http_json.h).
#include <httplib.h>

#include <algorithm>

#include "http/http_json.h"
#include "http/http_server.h"

namespace ts::http {

namespace {

nlohmann::json silence_json(const SilenceInfo& s) {
  return {{"id", s.id},
          {"symbol", s.spec.symbol},
          {"type", s.spec.type},
          {"severity", s.spec.severity},
          {"comment", s.spec.comment},
          {"created_by", s.spec.created_by},
          {"starts_at_ms", s.starts_at_ms},
          {"ends_at_ms", s.ends_at_ms},
          {"active", s.active},
          {"muted", s.muted},
          {"matchers", s.matchers},
          {"declared", s.declared}};
}

// Reads {"version": "..."}; replies 400 and returns nothing when missing or not a string.
std::optional<std::string> version_field(const httplib::Request& req, httplib::Response& res) {
  auto body = parse_body(req, res);
  if (!body) return std::nullopt;
  auto v = string_field(*body, "version", res);
  if (!v) return std::nullopt;
  if (v->empty()) {
    reply_error(res, 400, "bad_field", "'version' is required");
    return std::nullopt;
  }
  return v;
}

}  // namespace

void HttpServer::add_admin_routes() {
  httplib::Server& s = *server_;
  auto no_models = [this](httplib::Response& res) {
    count_error("unavailable");
    reply_error(res, 503, "not_configured", "no model registry in this process (rules only)");
  };
  // Counts the error kinds of a finished admin call by its HTTP code.
  auto counted = [this](httplib::Response& res, const Status& st) {
    reply_status(res, st);
    const int code = http_code(st);
    if (code == 404) count_error("not_found");
    else if (code == 409) count_error("conflict");
    else if (code >= 500) count_error("internal");
    else if (code >= 400) count_error("bad_request");
  };

  s.Get("/api/models", [this, no_models](const httplib::Request&, httplib::Response& res) {
    if (!models_) return no_models(res);
    std::vector<ModelVersionInfo> versions = models_->list();
    std::sort(versions.begin(), versions.end(), [](const ModelVersionInfo& a, const ModelVersionInfo& b) {
      return a.name != b.name ? a.name < b.name : a.created_ms < b.created_ms;
    });
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : versions) {
      nlohmann::json j = {{"name", v.name},         {"version", v.version}, {"stage", v.stage},
                          {"created_ms", v.created_ms}, {"metrics", v.metrics}};
      if (!v.source.empty()) j["source"] = v.source;
      if (!v.backend.empty()) j["backend"] = v.backend;
      list.push_back(std::move(j));
    }
    reply_json(res, nlohmann::json{{"models", list}}.dump());
  });
  s.Post(R"(/api/models/([^/]+)/(promote|rollback|shadow))",
         [this, no_models, counted](const httplib::Request& req, httplib::Response& res) {
           if (!models_) return no_models(res);
           const std::string name = req.matches[1], action = req.matches[2];
           if (action == "rollback") return counted(res, models_->rollback(name));
           auto version = version_field(req, res);
           if (!version) return count_error("bad_request");
           counted(res, action == "promote" ? models_->promote(name, *version) : models_->shadow(name, *version));
         });

  auto no_silences = [this](httplib::Response& res) {
    count_error("unavailable");
    reply_error(res, 503, "not_configured", "no silence store in this process");
  };
  s.Get("/api/silences", [this, no_silences](const httplib::Request&, httplib::Response& res) {
    if (!silences_) return no_silences(res);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& si : silences_->list()) list.push_back(silence_json(si));
    reply_json(res, nlohmann::json{{"silences", list}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
  s.Post("/api/silences", [this, no_silences, counted](const httplib::Request& req, httplib::Response& res) {
    if (!silences_) return no_silences(res);
    auto body = parse_body(req, res);
    if (!body) return count_error("bad_request");
    SilenceSpec spec;
    for (auto [key, out] : {std::pair{"symbol", &spec.symbol}, {"type", &spec.type}, {"severity", &spec.severity},
                            {"comment", &spec.comment}, {"created_by", &spec.created_by}}) {
      auto v = string_field(*body, key, res);
      if (!v) return count_error("bad_request");
      *out = *v;
    }
    if (body->contains("matchers")) {
      const auto& m = (*body)["matchers"];
      if (!m.is_array() || !std::all_of(m.begin(), m.end(), [](const nlohmann::json& x) { return x.is_string(); })) {
        count_error("bad_request");
        return reply_error(res, 400, "bad_field", "'matchers' must be an array of strings (symbol=GOOG, type=~\"limit_.*\")");
      }
      spec.matchers = m.get<std::vector<std::string>>();
    }
    if (body->contains("duration_s")) {
      const auto& d = (*body)["duration_s"];
      if (!d.is_number() || !(d.get<double>() > 0) || d.get<double>() > 1e9) {
        count_error("bad_request");
        return reply_error(res, 400, "bad_field", "'duration_s' must be a positive number of seconds");
      }
      spec.duration_ms = int64_t(d.get<double>() * 1000);
    }
    Result<SilenceInfo> created = silences_->create(spec);
    if (!created.is_ok()) return counted(res, created.status());
    reply_json(res, silence_json(created.value()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 201);
  });
  auto expire = [this, no_silences, counted](const httplib::Request& req, httplib::Response& res) {
    if (!silences_) return no_silences(res);
    counted(res, silences_->expire(req.matches[1]));
  };
  s.Post(R"(/api/silences/([^/]+)/expire)", expire);
  s.Delete(R"(/api/silences/([^/]+))", expire);
}

}  // namespace ts::http
