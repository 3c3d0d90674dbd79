#include "http/http_auth.h"

#include <httplib.h>

#include <random>

namespace ts::http {

namespace {
std::string cookie_value(const std::string& cookies, const std::string& name) {
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    size_t start = cookies.find_first_not_of(' ', pos);
    if (start < end && cookies.compare(start, name.size() + 1, name + "=") == 0) {
      return cookies.substr(start + name.size() + 1, end - start - name.size() - 1);
    }
    pos = end + 1;
  }
  return {};
}
}  // namespace

const char* auth_result_name(AuthResult r) {
  switch (r) {
    case AuthResult::kOk: return "ok";
    case AuthResult::kMissing: return "missing_token";
    case AuthResult::kWrong: return "wrong_token";
    case AuthResult::kCsrf: return "csrf";
  }
  return "?";
}

bool token_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

AuthResult check_token(const httplib::Request& req, const std::string& token) {
  const std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0) {
    return token_equal(auth.substr(7), token) ? AuthResult::kOk : AuthResult::kWrong;
  }
  if (req.has_param("token")) {
    return token_equal(req.get_param_value("token"), token) ? AuthResult::kOk : AuthResult::kWrong;
  }
  const std::string cookie = cookie_value(req.get_header_value("Cookie"), "ts_token");
  if (cookie.empty()) return AuthResult::kMissing;
  if (!token_equal(cookie, token)) return AuthResult::kWrong;
  const bool mutating = req.method == "POST" || req.method == "PUT" || req.method == "DELETE";
  if (mutating && req.get_header_value("X-Requested-With") != "ticksentry") return AuthResult::kCsrf;
  return AuthResult::kOk;
}

std::string random_token() {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = rd();
    for (int k = 0; k < 4; ++k) {
      t += kHex[v & 15];
      v >>= 4;
    }
  }
  return t;
}

std::string login_redirect_target(const std::string& path) {
  if (path.empty() || path[0] != '/') return "/";
  if (path.size() > 1 && (path[1] == '/' || path[1] == '\\')) return "/";
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f || c == '\\') return "/";
  }
  return path;
}

std::string token_cookie(const std::string& token) {
  return "ts_token=" + token + "; Path=/; HttpOnly; SameSite=Strict";
}

}  // namespace ts::http
