// The CPU backend's oneDNN runs on OpenMP (Debian's libdnnl is built with it): its thread count
// for work a thread starts is that thread's OpenMP nthreads setting. Kept in its own target so
// that only this file is compiled with OpenMP.
#include <omp.h>

#include "engine/engine.h"

namespace ts::engine {

void set_cpu_threads_for_this_thread(int n) {
  if (n > 0) omp_set_num_threads(n);
}

}  // namespace ts::engine
