#include "ingest/sim/sim_options.h"

#include <string_view>

#include "ingest/sim/injected_event.h"

namespace ts {

SimOptions SimOptions::from_config(const ConfigSection& s) {
  SimOptions o;
  // Ranges: docs/config.md. Out of range, NaN or a value cut by a narrower type is a ConfigError
  // naming the key; validate() below checks the same bounds for values set in code.
  o.symbols = s.get_in("symbols", o.symbols, 1, 5000);
  o.seed = uint64_t(s.get_in("seed", int64_t(o.seed), int64_t(0), INT64_MAX));
  o.duration_s = s.get_in("duration_s", o.duration_s, 0.0, 366.0 * 86400);
  o.events_per_s = s.get_in("events_per_s", o.events_per_s, 1e-3, 1e8);
  o.start_ns = s.get_in("start_ns", o.start_ns, int64_t(0), int64_t(4102444800) * kNsPerSec);  // 1970..2100
  o.anomalies_per_hour = s.get_in("anomalies_per_hour", o.anomalies_per_hour, 0.0, 3600.0);
  o.anomaly_warmup_s = s.get_in("anomaly_warmup_s", o.anomaly_warmup_s, 0.0, 86400.0);
  o.anomaly_gap_s = s.get_in("anomaly_gap_s", o.anomaly_gap_s, 0.0, 86400.0);
  o.anomaly_types = s.get("anomaly_types", o.anomaly_types);
  o.labels_path = s.get("labels_path", o.labels_path);
  o.vol_bps = s.get_in("vol_bps", o.vol_bps, 0.0, 100.0);
  o.hawkes_branching = s.get_in("hawkes_branching", o.hawkes_branching, 0.0, 0.8);
  o.hawkes_decay_s = s.get_in("hawkes_decay_s", o.hawkes_decay_s, 1e-3, 3600.0);
  o.st_fraction = s.get_in("st_fraction", o.st_fraction, 0.0, 1.0);
  o.auctions = s.get("auctions", o.auctions);
  if (Status st = o.validate(); !st.is_ok()) {
    throw ConfigError("[" + s.name() + "] " + st.message());
  }
  return o;
}

Status SimOptions::validate() const {
  auto bad = [](const std::string& m) { return Status(StatusCode::kInvalidArgument, m); };
  if (symbols < 1 || symbols > 5000) return bad("symbols must be in 1..5000");
  if (!(duration_s >= 0)) return bad("duration_s must be >= 0");
  if (!(events_per_s > 0)) return bad("events_per_s must be > 0");
  if (!(anomalies_per_hour >= 0)) return bad("anomalies_per_hour must be >= 0");
  if (!(anomaly_warmup_s >= 0) || !(anomaly_gap_s >= 0)) return bad("anomaly_warmup_s and anomaly_gap_s must be >= 0");
  if (!(vol_bps >= 0 && vol_bps <= 100)) return bad("vol_bps must be in 0..100");
  if (!(hawkes_branching >= 0 && hawkes_branching <= 0.8)) return bad("hawkes_branching must be in 0..0.8");
  if (!(hawkes_decay_s > 0)) return bad("hawkes_decay_s must be > 0");
  if (!(st_fraction >= 0 && st_fraction <= 1)) return bad("st_fraction must be in 0..1");
  if (anomaly_types != "all" && !anomaly_types.empty()) {
    std::string_view rest = anomaly_types;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!name.empty() && !sim_event_type_from_name(name)) {
        return bad("anomaly_types: unknown type '" + std::string(name) + "'");
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return Status::ok();
}

}  // namespace ts
