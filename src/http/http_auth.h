#pragma once
// Token authentication for the dashboard and the admin API.
//
// A request is authenticated when it carries the token in any of
//   - "Authorization: Bearer <token>" (scripts, curl);
//   - the cookie "ts_token" (browsers: set by visiting /?token=<token> once, HttpOnly,
//     SameSite=Strict);
//   - the query parameter "token" (EventSource cannot send headers; also the login link).
// Requests that change state (POST, PUT, DELETE) authenticated by the cookie alone must also
// carry "X-Requested-With: ticksentry": a custom header a cross-site page cannot send without a
// CORS preflight, which ticksentry never grants (CSRF protection). Tokens are compared in
// constant time. /healthz needs no token.
#include <string>

namespace httplib {
struct Request;
}

namespace ts::http {

enum class AuthResult { kOk, kMissing, kWrong, kCsrf };
const char* auth_result_name(AuthResult r);  // "ok", "missing_token", "wrong_token", "csrf"

AuthResult check_token(const httplib::Request& req, const std::string& token);

// Constant-time string comparison (time depends on the lengths only).
bool token_equal(const std::string& a, const std::string& b);

// 32 hex characters from /dev/urandom (std::random_device).
std::string random_token();

// Where the login link (/?token=...) sends the browser after setting the cookie: `path` when it
// is a path on this server ("/", "/symbol/AAPL"), else "/". Never another site: "//evil.example"
// (a scheme-relative URL), "/\\evil.example" (browsers read "\\" as "/"), anything not
// starting with "/" and anything with control characters becomes "/".
std::string login_redirect_target(const std::string& path);

// "ts_token=<token>; Path=/; HttpOnly; SameSite=Strict"
std::string token_cookie(const std::string& token);

}  // namespace ts::http
