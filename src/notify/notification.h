#pragma once
// What the notifier handles after an Alert leaves the dispatcher: a NotifyAlert (labels plus
// the human-readable summary), and a Notification (one message to one receiver about one group
// of alerts), which is what the outbox stores (as JSON) and the receivers render.
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "notify/labels.h"

namespace ts::notify {

struct NotifyAlert {
  uint64_t alert_id = 0;
  AlertType type = AlertType::kRapidRise;
  Labels labels;                 // alert_labels()
  std::string summary;           // "600519.SH rapid_rise warning 1850.12 ret_60s_bps=312.5 (>=200) at 09:31:07.120"
  int64_t exch_ts_ns = 0;        // exchange time (0 when the source had none)
  int64_t alert_unix_ns = 0;     // wall-clock time the alert left detect: alert → delivered latency
  bool resolved = false;         // ended by a later alert (limit_up_opened ends limit_up_sealed)
  int64_t ends_unix_ns = 0;      // when it ended, resolved only

  // Identity within a group: an alert with an end is one alert until it ends (a re-fire
  // updates it); every event alert is its own (two rapid rises are two alerts).
  std::string fingerprint() const {
    return has_end(type) ? labels.to_string() : labels.to_string() + "#" + std::to_string(alert_id);
  }
  // The time time windows see: exchange time when known, else the alert's wall time.
  int64_t window_time_ns() const { return exch_ts_ns ? exch_ts_ns : alert_unix_ns; }
};

// Converts a dispatcher alert (sink thread). `now_mono_ns`/`now_unix_ns` place its emit stamp
// on the wall clock.
NotifyAlert make_notify_alert(const Alert& a, const SymbolTable& symbols, int64_t now_mono_ns, int64_t now_unix_ns);

struct Notification {
  std::string receiver;
  std::string route_id;
  std::string group_key;         // route id + group labels: one group per key
  Labels group_labels;           // the group_by labels' values
  bool resolved = false;         // every alert in it has ended ("resolved"), else "firing"
  std::vector<NotifyAlert> alerts;
  int64_t created_unix_ns = 0;
  // When the news in it happened: the earliest alert (or end) not in an earlier notification of
  // the group; 0 for a repeat. Not serialized: the outbox keeps it as alert_unix_ns.
  int64_t news_unix_ns = 0;

  const char* status() const { return resolved ? "resolved" : "firing"; }
  // Labels every alert has with the same value.
  Labels common_labels() const;
  // What alert → delivered latency is measured from: news_unix_ns when set, else the earliest
  // alert_unix_ns among the alerts.
  int64_t first_alert_unix_ns() const;
};

std::string notification_to_json(const Notification& n);
Result<Notification> notification_from_json(const std::string& text);
std::string notify_alert_to_json(const NotifyAlert& a);
Result<NotifyAlert> notify_alert_from_json(const std::string& text);

}  // namespace ts::notify
