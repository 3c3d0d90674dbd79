#pragma once
// What a run reports at the end: printed for people, written as JSON for scripts
// (`--summary-json FILE`). Keys: events, events_per_s, wall_s, alerts{type: n},
// errors{kind: n}, latency_us{p50,p99,p999,max,count} (receive → alert emitted),
// event_latency_us{...} (receive → rules done, every event), events_by_kind{kind: n}.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "core/latency_histogram.h"
#include "core/status.h"

namespace ts {

struct RunSummary {
  uint64_t events = 0;          // input records accepted by the sources
  uint64_t events_processed = 0;  // events that went through the shards (book accepted or not)
  double wall_s = 0;
  std::map<std::string, uint64_t> events_by_kind;
  std::map<std::string, uint64_t> alerts;   // type → count
  std::map<std::string, uint64_t> errors;   // kind → count (bad input and sink failures)
  LatencyHistogram alert_latency;           // recv → alert emitted
  LatencyHistogram event_latency;           // recv → rules done
  uint64_t source_stalls = 0;               // times the source waited on a full shard ring
  bool interrupted = false;                 // stopped by SIGINT/SIGTERM or --duration

  double events_per_s() const { return wall_s > 0 ? double(events) / wall_s : 0.0; }
  uint64_t alert_total() const;
  std::string to_json() const;
  Status write_json(const std::string& path) const;
  void print(std::FILE* out) const;
};

}  // namespace ts
