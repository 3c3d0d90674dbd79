#include "notify/inhibitor.h"

#include <algorithm>

namespace ts::notify {

void Inhibitor::observe(const NotifyAlert& a, int64_t now_ns) {
  for (size_t r = 0; r < rules_.size(); ++r) {
    if (!matches_all(rules_[r].source_matchers, a.labels)) continue;
    const int64_t until = has_end(a.type) ? INT64_MAX : now_ns + rules_[r].duration_ms * 1'000'000;
    auto same = std::find_if(sources_.begin(), sources_.end(),
                             [&](const Source& s) { return s.rule == r && s.labels == a.labels; });
    if (same != sources_.end()) {
      same->until_ns = std::max(same->until_ns, until);
    } else {
      sources_.push_back(Source{r, a.labels, a.type, until});
    }
  }
}

void Inhibitor::resolve(AlertType ended, const std::string& symbol) {
  std::erase_if(sources_, [&](const Source& s) { return s.type == ended && s.labels.get("symbol") == symbol; });
}

bool Inhibitor::inhibited(const NotifyAlert& a, int64_t now_ns) {
  std::erase_if(sources_, [&](const Source& s) { return s.until_ns <= now_ns; });
  for (const Source& s : sources_) {
    const InhibitRule& rule = rules_[s.rule];
    if (s.labels == a.labels) continue;  // never itself
    if (!matches_all(rule.target_matchers, a.labels)) continue;
    const bool equal = std::all_of(rule.equal.begin(), rule.equal.end(),
                                   [&](const std::string& n) { return s.labels.get(n) == a.labels.get(n); });
    if (equal) return true;
  }
  return false;
}

}  // namespace ts::notify
