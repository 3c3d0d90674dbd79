#include "notify/labels.h"

#include <algorithm>

#include "audit/alert_format.h"

namespace ts::notify {

Labels::Labels(std::initializer_list<std::pair<std::string, std::string>> kv) {
  for (auto& [k, v] : kv) set(k, v);
}

void Labels::set(std::string name, std::string value) {
  auto it = std::lower_bound(kv_.begin(), kv_.end(), name, [](const auto& p, const std::string& n) { return p.first < n; });
  if (it != kv_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    kv_.insert(it, {std::move(name), std::move(value)});
  }
}

const std::string& Labels::get(std::string_view name) const {
  static const std::string kEmpty;
  for (const auto& [k, v] : kv_) {
    if (k == name) return v;
  }
  return kEmpty;
}

bool Labels::has(std::string_view name) const {
  return std::any_of(kv_.begin(), kv_.end(), [&](const auto& p) { return p.first == name; });
}

std::string Labels::to_string() const {
  std::string s;
  for (const auto& [k, v] : kv_) {
    if (!s.empty()) s += ',';
    s += k;
    s += '=';
    s += v;
  }
  return s;
}

const char* market_label(Market m) {
  switch (m) {
    case Market::kShanghai: return "SH";
    case Market::kShenzhen: return "SZ";
    case Market::kBeijing: return "BJ";
    case Market::kUs: return "US";
    case Market::kUnknown: break;
  }
  return "unknown";
}

Labels alert_labels(const Alert& a, const SymbolTable& symbols) {
  Labels l;
  l.set("symbol", symbol_label(symbols, a.symbol));
  const bool known = a.symbol != kInvalidSymbol && a.symbol < symbols.size();
  l.set("market", market_label(known ? symbols.ref(a.symbol).market : Market::kUnknown));
  l.set("type", alert_type_name(a.type));
  l.set("severity", severity_name(a.severity));
  l.set("source", "rule");
  add_model_labels(a, l);
  return l;
}

std::optional<AlertType> ends_type(AlertType t) {
  switch (t) {
    case AlertType::kLimitUpOpened: return AlertType::kLimitUpSealed;
    case AlertType::kLimitDownOpened: return AlertType::kLimitDownSealed;
    default: return std::nullopt;
  }
}

bool has_end(AlertType t) { return t == AlertType::kLimitUpSealed || t == AlertType::kLimitDownSealed; }

std::optional<AlertType> alert_type_from_name(std::string_view name) {
  for (int i = 0; i < kAlertTypeCount; ++i) {
    if (name == alert_type_name(AlertType(i))) return AlertType(i);
  }
  return std::nullopt;
}

}  // namespace ts::notify
