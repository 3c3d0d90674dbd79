#pragma once
// Small helpers every route uses: JSON replies, JSON errors, Status → HTTP code.
// Every error reply is {"error": "<code>", "message": "<what was wrong>"}.
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"

namespace ts::http {

inline void reply_json(httplib::Response& res, const std::string& body, int code = 200) {
  res.status = code;
  res.set_header("Cache-Control", "no-store");
  res.set_content(body, "application/json");
}

inline void reply_error(httplib::Response& res, int code, const std::string& error, const std::string& message) {
  reply_json(res, nlohmann::json{{"error", error}, {"message", message}}.dump(-1, ' ', false,
             nlohmann::json::error_handler_t::replace), code);
}

// ok → 200, invalid/out of range/parse → 400, not found → 404, unsupported (a refusal) → 409,
// anything else → 500 (see http/admin_api.h).
inline int http_code(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kParseError: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kUnsupported: return 409;
    default: return 500;
  }
}

inline void reply_status(httplib::Response& res, const Status& st) {
  if (st.is_ok()) {
    reply_json(res, "{\"ok\":true}");
  } else {
    reply_error(res, http_code(st), status_code_name(st.code()), st.message());
  }
}

// Parses a JSON object body; on failure replies 400 and returns nothing.
inline std::optional<nlohmann::json> parse_body(const httplib::Request& req, httplib::Response& res) {
  nlohmann::json j = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    reply_error(res, 400, "bad_json", "the request body must be a JSON object");
    return std::nullopt;
  }
  return j;
}

// A string field of a JSON body: "" when absent; nothing (and a 400 reply) when not a string.
inline std::optional<std::string> string_field(const nlohmann::json& j, const char* key, httplib::Response& res) {
  if (!j.contains(key) || j[key].is_null()) return std::string();
  if (!j[key].is_string()) {
    reply_error(res, 400, "bad_field", std::string("'") + key + "' must be a string");
    return std::nullopt;
  }
  return j[key].get<std::string>();
}

}  // namespace ts::http
