#include "notify/http_client.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>
#include <mutex>

namespace ts::notify {

namespace {
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* p, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(p, size * n);
  return size * n;
}

struct MailReader {
  const std::string* data;
  size_t pos = 0;
};

size_t on_read(char* buf, size_t size, size_t n, void* user) {
  auto* r = static_cast<MailReader*>(user);
  const size_t len = std::min(size * n, r->data->size() - r->pos);
  std::memcpy(buf, r->data->data() + r->pos, len);
  r->pos += len;
  return len;
}
}  // namespace

HttpClient::HttpClient() {
  global_init();
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (curl_) curl_easy_cleanup(curl_);
}

Result<HttpResponse> HttpClient::post(const std::string& url, const std::string& content_type, const std::string& body,
                                      int64_t timeout_ms, const std::vector<std::string>& headers) {
  if (!curl_) return Status(StatusCode::kInternal, "curl_easy_init failed");
  HttpResponse resp;
  char err[CURL_ERROR_SIZE] = {0};
  curl_slist* hl = curl_slist_append(nullptr, ("Content-Type: " + content_type).c_str());
  hl = curl_slist_append(hl, "Expect:");  // no 100-continue round trip
  for (const auto& h : headers) hl = curl_slist_append(hl, h.c_str());
  curl_easy_reset(curl_);  // keeps the connection cache
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_POST, 1L);
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, long(body.size()));
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, long(timeout_ms));
  curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, long(timeout_ms));
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &resp.body);
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, err);
  const CURLcode rc = curl_easy_perform(curl_);
  curl_slist_free_all(hl);
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, nullptr);
  if (rc != CURLE_OK) {
    return Status(StatusCode::kIoError, "POST " + url + ": " + (err[0] ? err : curl_easy_strerror(rc)));
  }
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &resp.status);
  return resp;
}

Status HttpClient::send_mail(const SmtpMessage& m, int64_t timeout_ms) {
  CURL* c = curl_easy_init();  // a mail is rare: a fresh handle keeps SMTP state apart from HTTP
  if (!c) return Status(StatusCode::kInternal, "curl_easy_init failed");
  char err[CURL_ERROR_SIZE] = {0};
  curl_slist* rcpt = nullptr;
  for (const auto& t : m.to) rcpt = curl_slist_append(rcpt, ("<" + t + ">").c_str());
  MailReader reader{&m.data};
  curl_easy_setopt(c, CURLOPT_URL, m.url.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, ("<" + m.from + ">").c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
  if (!m.username.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, m.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, m.password.c_str());
  }
  curl_easy_setopt(c, CURLOPT_USE_SSL, m.starttls == 2 ? long(CURLUSESSL_ALL) : m.starttls == 1 ? long(CURLUSESSL_TRY)
                                                                                               : long(CURLUSESSL_NONE));
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, m.tls_verify ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, m.tls_verify ? 2L : 0L);
  if (!m.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, m.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
  curl_easy_setopt(c, CURLOPT_READDATA, &reader);
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, long(timeout_ms));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(rcpt);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) {
    return Status(StatusCode::kIoError, "SMTP " + m.url + ": " + (err[0] ? err : curl_easy_strerror(rc)));
  }
  return Status::ok();
}

std::string HttpClient::url_escape(const std::string& s) {
  char* e = curl_easy_escape(curl_, s.data(), int(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

std::string hmac_sha256_base64(const std::string& key, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac, &mac_len);
  std::string b64(4 * ((mac_len + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), mac, int(mac_len));
  b64.resize(size_t(n));
  return b64;
}

}  // namespace ts::notify
