#include "core/spsc_ring.h"

#include <thread>

#include "core/clock.h"

namespace ts {

void BackoffIdle::idle(size_t work_done) {
  if (work_done > 0) {
    idle_since_ns_ = 0;
    return;
  }
  const int64_t now = mono_ns();
  if (idle_since_ns_ == 0) idle_since_ns_ = now;
  const int64_t idle_ns = now - idle_since_ns_;
  if (idle_ns < spin_ns_) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  } else if (idle_ns < yield_ns_) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace ts
