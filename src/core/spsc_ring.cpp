#include "core/spsc_ring.h"

#include <thread>

namespace ts {

void BackoffIdle::idle(size_t work_done) {
  if (work_done > 0) {
    spins_ = 0;
    return;
  }
  ++spins_;
  if (spins_ < 64) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  } else if (spins_ < 128) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace ts
