#pragma once
// Helpers for the notifier tests: alerts on real symbols, a notifier from TOML text.
#include <string>

#include "core/clock.h"
#include "core/config.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "notify/notifier.h"
#include "notify/notify_config.h"

namespace ts::testing {

// An alert on `symbol` (interned into `symbols`) at 10:00 Shanghai time on 2023-02-01 (a
// Wednesday) plus `offset_s`.
inline Alert notify_alert(SymbolTable& symbols, const std::string& symbol, AlertType type, uint64_t id,
                          Severity sev = Severity::kWarning, int64_t offset_s = 0) {
  Alert a;
  a.id = id;
  a.type = type;
  a.severity = sev;
  a.symbol = symbols.intern(symbol);
  a.exch_ts_ns = midnight_ns(2023, 2, 1, 8) + (10 * 3600 + offset_s) * kNsPerSec;
  a.price = 185012;
  a.add_value("ret_60s_bps", 312.5, 200, Cmp::kGe);
  a.t.emit_ns = mono_ns();
  return a;
}

inline notify::NotifyConfig notify_config(const std::string& toml) {
  return notify::read_notify_config(Config::parse(toml, "test.toml"));
}

}  // namespace ts::testing
