#pragma once
// The source interface: anything that produces normalized events (file replay, simulator,
// later Kafka). A source fills `exch_ts_ns`, `seq`, `symbol` and the body; the replayer stamps
// `recv_ts_ns` when it hands the event on (after pacing), so latency starts at "received".
// Bad records are reported to the InputErrors given at construction and skipped.
// Threading: a source is driven by one thread.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "core/event.h"

namespace ts {

// Feed health a source counts beyond its events and bad records: by feed ("binance", "kraken",
// "ws", "szse-trades"), then counter ("sequence_gap", "checksum_mismatch", "cancels", ...).
// In the run summary ("feed") and on /metrics (ticksentry_feed_<counter>_total{feed}).
using FeedCounters = std::map<std::string, std::map<std::string, uint64_t>>;

class Source {
 public:
  virtual ~Source() = default;
  // Writes up to out.size() events into `out` and returns how many. Returns 0 when the input is
  // exhausted (then done() is true) or, for live sources, when nothing is available right now.
  virtual size_t next_batch(std::span<Event> out) = 0;
  // True once the input is exhausted; a live source is never done.
  virtual bool done() const = 0;
  // One line for logs: "lobster GOOG_..._message_10.csv.gz".
  virtual std::string describe() const = 0;
  // Adds this source's feed counters to `out` (adding to a counter already there). Called on the
  // thread that calls next_batch(), between calls; cumulative since the source opened. Default:
  // none.
  virtual void feed_counters(FeedCounters& out) const { (void)out; }
};

}  // namespace ts
