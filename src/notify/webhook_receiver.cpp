// Webhook receivers: generic JSON (Alertmanager-like), Slack, WeCom, DingTalk, Feishu/Lark.
#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "notify/http_client.h"
#include "notify/receiver.h"

namespace ts::notify {

using nlohmann::json;

const char* receiver_kind_name(ReceiverKind k) {
  switch (k) {
    case ReceiverKind::kWebhook: return "webhook";
    case ReceiverKind::kSlack: return "slack";
    case ReceiverKind::kWeCom: return "wecom";
    case ReceiverKind::kDingTalk: return "dingtalk";
    case ReceiverKind::kFeishu: return "feishu";
    case ReceiverKind::kEmail: return "email";
    case ReceiverKind::kSms: return "sms";
  }
  return "?";
}

std::string dingtalk_signed_url(const std::string& url, const std::string& secret, int64_t now_ms) {
  const std::string ts = std::to_string(now_ms);
  const std::string sign = hmac_sha256_base64(secret, ts + "\n" + secret);
  char* esc = curl_escape(sign.c_str(), int(sign.size()));
  std::string out = url + (url.find('?') == std::string::npos ? "?" : "&") + "timestamp=" + ts + "&sign=" + esc;
  curl_free(esc);
  return out;
}

namespace {

json labels_json(const Labels& l) {
  json j = json::object();
  for (const auto& [k, v] : l.items()) j[k] = v;
  return j;
}

// HTTP status and, for IM APIs, the errcode in a 200 body.
Status check_response(const std::string& what, const HttpResponse& r, ReceiverKind kind) {
  if (r.status == 408 || r.status == 429 || r.status >= 500) {
    return Status(StatusCode::kIoError, what + ": HTTP " + std::to_string(r.status));
  }
  if (r.status < 200 || r.status >= 300) {
    return Status(StatusCode::kInvalidArgument, what + ": HTTP " + std::to_string(r.status) + " " + r.body.substr(0, 200));
  }
  if (kind == ReceiverKind::kWeCom || kind == ReceiverKind::kDingTalk || kind == ReceiverKind::kFeishu) {
    const json j = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      const char* key = kind == ReceiverKind::kFeishu ? "code" : "errcode";
      if (j.contains(key) && j[key].is_number_integer() && j[key].get<int64_t>() != 0) {
        return Status(StatusCode::kIoError, what + ": " + r.body.substr(0, 200));
      }
    }
  }
  return Status::ok();
}

class WebhookReceiver : public Receiver {
 public:
  explicit WebhookReceiver(ReceiverConfig c) : c_(std::move(c)) {}

  Status send(const Notification& n) override {
    const std::string title = c_.title.render(n, c_.max_alerts);
    const std::string text = c_.text.render(n, c_.max_alerts, TemplateEscape::kNone, {{"title", title}});
    std::string url = c_.url;
    json body;
    switch (c_.kind) {
      case ReceiverKind::kSlack:
        body = {{"text", "*" + title + "*\n" + text}};
        break;
      case ReceiverKind::kWeCom:
        body = {{"msgtype", "markdown"}, {"markdown", {{"content", "**" + title + "**\n" + text}}}};
        break;
      case ReceiverKind::kDingTalk:
        body = {{"msgtype", "markdown"}, {"markdown", {{"title", title}, {"text", "#### " + title + "\n\n" + text}}}};
        if (!c_.secret.empty()) url = dingtalk_signed_url(url, c_.secret, wall_ns() / 1'000'000);
        break;
      case ReceiverKind::kFeishu:
        body = {{"msg_type", "text"}, {"content", {{"text", title + "\n" + text}}}};
        if (!c_.secret.empty()) {
          // Feishu/Lark custom bots: sign = base64(HMAC-SHA256(key "<ts>\n<secret>", empty message)).
          const std::string ts = std::to_string(wall_ns() / kNsPerSec);
          body["timestamp"] = ts;
          body["sign"] = hmac_sha256_base64(ts + "\n" + c_.secret, "");
        }
        break;
      default:
        body = generic(n, title, text);
        break;
    }
    auto r = http_.post(url, "application/json", body.dump(), c_.timeout_ms, c_.headers);
    if (!r.is_ok()) return r.status().with_context(c_.name);
    return check_response(c_.name, r.value(), c_.kind);
  }

 private:
  // Alertmanager's webhook shape, so tools written for it read ours.
  json generic(const Notification& n, const std::string& title, const std::string& text) const {
    json alerts = json::array();
    for (const auto& a : n.alerts) {
      alerts.push_back({{"status", a.resolved ? "resolved" : "firing"},
                        {"labels", labels_json(a.labels)},
                        {"annotations", {{"summary", a.summary}}},
                        {"alertId", a.alert_id},
                        {"exchTsNs", a.exch_ts_ns},
                        {"startsAtUnixNs", a.alert_unix_ns},
                        {"endsAtUnixNs", a.ends_unix_ns},
                        {"fingerprint", a.fingerprint()}});
    }
    return {{"version", "1"}, {"receiver", n.receiver}, {"status", n.status()}, {"groupKey", n.group_key},
            {"groupLabels", labels_json(n.group_labels)}, {"commonLabels", labels_json(n.common_labels())},
            {"title", title}, {"text", text}, {"alerts", std::move(alerts)}};
  }

  ReceiverConfig c_;
  HttpClient http_;
};

}  // namespace

std::unique_ptr<Receiver> make_webhook_receiver(const ReceiverConfig& c) { return std::make_unique<WebhookReceiver>(c); }

std::unique_ptr<Receiver> make_receiver(const ReceiverConfig& c) {
  switch (c.kind) {
    case ReceiverKind::kEmail: return make_email_receiver(c);
    case ReceiverKind::kSms: return make_sms_receiver(c);
    default: return make_webhook_receiver(c);
  }
}

}  // namespace ts::notify
