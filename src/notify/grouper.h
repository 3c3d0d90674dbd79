#pragma once
// Aggregation groups (Alertmanager's group_by / group_wait / group_interval / repeat_interval).
//
// An alert taken by a route joins the group of (route, values of the route's group_by labels).
// A new group sends its first notification group_wait_ms after its first alert; after that a
// group sends at most one notification per group_interval_ms, holding every alert that arrived
// meanwhile. A notification carries the group's new alerts, its still-firing alerts that have
// an end (limit_up_sealed until limit_up_opened), and its alerts that ended since the last one
// (when the route has send_resolved). Event alerts (no end) are notified once and then dropped;
// alerts with an end are re-sent every repeat_interval_ms while they fire. A group with nothing
// left is forgotten group_interval_ms after its last notification.
//
// Threading: one thread (the notifier's router thread). Times are any monotonic ns clock the
// caller uses consistently (tests pass made-up times).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "notify/notification.h"
#include "notify/route.h"

namespace ts::notify {

class Grouper {
 public:
  // `route` must outlive the Grouper (the notifier's config owns the tree).
  void add(const Route& route, const NotifyAlert& a, int64_t now_ns);
  // Ends every firing alert of type `ended` on `symbol` (in every group). Returns how many ended.
  int resolve(AlertType ended, const std::string& symbol, int64_t now_ns, int64_t now_unix_ns);
  // Appends the notifications due at `now_ns` to `out`.
  void flush_due(int64_t now_ns, int64_t now_unix_ns, std::vector<Notification>& out);
  // Shutdown: every group with unsent content sends now, whatever its timers say.
  void flush_all(int64_t now_unix_ns, std::vector<Notification>& out);
  // The earliest time a group is due (INT64_MAX when none).
  int64_t next_due_ns() const;
  size_t group_count() const { return groups_.size(); }

 private:
  struct Entry {
    NotifyAlert alert;
    bool notified = false;
  };
  struct Group {
    const Route* route = nullptr;
    Labels group_labels;
    std::map<std::string, Entry> entries;  // by fingerprint
    bool dirty = false;                    // something not yet notified
    int64_t next_ns = INT64_MAX;
    int64_t last_flush_ns = INT64_MIN;
  };
  void schedule_change(Group& g, int64_t now_ns);
  void emit(const std::string& key, Group& g, int64_t now_ns, int64_t now_unix_ns, std::vector<Notification>& out);

  std::map<std::string, Group> groups_;
};

}  // namespace ts::notify
