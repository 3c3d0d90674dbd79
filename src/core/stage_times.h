#pragma once
// StageTimes: the monotonic time (core/clock.h mono_ns) at which each stage of the hot path
// finished with one event. Carried by alerts (detect/alert.h) and by inference requests
// (serve/inference_request.h), so it lives below both. Trivially copyable; 0 = not stamped.
#include <cstdint>

namespace ts {

struct StageTimes {
  int64_t recv_ns = 0;      // source handed the event on
  int64_t book_ns = 0;      // book updated
  int64_t features_ns = 0;  // features updated
  int64_t detect_ns = 0;    // rule fired
  int64_t emit_ns = 0;      // alert pushed towards the sinks
};

}  // namespace ts
