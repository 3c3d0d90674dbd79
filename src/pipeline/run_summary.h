#pragma once
// What a run reports at the end: printed for people, written as JSON for scripts
// (`--summary-json FILE`). Keys: events, events_per_s, wall_s, alerts{type: n},
// errors{kind: n}, latency_us{p50,p99,p999,max,count} (receive → alert emitted),
// event_latency_us{...} (receive → rules done, every event), events_by_kind{kind: n}, and with
// phases{disagreements, refinements, no_schedule} (the feed's phase against the schedule,
// book/phase_resolver.h), instruments{unknown_symbol, reference_rows} (the instrument master),
// feed{feed: {counter: n}} (the source's feed health, ingest/source.h FeedCounters: a venue
// decoder's sequence_gap, checksum_mismatch, ...; the websocket's connections, tls_failures),
// and with a model: model{name, version, backend, requests, results, batches, mean_batch, drops{reason},
// failures, fallback_results, backend_switches, swaps, batch_sizes{size: n},
// inference_latency_us{...} (enqueue → result), queue_wait_us{...}, compute_us{...},
// receive_to_score_us{...} (the event's receive → its probability back at the shard: what a model
// alert's receive → alert latency is, less the decision)}.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "core/latency_histogram.h"
#include "core/status.h"

namespace ts {

// Model serving over the run (present when a model was attached).
struct ModelRunSummary {
  std::string name;
  uint32_t version = 0;      // serving at the end
  std::string backend;       // serving at the end ("cpu", "cuda")
  uint64_t requests = 0;     // requests queued by the shards
  uint64_t results_ok = 0;   // answered with a probability
  uint64_t fallback_ok = 0;  // ... of them by the CPU fallback after a failure
  uint64_t batches = 0;
  uint64_t failed_batches = 0;
  uint64_t backend_switches = 0;
  uint64_t swaps = 0;
  std::map<std::string, uint64_t> drops;     // reason → count (no_slot, queue_full, superseded, deadline, failed, ...)
  std::map<uint32_t, uint64_t> batch_sizes;  // size → batches (non-zero only)
  LatencyHistogram queue_wait;               // enqueue → dispatch
  LatencyHistogram compute;                  // batch run (dispatch → outputs)
  LatencyHistogram inference;                // enqueue → result at the shard
  LatencyHistogram receive_to_score;         // event received → its probability at the shard (live sources)
  double mean_batch() const { return batches ? double(results_ok) / double(batches) : 0.0; }
};

struct RunSummary {
  uint64_t events = 0;            // input records accepted by the sources
  uint64_t events_processed = 0;  // events that went through the shards (book accepted or not)
  double wall_s = 0;
  std::map<std::string, uint64_t> events_by_kind;
  std::map<std::string, uint64_t> alerts;  // type → count
  std::map<std::string, uint64_t> errors;  // kind → count (bad input and sink failures)
  LatencyHistogram alert_latency;          // recv → alert emitted
  LatencyHistogram event_latency;          // recv → rules done
  std::map<std::string, uint64_t> phases;       // disagreements, refinements, no_schedule
  std::map<std::string, uint64_t> instruments;  // unknown_symbol, reference_rows
  std::map<std::string, std::map<std::string, uint64_t>> feed;  // feed → counter → n (Source::feed_counters)
  uint64_t source_stalls = 0;              // times the source waited on a full shard ring
  bool interrupted = false;                // stopped by SIGINT/SIGTERM or --duration
  // A file replayed as fast as it can be read: receive→alert then counts the wait behind the
  // file's backlog (queueing), not what a live feed would see; the summary labels it so.
  bool unpaced_replay = false;
  bool has_model = false;
  ModelRunSummary model;

  double events_per_s() const { return wall_s > 0 ? double(events) / wall_s : 0.0; }
  uint64_t alert_total() const;
  std::string to_json() const;
  Status write_json(const std::string& path) const;
  void print(std::FILE* out) const;
};

}  // namespace ts
