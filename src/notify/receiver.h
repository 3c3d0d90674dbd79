#pragma once
// Receivers: where notifications go. One interface, one implementation per channel family:
//   webhook_receiver.cpp  generic JSON, Slack, WeCom (企业微信), DingTalk (钉钉, HMAC-signed URL),
//                         Feishu/Lark (optionally signed)
//   email_receiver.cpp    SMTP through libcurl (STARTTLS, AUTH)
//   sms_receiver.cpp      an HTTP SMS gateway, one request per number, body from a template
//
// send() returns ok when the peer accepted the notification. Errors: kIoError for failures
// worth retrying (refused, timeout, 5xx, 429, an IM API's non-zero errcode); kInvalidArgument
// for ones that will never succeed (other 4xx: bad URL or key), which the outbox gives up on
// at once. Threading: one delivery thread per receiver calls send(); a receiver may block (it
// does network I/O) but never longer than its timeout_ms per request.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "notify/notification.h"
#include "notify/retry_policy.h"
#include "notify/template.h"

namespace ts::notify {

enum class ReceiverKind : uint8_t { kWebhook = 0, kSlack, kWeCom, kDingTalk, kFeishu, kEmail, kSms };
const char* receiver_kind_name(ReceiverKind k);  // "webhook", "slack", "wecom", "dingtalk", "feishu", "email", "sms"

struct ReceiverConfig {
  std::string name;
  ReceiverKind kind = ReceiverKind::kWebhook;
  std::string url;                   // webhook/SMS gateway URL; smtp://host:port for email
  std::string secret;                // DingTalk/Feishu signing secret (empty: unsigned)
  Template title;                    // subject / message title
  Template text;                     // message body
  int max_alerts = 20;               // alert lines per message before "... and N more"
  int64_t timeout_ms = 5000;         // per request
  double rate_per_s = 10;            // token bucket: sustained notifications per second
  int burst = 20;                    // ... and how many may go at once
  std::vector<std::string> headers;  // extra HTTP headers ("Authorization: Bearer x")
  RetryPolicy retry;                 // [notify.retry], overridden by the receiver's retry = {...}
  // email
  std::string from;
  std::vector<std::string> to;       // mail recipients, or SMS numbers
  std::string username, password;
  int starttls = 1;                  // 0 off, 1 try (default), 2 required
  bool tls_verify = true;
  std::string ca_file;
  // sms
  Template body;                     // gateway request body; values JSON-escaped when content_type is JSON
  std::string content_type = "application/json";
};

class Receiver {
 public:
  virtual ~Receiver() = default;
  virtual Status send(const Notification& n) = 0;
};

std::unique_ptr<Receiver> make_webhook_receiver(const ReceiverConfig& c);
std::unique_ptr<Receiver> make_email_receiver(const ReceiverConfig& c);
std::unique_ptr<Receiver> make_sms_receiver(const ReceiverConfig& c);
std::unique_ptr<Receiver> make_receiver(const ReceiverConfig& c);

// The DingTalk signed URL: url + "&timestamp=<ms>&sign=<urlencoded base64 HMAC-SHA256(secret,
// "<ms>\n<secret>")>" (DingTalk's custom-robot rule). Exposed for tests.
std::string dingtalk_signed_url(const std::string& url, const std::string& secret, int64_t now_ms);

}  // namespace ts::notify
