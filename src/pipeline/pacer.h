#pragma once
// Replay pacing for the source thread. Modes:
//  - as fast as possible (speed 0, rate 0);
//  - by exchange time: event at exch_ts is released at start + (exch_ts - first_ts) / speed;
//  - fixed rate: event i is released at start + i / rate (benchmarks: "paced 200,000 events/s").
// wait_until_due() sleeps (at least 100 µs at a time, never spins): events due meanwhile are
// released together, as a network source delivers them.
#include <atomic>
#include <cstdint>

namespace ts {

class Pacer {
 public:
  Pacer(double speed, double rate) : speed_(speed), rate_(rate) {}
  bool unpaced() const { return speed_ <= 0 && rate_ <= 0; }
  // Blocks until the event may be released, or until `stop` is set (checked at least every
  // 50 ms while sleeping); returns the monotonic time it was released.
  int64_t wait_until_due(int64_t exch_ts_ns, const std::atomic<bool>& stop);

 private:
  double speed_;
  double rate_;
  bool started_ = false;
  int64_t start_mono_ns_ = 0;
  int64_t first_exch_ns_ = 0;
  uint64_t released_ = 0;
};

}  // namespace ts
