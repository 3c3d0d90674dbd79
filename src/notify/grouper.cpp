#include "notify/grouper.h"

#include <algorithm>

namespace ts::notify {

namespace {
int64_t ms_to_ns(int64_t ms) { return ms * 1'000'000; }

bool firing_with_end(const NotifyAlert& a) { return !a.resolved && has_end(a.type); }
}  // namespace

void Grouper::schedule_change(Group& g, int64_t now_ns) {
  g.dirty = true;
  if (g.last_flush_ns == INT64_MIN) return;  // the first message waits out group_wait, set at creation
  g.next_ns = std::min(g.next_ns, std::max(now_ns, g.last_flush_ns + ms_to_ns(g.route->group_interval_ms)));
}

void Grouper::add(const Route& route, const NotifyAlert& a, int64_t now_ns) {
  Labels gl;
  const bool all = route.group_by.size() == 1 && route.group_by[0] == "...";
  if (all) {
    gl = a.labels;
  } else {
    for (const auto& name : route.group_by) gl.set(name, a.labels.get(name));
  }
  const std::string key = route.id + "{" + gl.to_string() + "}";
  auto [it, fresh] = groups_.try_emplace(key);
  Group& g = it->second;
  if (fresh) {
    g.route = &route;
    g.group_labels = std::move(gl);
    g.next_ns = now_ns + ms_to_ns(route.group_wait_ms);
  }
  g.entries[a.fingerprint()] = Entry{a, false};
  schedule_change(g, now_ns);
}

int Grouper::resolve(AlertType ended, const std::string& symbol, int64_t now_ns, int64_t now_unix_ns) {
  int n = 0;
  for (auto& [key, g] : groups_) {
    for (auto it = g.entries.begin(); it != g.entries.end();) {
      NotifyAlert& a = it->second.alert;
      if (a.type != ended || a.resolved || a.labels.get("symbol") != symbol) {
        ++it;
        continue;
      }
      ++n;
      if (!g.route->send_resolved || !it->second.notified) {
        // Not announced yet (or resolutions not wanted): nothing to tell anyone.
        it = g.entries.erase(it);
        continue;
      }
      a.resolved = true;
      a.ends_unix_ns = now_unix_ns;
      it->second.notified = false;
      schedule_change(g, now_ns);
      ++it;
    }
  }
  return n;
}

void Grouper::emit(const std::string& key, Group& g, int64_t now_ns, int64_t now_unix_ns,
                   std::vector<Notification>& out) {
  Notification n;
  n.receiver = g.route->receiver;
  n.route_id = g.route->id;
  n.group_key = key;
  n.group_labels = g.group_labels;
  n.created_unix_ns = now_unix_ns;
  bool all_resolved = true;
  for (auto& [fp, e] : g.entries) {
    // A repeat (nothing new) re-sends only what still fires; otherwise everything in the group.
    if (!g.dirty && !firing_with_end(e.alert)) continue;
    n.alerts.push_back(e.alert);
    all_resolved = all_resolved && e.alert.resolved;
    if (!e.notified) {
      const int64_t t = e.alert.resolved ? e.alert.ends_unix_ns : e.alert.alert_unix_ns;
      n.news_unix_ns = n.news_unix_ns ? std::min(n.news_unix_ns, t) : t;
    }
  }
  // Read in the order things happened (entries are keyed by fingerprint, not time).
  std::stable_sort(n.alerts.begin(), n.alerts.end(), [](const NotifyAlert& a, const NotifyAlert& b) {
    return a.exch_ts_ns != b.exch_ts_ns ? a.exch_ts_ns < b.exch_ts_ns : a.alert_id < b.alert_id;
  });
  n.resolved = all_resolved;
  if (!n.news_unix_ns) n.news_unix_ns = now_unix_ns;  // a repeat: measured from when it was due
  if (!n.alerts.empty()) out.push_back(std::move(n));
  for (auto it = g.entries.begin(); it != g.entries.end();) {
    if (firing_with_end(it->second.alert)) {
      it->second.notified = true;
      ++it;
    } else {
      it = g.entries.erase(it);
    }
  }
  g.dirty = false;
  g.last_flush_ns = now_ns;
  g.next_ns = g.entries.empty() ? now_ns + ms_to_ns(g.route->group_interval_ms)
                                : now_ns + ms_to_ns(g.route->repeat_interval_ms);
}

void Grouper::flush_due(int64_t now_ns, int64_t now_unix_ns, std::vector<Notification>& out) {
  for (auto it = groups_.begin(); it != groups_.end();) {
    Group& g = it->second;
    if (g.next_ns > now_ns) {
      ++it;
      continue;
    }
    if (!g.dirty && g.entries.empty()) {
      it = groups_.erase(it);  // quiet for a whole group_interval: forget it
      continue;
    }
    emit(it->first, g, now_ns, now_unix_ns, out);
    ++it;
  }
}

void Grouper::flush_all(int64_t now_unix_ns, std::vector<Notification>& out) {
  for (auto& [key, g] : groups_) {
    if (g.dirty) emit(key, g, g.last_flush_ns == INT64_MIN ? 0 : g.last_flush_ns, now_unix_ns, out);
  }
}

int64_t Grouper::next_due_ns() const {
  int64_t t = INT64_MAX;
  for (const auto& [key, g] : groups_) t = std::min(t, g.next_ns);
  return t;
}

}  // namespace ts::notify
