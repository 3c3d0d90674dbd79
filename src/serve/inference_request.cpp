#include "serve/inference_request.h"

namespace ts::serve {

const char* result_code_name(ResultCode c) {
  switch (c) {
    case ResultCode::kOk: return "ok";
    case ResultCode::kSuperseded: return "superseded";
    case ResultCode::kExpired: return "deadline";
    case ResultCode::kQueueFull: return "queue_full";
    case ResultCode::kFailed: return "failed";
    case ResultCode::kStopped: return "stopped";
  }
  return "unknown";
}

}  // namespace ts::serve
