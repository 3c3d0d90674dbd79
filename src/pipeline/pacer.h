#pragma once
// Replay pacing for the source thread. Modes:
//  - as fast as possible (speed 0, rate 0);
//  - by exchange time: event at exch_ts is released at start + (exch_ts - first_ts) / speed;
//  - fixed rate: event i is released at start + i / rate (benchmarks: "paced 200,000 events/s").
// wait_until_due() sleeps (at least 100 µs at a time, never spins): events due meanwhile are
// released together, as a network source delivers them.
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>

namespace ts {

class Pacer {
 public:
  Pacer(double speed, double rate) : speed_(speed), rate_(rate) {}
  bool unpaced() const { return speed_ <= 0 && rate_ <= 0; }
  // Blocks until the event may be released and returns the monotonic time it was released; or
  // returns nullopt without releasing it when `stop` is set (checked at least every 50 ms while
  // sleeping) or the monotonic clock reaches `deadline_ns` (the run's --duration) first. A paced
  // replay can sleep minutes for the next event (a lunch break): both end that sleep on time.
  std::optional<int64_t> wait_until_due(int64_t exch_ts_ns, const std::atomic<bool>& stop,
                                        int64_t deadline_ns = std::numeric_limits<int64_t>::max());

 private:
  double speed_;
  double rate_;
  bool started_ = false;
  int64_t start_mono_ns_ = 0;
  int64_t first_exch_ns_ = 0;
  uint64_t released_ = 0;
};

}  // namespace ts
