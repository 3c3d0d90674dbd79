#pragma once
// One libcurl easy handle for one delivery thread: HTTP(S) POSTs with keep-alive (the
// connection to a webhook is reused between notifications, which is most of the ≤ 20 ms budget
// on a remote peer) and SMTP sends. Threading: one thread at a time (curl's rule).
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

typedef void CURL;

namespace ts::notify {

struct HttpResponse {
  long status = 0;
  std::string body;
};

struct SmtpMessage {
  std::string url;            // smtp://host:port or smtps://host:port
  std::string from;
  std::vector<std::string> to;
  std::string username, password;  // empty: no AUTH
  int starttls = 0;           // 0 off, 1 try, 2 required
  bool tls_verify = true;
  std::string ca_file;        // PEM bundle to trust (e.g. a test's self-signed certificate)
  std::string data;           // the RFC 5322 message (headers, blank line, body)
};

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // POSTs `body`. A transport failure (refused, timeout, DNS) is a kIoError naming the URL and
  // curl's message; any HTTP status is a response (the caller decides what counts as success).
  Result<HttpResponse> post(const std::string& url, const std::string& content_type, const std::string& body,
                            int64_t timeout_ms, const std::vector<std::string>& headers = {});
  // Sends one mail; kIoError with the server's complaint on failure.
  Status send_mail(const SmtpMessage& m, int64_t timeout_ms);
  // Percent-encodes `s` for a URL query value.
  std::string url_escape(const std::string& s);

 private:
  CURL* curl_ = nullptr;       // HTTP, reused (keep-alive)
};

// base64(HMAC-SHA256(key, message)).
std::string hmac_sha256_base64(const std::string& key, const std::string& message);

}  // namespace ts::notify
