#pragma once
// The routing tree (Alertmanager's): an alert enters at the root and descends into the first
// child whose matchers all match; with `continue = true` on that child it also tries the
// following siblings. A route none of whose children match takes the alert itself. The root
// matches everything. Children inherit receiver, group_by, timings and send_resolved from their
// parent unless they set them (done when the config is read).
//
// Time windows: a matched route whose active_time_windows are set and none contains the
// alert's time, or one of whose mute_time_windows contains it, is muted for that alert — the
// alert does not fall through to other routes (as in Alertmanager).
#include <cstdint>
#include <string>
#include <vector>

#include "notify/labels.h"
#include "notify/matcher.h"
#include "notify/time_window.h"

namespace ts::notify {

struct Route {
  std::string id;                        // position in the tree: "root", "root.0", "root.0.1"
  std::vector<Matcher> matchers;
  std::string receiver;
  std::vector<std::string> group_by;     // label names; ["..."] = every label (one group per alert set)
  int64_t group_wait_ms = 100;           // first notification of a new group waits this long
  int64_t group_interval_ms = 500;       // then at most one notification per group this often
  int64_t repeat_interval_ms = 300'000;  // still-firing alerts that have an end are re-sent this often
  bool send_resolved = true;             // notify when an alert with an end ends
  bool continue_matching = false;        // `continue`
  std::vector<TimeWindow> active_time_windows;
  std::vector<TimeWindow> mute_time_windows;
  std::vector<Route> routes;             // children

  // Routes that take an alert with these labels (at least the root, when it matches).
  std::vector<const Route*> match(const Labels& labels) const;
  // Whether the route notifies at `unix_ns` given its time windows.
  bool active_at(int64_t unix_ns) const;
};

}  // namespace ts::notify
