#include "notify/route.h"

#include <algorithm>

namespace ts::notify {

namespace {
void match_into(const Route& r, const Labels& labels, std::vector<const Route*>& out) {
  const size_t before = out.size();
  for (const Route& child : r.routes) {
    if (!matches_all(child.matchers, labels)) continue;
    match_into(child, labels, out);
    if (!child.continue_matching) break;
  }
  if (out.size() == before) out.push_back(&r);
}
}  // namespace

std::vector<const Route*> Route::match(const Labels& labels) const {
  std::vector<const Route*> out;
  if (matches_all(matchers, labels)) match_into(*this, labels, out);
  return out;
}

bool Route::active_at(int64_t unix_ns) const {
  const auto in = [&](const TimeWindow& w) { return w.contains(unix_ns); };
  if (std::any_of(mute_time_windows.begin(), mute_time_windows.end(), in)) return false;
  if (!active_time_windows.empty() && std::none_of(active_time_windows.begin(), active_time_windows.end(), in)) {
    return false;
  }
  return true;
}

}  // namespace ts::notify
