#pragma once
// The [notify] section of the config file (reference and example: docs/notifications.md).
// Read and validated at start-up: every mistake is a ConfigError naming the key
// ("config key notify.route.routes[0].matchers: matcher 'severity==x': ...").
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "notify/delivery.h"
#include "notify/inhibitor.h"
#include "notify/receiver.h"
#include "notify/route.h"

namespace ts::notify {

struct NotifyConfig {
  std::string outbox_db = "ticksentry-outbox.db";  // SQLite file: outbox, delivery record, silences
  bool outbox_sync_full = false;    // synchronous=FULL (survives power loss; slower commits)
  int queue_capacity = 4096;        // alerts between the sink thread and the router; beyond: spilled to the outbox
  bool time_by_exchange = true;     // time windows see the alert's exchange time ("exchange") or now ("wall")
  int64_t drain_ms = 2000;          // at shutdown, keep delivering this long; the rest waits in the outbox
  // Not read from [notify]: the app sets them to the audit store of [sinks] so that deliveries are
  // recorded there (delivery_audit.h): the SQLite file audit_db, or with audit_backend =
  // "postgres" the database audit_postgres_dsn (which then wins). Both "" = no delivery audit.
  std::string audit_db;
  std::string audit_postgres_dsn;
  Route route;
  std::vector<ReceiverConfig> receivers;
  std::vector<InhibitRule> inhibit_rules;
  RetryPolicy retry;                // [notify.retry]: every receiver's unless it sets its own (ReceiverConfig::retry)
};

// Whether the file has a [notify] section (notifications are off without one).
bool has_notify_section(const Config& config);
// Reads [notify]; throws ConfigError. Keys under [notify] count as read (unknown ones are refused here).
NotifyConfig read_notify_config(const Config& config);

}  // namespace ts::notify
