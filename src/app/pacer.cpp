#include "app/pacer.h"

#include <algorithm>
#include <thread>

#include "core/clock.h"

namespace ts {

int64_t Pacer::wait_until_due(int64_t exch_ts_ns, const std::atomic<bool>& stop) {
  int64_t now = mono_ns();
  if (unpaced()) return now;
  if (!started_) {
    started_ = true;
    start_mono_ns_ = now;
    first_exch_ns_ = exch_ts_ns;
  }
  int64_t due;
  if (rate_ > 0) {
    due = start_mono_ns_ + int64_t(double(released_) * 1e9 / rate_);
  } else {
    due = start_mono_ns_ + int64_t(double(exch_ts_ns - first_exch_ns_) / speed_);
  }
  ++released_;
  // PERF NOTE: sleeping costs ~60 µs of wake-up jitter, so sleep only while more than 200 µs
  // away and spin the rest; spinning on a shared 2-core box is bounded by that window.
  while (due - now > 200'000) {
    if (stop.load(std::memory_order_relaxed)) return now;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(due - now - 150'000, 50'000'000)));
    now = mono_ns();
  }
  while (now < due) now = mono_ns();
  return now;
}

}  // namespace ts
