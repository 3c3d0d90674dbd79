#pragma once
// Labels: the names routing, grouping, inhibition and silences match on.
//
// alert_labels() is THE place where an Alert becomes labels; every other part of src/notify
// sees only labels. Labels derived today:
//   symbol    "600519.SH" (or "#<id>" for an unknown id)
//   market    "SH", "SZ", "BJ", "US", "unknown"
//   type      alert_type_name(): "rapid_rise", "limit_up_sealed", ...
//   severity  "info", "warning", "critical"
//   source    "rule", or "model" for model alerts
//   model, model_version   the model's name and registry version; absent for rule alerts
//             (a matcher sees an absent label as "")
// Add model name/version here when alerts carry them; nothing else has to change.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/symbol_table.h"
#include "detect/alert.h"

namespace ts::notify {

// A small ordered label set (names unique, kept sorted by name so that equal sets compare and
// hash equal). Off the hot path: allocates.
class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string, std::string>> kv);
  void set(std::string name, std::string value);
  // The value, or "" when absent (Alertmanager's rule: a missing label equals the empty string).
  const std::string& get(std::string_view name) const;
  bool has(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return kv_; }
  // "market=SH,symbol=600519.SH" (sorted by name); the same string for equal label sets.
  std::string to_string() const;
  bool operator==(const Labels& o) const { return kv_ == o.kv_; }

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

const char* market_label(Market m);

Labels alert_labels(const Alert& a, const SymbolTable& symbols);

// Model alerts: source="model", model=<name>, model_version=<n> when the alert carries a model
// score with a version. A template only so that it compiles while src/detect/alert.h gains
// `ModelScore model` (in flight when this was written): once every checkout has it, this can
// become a plain function of Alert.
template <typename A>
void add_model_labels(const A& a, Labels& l) {
  if constexpr (requires { a.model.model; a.model.version; }) {
    if (a.model.version != 0) {
      l.set("source", "model");
      l.set("model", std::string(a.model.model));
      l.set("model_version", std::to_string(a.model.version));
    }
  }
}

// Alert types that end: an alert of type `t` ends ("resolves") the earlier alert of the
// returned type on the same symbol (limit_up_opened ends limit_up_sealed). Nothing for event
// alerts (a rapid rise has no end; it is notified once and then forgotten).
std::optional<AlertType> ends_type(AlertType t);
// True for types some other type ends (limit_up_sealed, limit_down_sealed).
bool has_end(AlertType t);
std::optional<AlertType> alert_type_from_name(std::string_view name);

}  // namespace ts::notify
