#include "http/memory_silences.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.h"
#include "detect/alert.h"

namespace ts::http {

namespace {
constexpr int64_t kMaxSilenceMs = 30LL * 24 * 3600 * 1000;

bool known_type(const std::string& t) {
  for (int i = 0; i < kAlertTypeCount; ++i) {
    if (t == alert_type_name(static_cast<AlertType>(i))) return true;
  }
  return false;
}

int64_t now_wall_ms() { return wall_ns() / 1'000'000; }
}  // namespace

Status validate_silence(const SilenceSpec& s) {
  if (s.symbol.empty() && s.type.empty() && s.severity.empty() && s.matchers.empty()) {
    return {StatusCode::kInvalidArgument, "a silence needs at least one matcher (symbol, type, severity or matchers)"};
  }
  if (!s.type.empty() && !known_type(s.type)) {
    return {StatusCode::kInvalidArgument, "unknown alert type '" + s.type + "'"};
  }
  if (!s.severity.empty() && s.severity != "info" && s.severity != "warning" && s.severity != "critical") {
    return {StatusCode::kInvalidArgument, "unknown severity '" + s.severity + "' (info, warning, critical)"};
  }
  if (s.duration_ms <= 0 || s.duration_ms > kMaxSilenceMs) {
    return {StatusCode::kInvalidArgument, "duration must be in (0, 30 days]"};
  }
  if (s.symbol.size() > 64 || s.comment.size() > 1000 || s.created_by.size() > 100) {
    return {StatusCode::kInvalidArgument, "symbol, comment or created_by too long"};
  }
  return Status::ok();
}

Result<SilenceInfo> MemorySilences::create(const SilenceSpec& spec) {
  if (Status st = validate_silence(spec); !st.is_ok()) return st;
  if (!spec.matchers.empty()) {
    return Status(StatusCode::kUnsupported, "label matchers need the silence store ([silences] db); this process "
                                            "keeps silences in memory: use symbol, type and severity");
  }
  std::lock_guard<std::mutex> lock(mu_);
  SilenceInfo s;
  s.id = fmt::format("s{}", next_id_++);
  s.spec = spec;
  s.starts_at_ms = now_wall_ms();
  s.ends_at_ms = s.starts_at_ms + spec.duration_ms;
  s.active = true;
  for (auto [name, value] : {std::pair{"symbol", &spec.symbol}, {"type", &spec.type}, {"severity", &spec.severity}}) {
    if (!value->empty()) s.matchers.push_back(std::string(name) + "=\"" + *value + "\"");
  }
  silences_.push_back(s);
  return s;
}

std::vector<SilenceInfo> MemorySilences::list() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = now_wall_ms();
  for (auto& s : silences_) s.active = s.active && now < s.ends_at_ms;
  std::vector<SilenceInfo> out = silences_;
  std::stable_sort(out.begin(), out.end(), [](const SilenceInfo& a, const SilenceInfo& b) {
    if (a.active != b.active) return a.active;
    return a.starts_at_ms > b.starts_at_ms;
  });
  return out;
}

Status MemorySilences::expire(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : silences_) {
    if (s.id != id) continue;
    if (s.active) {
      s.active = false;
      s.ends_at_ms = std::min(s.ends_at_ms, now_wall_ms());
    }
    return Status::ok();
  }
  return {StatusCode::kNotFound, "no silence with id '" + id + "'"};
}

std::optional<std::string> MemorySilences::match(const Alert& a, const SymbolTable& symbols, int64_t now_ms) {
  const std::string symbol = a.symbol < symbols.size() ? symbols.name(a.symbol) : std::string();
  const std::string type = alert_type_name(a.type), severity = severity_name(a.severity);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : silences_) {
    if (!s.active || now_ms < s.starts_at_ms || now_ms >= s.ends_at_ms) continue;
    if (!s.spec.symbol.empty() && s.spec.symbol != symbol) continue;
    if (!s.spec.type.empty() && s.spec.type != type) continue;
    if (!s.spec.severity.empty() && s.spec.severity != severity) continue;
    ++s.muted;
    return s.id;
  }
  return std::nullopt;
}

}  // namespace ts::http
