// Email over SMTP (libcurl): one mail per notification to every address in `to`.
#include <openssl/evp.h>

#include <ctime>

#include "core/clock.h"
#include "notify/http_client.h"
#include "notify/receiver.h"

namespace ts::notify {

namespace {

bool is_ascii(const std::string& s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

// RFC 2047 encoded word for a non-ASCII subject (企业 alerts carry Chinese text).
std::string encode_header(const std::string& s) {
  if (is_ascii(s)) return s;
  std::string b64(4 * ((s.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                                reinterpret_cast<const unsigned char*>(s.data()), int(s.size()));
  b64.resize(size_t(n));
  return "=?UTF-8?B?" + b64 + "?=";
}

std::string crlf(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

std::string rfc5322_date(int64_t unix_ns) {
  const std::time_t t = std::time_t(unix_ns / kNsPerSec);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

class EmailReceiver : public Receiver {
 public:
  explicit EmailReceiver(ReceiverConfig c) : c_(std::move(c)) {}

  Status send(const Notification& n) override {
    const std::string subject = c_.title.render(n, c_.max_alerts);
    const std::string body = c_.text.render(n, c_.max_alerts, TemplateEscape::kNone, {{"title", subject}});
    const int64_t now = wall_ns();
    std::string to_list;
    for (const auto& t : c_.to) to_list += (to_list.empty() ? "" : ", ") + t;
    SmtpMessage m;
    m.url = c_.url;
    m.from = c_.from;
    m.to = c_.to;
    m.username = c_.username;
    m.password = c_.password;
    m.starttls = c_.starttls;
    m.tls_verify = c_.tls_verify;
    m.ca_file = c_.ca_file;
    m.data = "Date: " + rfc5322_date(now) + "\r\nFrom: " + c_.from + "\r\nTo: " + to_list +
             "\r\nSubject: " + encode_header(subject) + "\r\nMessage-ID: <" + std::to_string(now) + "." +
             std::to_string(++sent_) + "@ticksentry>\r\nMIME-Version: 1.0\r\n"
             "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n"
             "X-Ticksentry-Group: " + n.group_key + "\r\n\r\n" + crlf(body) + "\r\n";
    return http_.send_mail(m, c_.timeout_ms).with_context(c_.name);
  }

 private:
  ReceiverConfig c_;
  HttpClient http_;
  uint64_t sent_ = 0;
};

}  // namespace

std::unique_ptr<Receiver> make_email_receiver(const ReceiverConfig& c) { return std::make_unique<EmailReceiver>(c); }

}  // namespace ts::notify
