#include "ingest/sim/sim_options.h"

#include <string_view>

#include "ingest/sim/injected_event.h"

namespace ts {

SimOptions SimOptions::from_config(const ConfigSection& s) {
  SimOptions o;
  o.symbols = s.get("symbols", o.symbols);
  o.seed = uint64_t(s.get("seed", int64_t(o.seed)));
  o.duration_s = s.get("duration_s", o.duration_s);
  o.events_per_s = s.get("events_per_s", o.events_per_s);
  o.start_ns = s.get("start_ns", o.start_ns);
  o.anomalies_per_hour = s.get("anomalies_per_hour", o.anomalies_per_hour);
  o.anomaly_warmup_s = s.get("anomaly_warmup_s", o.anomaly_warmup_s);
  o.anomaly_gap_s = s.get("anomaly_gap_s", o.anomaly_gap_s);
  o.anomaly_types = s.get("anomaly_types", o.anomaly_types);
  o.labels_path = s.get("labels_path", o.labels_path);
  o.vol_bps = s.get("vol_bps", o.vol_bps);
  o.hawkes_branching = s.get("hawkes_branching", o.hawkes_branching);
  o.hawkes_decay_s = s.get("hawkes_decay_s", o.hawkes_decay_s);
  o.st_fraction = s.get("st_fraction", o.st_fraction);
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
