#include "http/store_silences.h"

#include <algorithm>

#include "core/clock.h"
#include "http/memory_silences.h"
#include "notify/labels.h"

namespace ts::http {

namespace {
// The admin API speaks milliseconds (starts_at_ms, match(now_ms)): silences made and expired
// here start and end on a millisecond edge, so a match in the very millisecond of a create sees
// the silence and one in the millisecond of an expire does not (with nanosecond edges either
// could go the other way: a flaky CI failure).
int64_t now_on_ms_edge_ns() { return wall_ns() / 1'000'000 * 1'000'000; }
}  // namespace

Result<SilenceInfo> StoreSilences::create(const SilenceSpec& spec) {
  if (Status st = validate_silence(spec); !st.is_ok()) return st;
  notify::Silence s;
  for (auto [name, value] : {std::pair{"symbol", &spec.symbol}, {"type", &spec.type}, {"severity", &spec.severity}}) {
    if (value->empty()) continue;
    auto m = notify::Matcher::make(name, notify::MatchOp::kEq, *value);
    if (!m.is_ok()) return m.status();
    s.matchers.push_back(std::move(m).value());
  }
  for (const std::string& text : spec.matchers) {
    auto m = notify::Matcher::parse(text);
    if (!m.is_ok()) return Status(StatusCode::kInvalidArgument, m.status().message());
    s.matchers.push_back(std::move(m).value());
  }
  s.author = spec.created_by.empty() ? "dashboard" : spec.created_by;
  s.comment = spec.comment;
  const int64_t now_ns = now_on_ms_edge_ns();
  s.starts_unix_ns = now_ns;
  s.ends_unix_ns = now_ns + spec.duration_ms * 1'000'000;
  auto id = store_.create(s, now_ns);
  if (!id.is_ok()) return id.status();
  for (const auto& made : store_.list(now_ns, /*include_expired=*/true)) {
    if (made.id == id.value()) return info(made, now_ns);
  }
  return Status(StatusCode::kInternal, "silence " + id.value() + " was stored but is not listed");
}

SilenceInfo StoreSilences::info(const notify::Silence& s, int64_t now_ns) {
  SilenceInfo i;
  i.id = s.id;
  i.spec.created_by = s.author;
  i.spec.comment = s.comment;
  i.spec.duration_ms = (s.ends_unix_ns - s.starts_unix_ns) / 1'000'000;
  i.starts_at_ms = s.starts_unix_ns / 1'000'000;
  i.ends_at_ms = s.ends_unix_ns / 1'000'000;
  i.active = s.active_at(now_ns);
  i.declared = store_.is_declared(s.id);
  for (const auto& m : s.matchers) {
    i.matchers.push_back(m.to_string());
    if (m.op() != notify::MatchOp::kEq) continue;
    if (m.name() == "symbol") i.spec.symbol = m.value();
    if (m.name() == "type") i.spec.type = m.value();
    if (m.name() == "severity") i.spec.severity = m.value();
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = muted_.find(s.id);
  i.muted = it == muted_.end() ? 0 : it->second;
  return i;
}

std::vector<SilenceInfo> StoreSilences::list() {
  const int64_t now_ns = wall_ns();
  std::vector<SilenceInfo> out;
  for (const auto& s : store_.list(now_ns, /*include_expired=*/true)) out.push_back(info(s, now_ns));
  std::stable_sort(out.begin(), out.end(), [](const SilenceInfo& a, const SilenceInfo& b) {
    if (a.active != b.active) return a.active;
    return a.starts_at_ms > b.starts_at_ms;
  });
  return out;
}

Status StoreSilences::expire(const std::string& id) { return store_.expire(id, now_on_ms_edge_ns()); }

std::optional<std::string> StoreSilences::match(const Alert& a, const SymbolTable& symbols, int64_t now_ms) {
  auto id = store_.silenced_by(notify::alert_labels(a, symbols), now_ms * 1'000'000);
  if (id) {
    std::lock_guard<std::mutex> lock(mu_);
    ++muted_[*id];
  }
  return id;
}

}  // namespace ts::http
