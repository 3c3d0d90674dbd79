#include "core/clock.h"

#include <fstream>
#include <string>

namespace ts {

namespace {
bool cpu_has_invariant_tsc() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
}
}  // namespace

TscClock TscClock::calibrate() {
  TscClock c;
#if defined(__x86_64__)
  if (!cpu_has_invariant_tsc()) return c;
  // Two (tsc, ns) pairs ~10 ms apart; each pair taken where the clock read was quickest.
  auto sample = [](uint64_t& tsc, int64_t& ns) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; ++i) {
      const uint64_t t0 = __builtin_ia32_rdtsc();
      const int64_t n = clock_mono_ns();
      const uint64_t t1 = __builtin_ia32_rdtsc();
      if (t1 - t0 < best) {
        best = t1 - t0;
        tsc = t0 + (t1 - t0) / 2;
        ns = n;
      }
    }
  };
  uint64_t tsc0 = 0, tsc1 = 0;
  int64_t ns0 = 0, ns1 = 0;
  sample(tsc0, ns0);
  const timespec pause{0, 10'000'000};
  nanosleep(&pause, nullptr);
  sample(tsc1, ns1);
  if (tsc1 <= tsc0 || ns1 <= ns0) return c;
  c.ns_per_tick = double(ns1 - ns0) / double(tsc1 - tsc0);
  c.base_tsc = tsc1;
  c.base_ns = ns1;
  c.usable = c.ns_per_tick > 0.01 && c.ns_per_tick < 10.0;
#endif
  return c;
}

}  // namespace ts
