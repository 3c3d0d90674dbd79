// SMS through an HTTP gateway: one request per number, body rendered from the receiver's `body`
// template with {{to}} (the number) and {{text}}'s variables; values are JSON-escaped when the
// gateway takes JSON.
#include "notify/http_client.h"
#include "notify/receiver.h"

namespace ts::notify {

namespace {

class SmsReceiver : public Receiver {
 public:
  explicit SmsReceiver(ReceiverConfig c) : c_(std::move(c)) {
    json_ = c_.content_type.find("json") != std::string::npos;
  }

  Status send(const Notification& n) override {
    // The short message itself: SMS has no title; the text template decides what fits.
    const std::string title = c_.title.render(n, c_.max_alerts);
    const std::string text = c_.text.render(n, c_.max_alerts, TemplateEscape::kNone, {{"title", title}});
    for (const std::string& number : c_.to) {
      const std::string body = c_.body.render(n, c_.max_alerts, json_ ? TemplateEscape::kJson : TemplateEscape::kNone,
                                              {{"to", number}, {"title", title}, {"text", text}});
      auto r = http_.post(c_.url, c_.content_type, body, c_.timeout_ms, c_.headers);
      if (!r.is_ok()) return r.status().with_context(c_.name);
      const long s = r.value().status;
      // A retry re-sends to every number (at-least-once); gateways deduplicate or people cope.
      if (s == 408 || s == 429 || s >= 500) {
        return Status(StatusCode::kIoError, c_.name + ": SMS gateway HTTP " + std::to_string(s));
      }
      if (s < 200 || s >= 300) {
        return Status(StatusCode::kInvalidArgument,
                      c_.name + ": SMS gateway HTTP " + std::to_string(s) + " " + r.value().body.substr(0, 200));
      }
    }
    return Status::ok();
  }

 private:
  ReceiverConfig c_;
  HttpClient http_;
  bool json_ = true;
};

}  // namespace

std::unique_ptr<Receiver> make_sms_receiver(const ReceiverConfig& c) { return std::make_unique<SmsReceiver>(c); }

}  // namespace ts::notify
