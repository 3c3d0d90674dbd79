#pragma once
// Inhibition: an alert matching a rule's source_matchers mutes, for duration_ms, every later
// alert that matches the rule's target_matchers and has the same values of the rule's `equal`
// labels — e.g. an index crash alert on 000001.SH mutes per-symbol alerts of market SH. A source
// alert with an end (limit_up_sealed) stays active until it ends, however long that is. An alert
// never inhibits itself.
//
// Threading: one thread (the router). Times: the caller's monotonic ns.
#include <cstdint>
#include <string>
#include <vector>

#include "notify/matcher.h"
#include "notify/notification.h"

namespace ts::notify {

struct InhibitRule {
  std::vector<Matcher> source_matchers;
  std::vector<Matcher> target_matchers;
  std::vector<std::string> equal;
  int64_t duration_ms = 300'000;  // how long an event source alert stays active
};

class Inhibitor {
 public:
  explicit Inhibitor(std::vector<InhibitRule> rules) : rules_(std::move(rules)) {}
  // Records `a` as an active source for every rule it matches (call for every alert, muted or
  // not: a silenced crash alert still mutes its market).
  void observe(const NotifyAlert& a, int64_t now_ns);
  // Ends a source with an end (the router calls it when e.g. limit_up_opened arrives).
  void resolve(AlertType ended, const std::string& symbol);
  // Whether an active source mutes `a`.
  bool inhibited(const NotifyAlert& a, int64_t now_ns);
  size_t active_sources() const { return sources_.size(); }

 private:
  struct Source {
    size_t rule = 0;
    Labels labels;
    AlertType type;
    int64_t until_ns = 0;  // INT64_MAX while an alert with an end fires
  };
  std::vector<InhibitRule> rules_;
  std::vector<Source> sources_;
};

}  // namespace ts::notify
