#pragma once
// The source interface: anything that produces normalized events (file replay, simulator,
// later Kafka). A source fills `exch_ts_ns`, `seq`, `symbol` and the body; the replayer stamps
// `recv_ts_ns` when it hands the event on (after pacing), so latency starts at "received".
// Bad records are reported to the InputErrors given at construction and skipped.
// Threading: a source is driven by one thread.
#include <cstddef>
#include <span>
#include <string>

#include "core/event.h"

namespace ts {

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
};

}  // namespace ts
